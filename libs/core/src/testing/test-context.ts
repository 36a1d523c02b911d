import type { HostCapabilities } from '../host/capabilities/types.js';
import { defaultConfiguration } from '../config/defaults.js';
import type { KubeProxyConfiguration } from '../config/types.js';
import type { ProxyContext, TextSink } from '../contracts/proxy-context.js';

/* For backend tests: a host and a run context without touching the machine. */

/** A Linux host with iptables-nft and conntrack, no IPVS/nftables/ipset. */
export const TEST_HOST: HostCapabilities = {
  kernelRelease: '6.1.0-test',
  ipvs: { available: false, reason: 'test' },
  nftables: { available: false, reason: 'test' },
  tools: {
    iptables: { present: true, version: '1.8.9' },
    ip6tables: { present: true, version: '1.8.9' },
    ipset: { present: false },
    ipvsadm: { present: false },
    nft: { present: false },
    conntrack: { present: true, version: '1.4.7' },
  },
  iptablesVariant: 'nft',
  iptablesVariantReason: 'test host',
  iptablesRandomFully: true,
};

/** A TextSink that keeps what was written (--dry-run output in tests). */
export class StringSink implements TextSink {
  text = '';
  write(text: string): void {
    this.text += text;
  }
}

export type TestContextOverrides = Partial<Omit<ProxyContext, 'config'>> & { config?: Partial<KubeProxyConfiguration> };

/**
 * A ProxyContext for node `node-1` (192.168.50.1), IPv4 only, on TEST_HOST, with the default
 * configuration; `overrides.config` is merged over the defaults, the rest replaces fields.
 */
export function testContext(overrides: TestContextOverrides = {}): ProxyContext & { dryRunSink: StringSink } {
  const { config, ...rest } = overrides;
  return {
    config: { ...defaultConfiguration(), ...(config ?? {}) },
    nodeName: 'node-1',
    nodeIPs: { IPv4: '192.168.50.1' },
    families: ['IPv4'],
    dryRun: false,
    dryRunSink: new StringSink(),
    host: TEST_HOST,
    ...rest,
  } as ProxyContext & { dryRunSink: StringSink };
}
