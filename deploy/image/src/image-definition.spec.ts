import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildScriptPackages, dockerfileAptPackages, dockerfileEntrypoint } from './image-definition.js';

const repo = (rel: string): string => fileURLToPath(new URL(`../../../${rel}`, import.meta.url));
const read = (rel: string): string => readFileSync(repo(rel), 'utf8');

describe('the image definitions in deploy/image', () => {
  const dockerfile = read('deploy/image/Dockerfile');
  const script = read('deploy/image/build-oci.sh');

  it('installs the same Debian packages in the Dockerfile and in build-oci.sh', () => {
    const fromDocker = dockerfileAptPackages(dockerfile).sort();
    expect(fromDocker.length).toBeGreaterThan(0);
    expect(buildScriptPackages(script).sort()).toEqual(fromDocker);
  });

  it('carries every tool a built-in backend runs', () => {
    expect(dockerfileAptPackages(dockerfile)).toEqual(expect.arrayContaining(['iptables', 'ipset', 'ipvsadm', 'conntrack', 'nftables', 'iproute2']));
  });

  it('execs the entrypoint without a shell, at the path build-oci.sh writes into the image config', () => {
    expect(dockerfileEntrypoint(dockerfile)).toEqual(['/usr/local/bin/kube-proxy']);
    expect(read('deploy/image/write-oci-layout.sh')).toContain('"Entrypoint":["/usr/local/bin/kube-proxy"]');
  });

  it("runs node with bin/kube-proxy's memory settings", () => {
    const firstLine = (text: string): string => text.split('\n', 1)[0]!;
    expect(firstLine(read('deploy/image/entrypoint.cjs'))).toBe(firstLine(read('bin/kube-proxy')));
  });
});

describe('dockerfileAptPackages', () => {
  it("reads the last stage's install across continuation lines, without options", () => {
    const text = [
      'FROM debian AS build',
      'RUN apt-get install -y gcc make',
      'FROM debian:slim',
      'RUN apt-get update \\',
      ' && apt-get install -y --no-install-recommends \\',
      '      iptables ipset \\',
      ' && rm -rf /var/lib/apt/lists/*',
    ].join('\n');
    expect(dockerfileAptPackages(text)).toEqual(['iptables', 'ipset']);
  });

  it('refuses a last stage with no install or with two, rather than comparing half the packages', () => {
    expect(() => dockerfileAptPackages('FROM a\nRUN true\n')).toThrow(/0 apt-get install/);
    expect(() => dockerfileAptPackages('FROM a\nRUN apt-get install x\nRUN apt-get install y\n')).toThrow(/2 apt-get install/);
  });
});

describe('buildScriptPackages', () => {
  it('reads the PACKAGES array', () => {
    expect(buildScriptPackages('set -e\nPACKAGES=(a b\n  c)\nx=1\n')).toEqual(['a', 'b', 'c']);
  });

  it('throws when the script has no PACKAGES array', () => {
    expect(() => buildScriptPackages('echo hi\n')).toThrow(/no PACKAGES/);
  });
});

describe('dockerfileEntrypoint', () => {
  it('is undefined for the shell form, which would need /bin/sh at run time', () => {
    expect(dockerfileEntrypoint('FROM a\nENTRYPOINT kube-proxy --v=2\n')).toBeUndefined();
  });
});
