import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The README's "Debugging a Service" pastes what `bin/kube-proxy trace` / `explain` print on examples/:
// each pasted `$ bin/kube-proxy …` block is run again and must print exactly what the README shows.
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const README = readFileSync(`${ROOT}README.md`, 'utf8');

function pastedRuns(): { command: string; output: string }[] {
  const start = README.indexOf('## Debugging a Service');
  const section = README.slice(start, README.indexOf('\n## ', start + 1));
  const runs: { command: string; output: string }[] = [];
  for (const m of section.matchAll(/```console\n\$ (bin\/kube-proxy [^\n]+)\n([\s\S]*?)```/g)) runs.push({ command: m[1]!, output: m[2]! });
  return runs;
}

function run(command: string): Promise<string> {
  // The pasted commands have no quoted arguments: split on spaces, run without a shell.
  const [bin, ...args] = command.split(' ');
  return new Promise((resolve, reject) => {
    execFile(`${ROOT}${bin!}`, args, { cwd: ROOT, timeout: 60_000, maxBuffer: 16 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

describe('README "Debugging a Service" shows real output', () => {
  const runs = pastedRuns();

  it('pastes trace (text and JSON) and explain runs', () => {
    expect(runs.map((r) => r.command.split(' ')[1])).toEqual(['trace', 'trace', 'explain']);
    expect(runs[1]!.command).toContain('-o json');
  });

  it.each(runs.map((r) => [r.command, r.output]))('%s', async (command, output) => {
    expect(await run(command)).toBe(output);
  }, 90_000);
});
