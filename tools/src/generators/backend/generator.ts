import { fileURLToPath } from 'node:url';
import { generateFiles, logger, names, readJson, updateJson, type GeneratorCallback, type Tree } from '@nx/devkit';
import { backendNameProblem } from './backend-name.js';
import type { BackendGeneratorSchema } from './schema.js';

/*
 * The templates stay in src: tsc copies no non-TS files. src/generators/backend and (when Nx runs the
 * built generator) dist/generators/backend are both three levels below the tools package.
 */
const TEMPLATES = fileURLToPath(new URL('../../../src/generators/backend/files', import.meta.url));
const CORE_PACKAGE = 'libs/core/package.json';

interface CorePackage {
  readonly version: string;
  readonly dependencies?: Readonly<Record<string, string>>;
}

/** `nx g @kube-proxy/tools:backend NAME`: a backend library that lints, builds, tests and syncs. */
export async function backendGenerator(tree: Tree, options: BackendGeneratorSchema): Promise<GeneratorCallback> {
  const problem = backendNameProblem(options.name);
  if (problem !== undefined) throw new Error(`Cannot generate a backend: ${problem}.`);
  const name = options.name;
  const projectRoot = `libs/backend-${name}`;
  if (tree.exists(projectRoot)) throw new Error(`Cannot generate a backend: ${projectRoot} already exists.`);
  if (!tree.exists(CORE_PACKAGE)) throw new Error(`Cannot generate a backend: ${CORE_PACKAGE} not found (run this in the kube-proxy-ts workspace).`);
  const core = readJson<CorePackage>(tree, CORE_PACKAGE);
  const n = names(name);
  generateFiles(tree, TEMPLATES, projectRoot, {
    tmpl: '',
    name,
    className: n.className,
    propertyName: n.propertyName,
    // The plugin contract is core's: any core of this minor line speaks it (see BACKEND_PLUGIN_API_VERSION).
    corePeerRange: `^${core.version}`,
    tslibRange: core.dependencies?.['tslib'] ?? '^2.9.1',
  });
  if (tree.exists('tsconfig.json')) {
    updateJson(tree, 'tsconfig.json', (json: { references?: Array<{ path: string }> }) => {
      const path = `./${projectRoot}`;
      const references = json.references ?? [];
      if (!references.some((r) => r.path === path)) references.push({ path });
      return { ...json, references };
    });
  }
  addToRelease(tree, `backend-${name}`);
  return () => {
    logger.info(
      [
        `Created ${projectRoot} (proxy mode "${name}"). Next:`,
        `  npm install                                   # links @kube-proxy/backend-${name} into node_modules`,
        `  npx nx run-many -p backend-${name} -t lint build test`,
        `  bin/kube-proxy --backend-plugin=@kube-proxy/backend-${name} --proxy-mode=${name} --manifests=examples --hostname-override=node-1 --dry-run --once`,
      ].join('\n'),
    );
  };
}

/** An explicit `release.projects` list in nx.json would leave the new library out of `nx release`. */
function addToRelease(tree: Tree, project: string): void {
  if (!tree.exists('nx.json')) return;
  updateJson(tree, 'nx.json', (json: { release?: { projects?: unknown } }) => {
    const projects = json.release?.projects;
    if (Array.isArray(projects) && !projects.includes(project)) projects.push(project);
    return json;
  });
}

export default backendGenerator;
