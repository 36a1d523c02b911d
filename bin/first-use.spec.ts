// bin/kube-proxy on a fresh clone (bin/first-use.cjs): npm ci when there are no dependencies, a build
// when there is none, each said on stderr; nothing at all once both exist.
import { createRequire } from 'node:module';

interface FirstUse {
  prepare(root: string, io: { exists: (p: string) => boolean; run: (command: string, args: readonly string[]) => number; say: (text: string) => void }): number;
}
const { prepare } = createRequire(import.meta.url)('./first-use.cjs') as FirstUse;

function host(present: string[], failing: string[] = []) {
  const files = new Set(present);
  const runs: string[] = [];
  const said: string[] = [];
  const io = {
    exists: (p: string) => files.has(p),
    run: (command: string, args: readonly string[]) => {
      const line = [command, ...args].join(' ');
      runs.push(line);
      if (failing.some((f) => line.startsWith(f))) return 1;
      // What the real commands leave behind.
      if (command === 'npm') files.add('/r/node_modules/.bin/nx');
      if (args[0] === 'build') files.add('/r/apps/proxy/dist/main.js');
      return 0;
    },
    say: (text: string) => void said.push(text),
  };
  return { io, runs, said };
}

describe('bin/kube-proxy first use', () => {
  it('a fresh clone: installs the dependencies, then builds, telling the user each time', () => {
    const h = host([]);
    expect(prepare('/r', h.io)).toBe(0);
    expect(h.runs).toEqual(['npm ci --no-audit --no-fund', '/r/node_modules/.bin/nx build proxy --outputStyle=static']);
    expect(h.said[0]).toMatch(/installing the npm dependencies \(npm ci/);
    expect(h.said[1]).toMatch(/building it now/);
  });

  it('dependencies present, no build: only builds', () => {
    const h = host(['/r/node_modules/.bin/nx']);
    expect(prepare('/r', h.io)).toBe(0);
    expect(h.runs).toEqual(['/r/node_modules/.bin/nx build proxy --outputStyle=static']);
  });

  it('a build present: runs nothing, says nothing', () => {
    const h = host(['/r/apps/proxy/dist/main.js']);
    expect(prepare('/r', h.io)).toBe(0);
    expect(h.runs).toEqual([]);
    expect(h.said).toEqual([]);
  });

  it('a failed npm ci or build ends with status 1 and says what to run', () => {
    const ci = host([], ['npm']);
    expect(prepare('/r', ci.io)).toBe(1);
    expect(ci.said.at(-1)).toMatch(/npm ci failed/);
    const build = host(['/r/node_modules/.bin/nx'], ['/r/node_modules/.bin/nx build']);
    expect(prepare('/r', build.io)).toBe(1);
    expect(build.said.at(-1)).toMatch(/npx nx build proxy/);
  });
});
