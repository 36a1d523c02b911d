// What `npm test` (test-all.mjs) does on this machine, decided from what is there: kept apart from
// the running so the decisions are unit-tested (test-plan.spec.ts, beside it).

/** The binaries the real-kernel suites run. */
export const KERNEL_TOOLS = ['iptables', 'iptables-legacy', 'ip6tables', 'ipset', 'conntrack', 'nft', 'ip', 'socat', 'nfacct', 'qemu-system-x86_64', 'depmod', 'cpio', 'busybox', 'ipvsadm', 'python3', 'curl'];
/** The Debian packages that hold them. */
export const DEBIAN_PACKAGES = ['iptables', 'ipset', 'conntrack', 'nftables', 'iproute2', 'socat', 'nfacct', 'procps', 'qemu-system-x86', 'kmod', 'cpio', 'busybox-static', 'ipvsadm', 'python3', 'curl'];

/**
 * The steps, in order, each `{ say?, command, args, env? }` (`say` is printed on stderr first), and the
 * banner to print at the end (null when nothing was skipped).
 * @param {{ hasNodeModules: boolean, isRoot: boolean, missingTools: readonly string[], nx: string }} host
 */
export function testPlan(host) {
  const steps = [];
  if (!host.hasNodeModules) steps.push({ say: 'no node_modules yet: installing the npm dependencies (npm ci) …', command: 'npm', args: ['ci', '--no-audit', '--no-fund'] });
  if (host.isRoot && host.missingTools.length > 0) {
    const env = { DEBIAN_FRONTEND: 'noninteractive' };
    steps.push({ say: `as root, installing the kernel tools the real-kernel tests need (missing: ${host.missingTools.join(', ')}) with apt-get …`, command: 'apt-get', args: ['update', '-qq'], env });
    steps.push({ command: 'apt-get', args: ['install', '-y', '-qq', '--no-install-recommends', ...DEBIAN_PACKAGES], env });
  }
  steps.push({ command: host.nx, args: ['sync:check'] });
  steps.push({ command: host.nx, args: ['run-many', '-t', 'lint', 'typecheck', 'test', '--outputStyle=static'] });
  steps.push({ command: host.nx, args: ['run', 'proxy-e2e:e2e', '--outputStyle=static'] });
  const bar = '!'.repeat(100);
  const banner = host.isRoot
    ? null
    : `\n${bar}\n!!! Not root: the real-kernel suites (network namespaces, iptables, nftables, IPVS under QEMU, real traffic)\n` +
      `!!! were SKIPPED; everything else ran. To run them too (it installs the Debian kernel tools if missing):\n` +
      `!!!     sudo npm test\n${bar}\n`;
  return { steps, banner };
}
