import { servicePortName } from '@kube-proxy/core';
import { endpointNameBase, hashAndTruncate, isAffinitySetName, isServiceChainName, NAME_LENGTH_MAX, servicePortNameBase } from './object-names.js';

describe('nftables object names', () => {
  it('hash the readable part as upstream does (values from upstream proxier_test.go)', () => {
    expect(servicePortNameBase(servicePortName('ns1', 'svc1', 'p80', 'TCP'))).toBe('ULMVA6XW-ns1/svc1/tcp/p80');
    expect(endpointNameBase(servicePortName('ns1', 'svc1', 'p80', 'TCP'), { ip: '10.180.0.1', port: 80 })).toBe('5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80');
  });

  it('writes an IPv6 endpoint with dots, not colons (a chain name cannot hold ":")', () => {
    const base = endpointNameBase(servicePortName('ns1', 'svc1', 'p80', 'TCP'), { ip: 'fd00:10::1', port: 80 });
    expect(base).toMatch(/^[A-Z2-7]{8}-ns1\/svc1\/tcp\/p80__fd00.10..1\/80$/);
  });

  it('cuts names longer than the base limit with "..." and keeps them distinct by the hash', () => {
    const a = hashAndTruncate(`${'a'.repeat(300)}1`);
    const b = hashAndTruncate(`${'a'.repeat(300)}2`);
    expect(a.length).toBe(NAME_LENGTH_MAX - 16);
    expect(a.endsWith('...')).toBe(true);
    expect(a.slice(0, 8)).not.toBe(b.slice(0, 8));
  });

  it('tells service chains and affinity sets from the fixed objects', () => {
    expect(isServiceChainName('service-ULMVA6XW-ns1/svc1/tcp/p80')).toBe(true);
    expect(isServiceChainName('nat-prerouting')).toBe(false);
    expect(isAffinitySetName('affinity-X-ns/s/tcp/p__1.2.3.4/80')).toBe(true);
    expect(isAffinitySetName('cluster-ips')).toBe(false);
  });
});
