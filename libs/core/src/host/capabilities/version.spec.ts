import { compareVersions, parseVersion, versionAtLeast } from './version.js';
import { parseKconfig, parseModuleList, parseProcModules } from './kernel-evidence.js';

describe('versions', () => {
  it('reads the first dotted number', () => {
    expect(parseVersion('iptables v1.8.9 (nf_tables)')).toEqual([1, 8, 9]);
    expect(parseVersion('6.18.44-fc-v782')).toEqual([6, 18, 44]);
    expect(parseVersion('ipset v7.17, protocol version: 7')).toEqual([7, 17]);
    expect(parseVersion('no version')).toBeUndefined();
  });

  it('compares part by part', () => {
    expect(compareVersions([5, 13], [5, 4, 0])).toBeGreaterThan(0);
    expect(compareVersions([1, 0], [1, 0, 0])).toBe(0);
    expect(versionAtLeast([1, 6, 2], '1.6.2')).toBe(true);
    expect(versionAtLeast([1, 6, 1], '1.6.2')).toBe(false);
    expect(versionAtLeast(undefined, '1.0')).toBe(false);
  });
});

describe('kernel evidence parsers', () => {
  it('parses kernel config', () => {
    const k = parseKconfig('CONFIG_IP_VS=m\n# CONFIG_IP_VS_RR is not set\nCONFIG_NF_TABLES=y\nCONFIG_LOCALVERSION="-x"\n');
    expect(Object.fromEntries(k)).toEqual({ IP_VS: 'm', IP_VS_RR: 'n', NF_TABLES: 'y' });
  });

  it('parses module lists', () => {
    expect(parseProcModules('ip_vs_rr 12288 0 - Live 0x0\nip_vs 196608 2 ip_vs_rr, Live 0x0\n')).toEqual(['ip_vs_rr', 'ip_vs']);
    expect(parseModuleList('kernel/net/netfilter/ipvs/ip_vs.ko.zst: kernel/a.ko\nkernel/drivers/net/dummy.ko\nkernel/x/nf-nat.ko.xz:\n')).toEqual([
      'ip_vs',
      'dummy',
      'nf_nat',
    ]);
  });
});
