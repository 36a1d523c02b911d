import type { Provider } from '../contracts/provider.js';
import { DualStackProvider } from './dual-stack-provider.js';

function provider(withCIDRs: boolean, seen: string[], name: string): Provider {
  const idle = () => undefined;
  const p = { sync: idle, syncLoop: async () => undefined, stop: idle, firstSync: async () => undefined } as unknown as Provider;
  if (withCIDRs) p.onServiceCIDRsChanged = (cidrs) => void seen.push(`${name}:${cidrs.join(',')}`);
  return p;
}

describe('DualStackProvider', () => {
  it('hands the whole Service CIDR list to each family proxier that takes it', () => {
    const seen: string[] = [];
    new DualStackProvider(provider(true, seen, 'v4'), provider(true, seen, 'v6')).onServiceCIDRsChanged(['10.96.0.0/12', 'fd00::/112']);
    expect(seen).toEqual(['v4:10.96.0.0/12,fd00::/112', 'v6:10.96.0.0/12,fd00::/112']);
  });

  it('skips a family proxier written against the contract without ServiceCIDRs', () => {
    const seen: string[] = [];
    new DualStackProvider(provider(false, seen, 'v4'), provider(true, seen, 'v6')).onServiceCIDRsChanged(['10.96.0.0/12']);
    expect(seen).toEqual(['v6:10.96.0.0/12']);
  });
});
