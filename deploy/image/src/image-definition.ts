/**
 * The facts the Dockerfile and build-oci.sh must agree on, read from their text: the Debian packages
 * each installs. Two definitions of one image drift apart silently (a package added to one only
 * shows up as a missing tool on somebody's node); a spec comparing them makes the drift a test failure.
 */

/** Joins backslash-continued lines, as the Dockerfile parser and bash do. */
function joinContinuations(text: string): string {
  return text.replace(/\\\r?\n/g, ' ');
}

/** The packages of the `apt-get install` in the Dockerfile's last stage (the runtime image). */
export function dockerfileAptPackages(dockerfile: string): string[] {
  const lines = joinContinuations(dockerfile).split('\n');
  const lastFrom = lines.map((l) => /^\s*FROM\s/i.test(l)).lastIndexOf(true);
  if (lastFrom < 0) throw new Error('Dockerfile: no FROM');
  const installs = lines
    .slice(lastFrom)
    .filter((l) => /^\s*RUN\s/i.test(l))
    .flatMap((l) => [...l.matchAll(/apt-get\s+install\s+([^&;|]*)/g)].map((m) => m[1]!));
  if (installs.length !== 1) throw new Error(`Dockerfile: ${installs.length} apt-get install commands in the last stage, expected 1`);
  return installs[0]!
    .trim()
    .split(/\s+/)
    .filter((w) => !w.startsWith('-'));
}

/** The `PACKAGES=(...)` array of deploy/image/build-oci.sh. */
export function buildScriptPackages(script: string): string[] {
  const m = /^PACKAGES=\(([^)]*)\)/m.exec(joinContinuations(script));
  if (!m) throw new Error('build-oci.sh: no PACKAGES=(...) array');
  return m[1]!.trim().split(/\s+/).filter((w) => w !== '');
}

/** The exec-form ENTRYPOINT of the Dockerfile's last stage; undefined for shell form or none. */
export function dockerfileEntrypoint(dockerfile: string): string[] | undefined {
  const lines = joinContinuations(dockerfile).split('\n');
  const last = lines.filter((l) => /^\s*ENTRYPOINT\s/i.test(l)).pop();
  const json = last?.replace(/^\s*ENTRYPOINT\s+/i, '').trim();
  if (!json?.startsWith('[')) return undefined;
  return JSON.parse(json) as string[];
}
