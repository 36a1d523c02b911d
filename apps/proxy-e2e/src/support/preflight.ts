import { netnsAvailable, type NetnsAvailability } from '@kube-proxy/testing-netns';

let cached: Promise<NetnsAvailability> | undefined;

/**
 * Whether the real-kernel e2e suites can run here. They are skipped (loudly) ONLY when not root or
 * `ip netns` does not work; anything else (a missing iptables, conntrack, ...) makes them fail.
 */
export async function e2ePreflight(suite: string): Promise<{ run: boolean; missingTools: readonly string[] }> {
  cached ??= netnsAvailable();
  const a = await cached;
  if (!a.ok) {
    const bar = '!'.repeat(100);
    console.warn(
      `\n${bar}\n!!! SKIPPING real-kernel e2e suite "${suite}": ${a.reason}.\n` +
        `!!! These tests need root and a working \`ip netns\` (CI runs them as root).\n${bar}\n`,
    );
  }
  return { run: a.ok, missingTools: a.missingTools };
}

export const INSTALL_HINT = 'apt-get install -y iptables ipset conntrack nftables iproute2 socat nfacct';
