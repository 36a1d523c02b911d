// The decisions of `npm test` (tools/scripts/test-all.mjs) on a fresh clone, as root and not. The
// script is plain JavaScript (it runs before node_modules exists), loaded here by URL.
interface Step {
  readonly say?: string;
  readonly command: string;
  readonly args: readonly string[];
}
interface Plan {
  readonly steps: readonly Step[];
  readonly banner: string | null;
}
interface PlanModule {
  readonly DEBIAN_PACKAGES: readonly string[];
  testPlan(host: { hasNodeModules: boolean; isRoot: boolean; missingTools: readonly string[]; nx: string }): Plan;
}

const planUrl = new URL('../../scripts/test-plan.mjs', import.meta.url).href;
const { DEBIAN_PACKAGES, testPlan } = (await import(planUrl)) as PlanModule;
const nx = '/repo/node_modules/.bin/nx';
const commands = (plan: Plan) => plan.steps.map((s) => [s.command, ...s.args].join(' '));

describe('npm test on any checkout', () => {
  it('a fresh clone as root: npm ci, the Debian kernel tools, then every test', () => {
    const plan = testPlan({ hasNodeModules: false, isRoot: true, missingTools: ['nft', 'ipset'], nx });
    expect(commands(plan)).toEqual([
      'npm ci --no-audit --no-fund',
      'apt-get update -qq',
      `apt-get install -y -qq --no-install-recommends ${DEBIAN_PACKAGES.join(' ')}`,
      `${nx} sync:check`,
      `${nx} run-many -t lint typecheck test --outputStyle=static`,
      `${nx} run proxy-e2e:e2e --outputStyle=static`,
    ]);
    expect(plan.steps[0].say).toMatch(/installing the npm dependencies/);
    expect(plan.steps[1].say).toMatch(/missing: nft, ipset/);
    expect(plan.banner).toBeNull();
  });

  it('as root with every tool present: no apt-get', () => {
    const plan = testPlan({ hasNodeModules: true, isRoot: true, missingTools: [], nx });
    expect(commands(plan).some((c) => c.startsWith('apt-get') || c.startsWith('npm'))).toBe(false);
  });

  it('not root: never apt-get; everything else runs and a banner says what was skipped and how to run it', () => {
    const plan = testPlan({ hasNodeModules: false, isRoot: false, missingTools: [], nx });
    expect(commands(plan)[0]).toBe('npm ci --no-audit --no-fund');
    expect(commands(plan).some((c) => c.startsWith('apt-get'))).toBe(false);
    expect(commands(plan)).toContain(`${nx} run proxy-e2e:e2e --outputStyle=static`);
    expect(plan.banner).toMatch(/SKIPPED/);
    expect(plan.banner).toMatch(/sudo npm test/);
  });

  it('installs a package for every tool the real-kernel suites need', () => {
    for (const pkg of ['iptables', 'nftables', 'ipset', 'conntrack', 'iproute2', 'ipvsadm', 'qemu-system-x86']) expect(DEBIAN_PACKAGES).toContain(pkg);
  });
});
