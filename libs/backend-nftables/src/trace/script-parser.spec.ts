import { nftablesTracer } from './nftables-tracer.js';
import { definitionsFirst, parseNftScript } from './script-parser.js';

const P4 = 'ip kube-proxy';
const P6 = 'ip6 kube-proxy';

describe('nft -f script reader', () => {
  it("takes its own family's table out of a dual-stack dry run, flushes and deletes included", () => {
    const text = [
      '# sync 1 full 2026-01-01T00:00:00Z',
      `add table ${P4} { comment "rules for kube-proxy" ; }`,
      `add table ${P6} { comment "rules for kube-proxy" ; }`,
      `add chain ${P4} a`,
      `add chain ${P6} b`,
      `add rule ${P4} a drop`,
      `flush chain ${P4} a`,
      `add rule ${P4} a reject`,
      `add chain ${P4} gone`,
      `delete chain ${P4} gone`,
    ].join('\n');
    const v4 = parseNftScript(text, 'ip');
    expect([...v4.chains.keys()]).toEqual(['a']);
    expect(v4.chains.get('a')!.rules).toEqual(['reject']);
    expect([...parseNftScript(text, 'ip6').chains.keys()]).toEqual(['b']);
  });

  it('treats any mark kube-proxy sets as the masquerade mark (--iptables-masquerade-bit)', () => {
    const snapshot = nftablesTracer.fromDryRun(
      [
        `add table ${P4} { comment "rules for kube-proxy" ; }`,
        `add chain ${P4} nat-prerouting { type nat hook prerouting priority -100 ; }`,
        `add chain ${P4} nat-postrouting { type nat hook postrouting priority 100 ; }`,
        `add chain ${P4} mark-for-masquerade`,
        `add chain ${P4} masquerading`,
        `add chain ${P4} service-AAAAAAAA-ns/svc/tcp/p`,
        `add rule ${P4} mark-for-masquerade mark set mark or 0x8000`,
        `add rule ${P4} masquerading mark and 0x8000 == 0 return`,
        `add rule ${P4} masquerading mark set mark xor 0x8000`,
        `add rule ${P4} masquerading masquerade fully-random`,
        `add rule ${P4} nat-postrouting jump masquerading`,
        `add rule ${P4} nat-prerouting ip daddr 172.30.0.1 tcp dport 80 goto service-AAAAAAAA-ns/svc/tcp/p`,
        `add rule ${P4} service-AAAAAAAA-ns/svc/tcp/p ip saddr != 10.0.0.0/8 jump mark-for-masquerade`,
        `add rule ${P4} service-AAAAAAAA-ns/svc/tcp/p meta l4proto tcp dnat to 10.0.0.9:8080`,
      ].join('\n'),
      'IPv4',
    );
    const t = nftablesTracer.trace(snapshot, { family: 'IPv4', protocol: 'TCP', sourceIP: '192.0.2.1', destIP: '172.30.0.1', destPort: 80, locallyGenerated: false }, { name: 'n', addresses: [] });
    expect(t).toMatchObject({ verdict: 'DNAT', endpoints: ['10.0.0.9:8080'], service: 'ns/svc:p', masquerade: true, masqueradeReason: 'traffic to a cluster IP from outside the cluster CIDR is masqueraded' });
  });

  it("loads an add-only dump definitions first (upstream's sorted dumps name chains added later), and leaves scripts that flush in their order", () => {
    const dump = [
      `add table ${P4} { comment "rules for kube-proxy" ; }`,
      `add chain ${P4} service-X`,
      `add rule ${P4} service-X goto endpoint-Y`,
      `add set ${P4} s { type ipv4_addr ; }`,
      `add element ${P4} s { 10.0.0.1 }`,
      `add chain ${P4} endpoint-Y`,
      `add rule ${P4} endpoint-Y meta l4proto tcp dnat to 10.0.0.1:80`,
    ];
    expect(definitionsFirst(dump)).toEqual([dump[0], dump[1], dump[3], dump[5], dump[2], dump[4], dump[6]]);
    expect(parseNftScript(dump.join('\n'), 'ip').chains.get('service-X')?.rules).toEqual(['goto endpoint-Y']);
    const script = [`add table ${P4}`, `flush chain ${P4} service-X`, `add chain ${P4} service-X`];
    expect(definitionsFirst(script)).toEqual(script);
  });
});
