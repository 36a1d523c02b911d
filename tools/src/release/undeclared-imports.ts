/**
 * Bare imports in built JS that the package's own manifest does not declare. In the workspace (and in a
 * consumer's hoisted node_modules) such an import still resolves through a sibling's dependency, so only a
 * check against the manifest catches it before a stricter installer (pnpm, a lone install) breaks.
 */
import { builtinModules } from 'node:module';

const BUILTINS = new Set(builtinModules);
// tsc emits one statement per line: `import … from 'x'`, `export … from 'x'`, `import 'x'`; plus a literal
// `import('x')`. Anchoring to a statement start keeps "from '…'" inside comments and strings out.
const SPECIFIER = /^\s*(?:(?:import|export)\b[^'"`;]*?\bfrom\s*|import\s*)(['"])([^'"]+)\1|\bimport\(\s*(['"])([^'"]+)\3\s*\)/gm;
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/.*)?$/i;

export function bareSpecifiers(js: string): string[] {
  const out = new Set<string>();
  for (const m of js.matchAll(SPECIFIER)) {
    const spec = m[2] ?? m[4] ?? '';
    if (spec.startsWith('node:') || !PACKAGE_NAME.test(spec)) continue;
    out.add(packageOf(spec));
  }
  return [...out];
}

export interface DeclaringManifest {
  readonly name: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
}

export function undeclaredImports(specifiers: Iterable<string>, manifest: DeclaringManifest): string[] {
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
    ...Object.keys(manifest.optionalDependencies ?? {}),
  ]);
  return [...new Set(specifiers)].filter((s) => !declared.has(s) && !BUILTINS.has(s)).sort();
}

/** `@scope/pkg/sub` → `@scope/pkg`, `pkg/sub` → `pkg`. */
function packageOf(spec: string): string {
  const parts = spec.split('/');
  return parts.slice(0, spec.startsWith('@') ? 2 : 1).join('/');
}
