/**
 * What a published library's tarball must and must not hold. Pure over npm's file list so the rules are
 * unit-tested without packing; the pack spec applies them to every library nx release publishes.
 */

export interface PackedManifest {
  readonly name: string;
  readonly main?: string;
  readonly types?: string;
  readonly exports?: unknown;
}

/** Export conditions that only this workspace sets; consumers never select them. */
const WORKSPACE_ONLY_CONDITIONS = new Set(['@kube-proxy/source']);

export function tarballProblems(files: readonly string[], manifest: PackedManifest): string[] {
  const have = new Set(files.map(stripDotSlash));
  const problems: string[] = [];
  if (!have.has('README.md')) problems.push('README.md is missing');
  if (!files.some((f) => /^dist\/.*\.js$/.test(f))) problems.push('no dist/**/*.js');
  if (!files.some((f) => /^dist\/.*\.d\.ts$/.test(f))) problems.push('no dist/**/*.d.ts');
  for (const f of files) {
    if (/\.spec\.[cm]?[jt]s$/.test(f) || /\.spec\.d\.ts$/.test(f)) problems.push(`test file packed: ${f}`);
    if (/(^|\/)tsconfig[^/]*\.json$/.test(f)) problems.push(`tsconfig packed: ${f}`);
    if (f.endsWith('.tsbuildinfo')) problems.push(`build info packed: ${f}`);
    if (/(^|\/)(jest\.config|eslint\.config)\.[cm]?js$/.test(f)) problems.push(`tool config packed: ${f}`);
  }
  const targets = [manifest.main, manifest.types, ...exportTargets(manifest.exports)].filter((t): t is string => typeof t === 'string');
  for (const target of targets) {
    if (!have.has(stripDotSlash(target))) problems.push(`${manifest.name} points at ${target}, which is not in the tarball`);
  }
  return problems;
}

/** Every file an exports map can hand a consumer, skipping workspace-only conditions. */
export function exportTargets(exportsField: unknown): string[] {
  if (typeof exportsField === 'string') return [exportsField];
  if (exportsField === null || typeof exportsField !== 'object') return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(exportsField as Record<string, unknown>)) {
    if (WORKSPACE_ONLY_CONDITIONS.has(key)) continue;
    out.push(...exportTargets(value));
  }
  return out;
}

function stripDotSlash(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p;
}
