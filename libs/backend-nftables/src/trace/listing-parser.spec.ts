import { parseNftListing, splitElements } from './listing-parser.js';
import { parsePriority } from './nft-ruleset.js';

describe('nft list table parser', () => {
  it('reads named and numeric priorities as nft prints them', () => {
    expect(parsePriority('dstnat - 10')).toBe(-110);
    expect(parsePriority('srcnat')).toBe(100);
    expect(parsePriority('filter')).toBe(0);
    expect(parsePriority('-110')).toBe(-110);
    expect(parsePriority('mangle + 5')).toBe(-145);
    expect(parsePriority('bogus')).toBeUndefined();
  });

  it('splits elements at commas outside quoted comments', () => {
    expect(splitElements(' 1.2.3.4 . tcp . 80 comment "a, b" : drop, tcp . 3001 : goto x ')).toEqual(['1.2.3.4 . tcp . 80 comment "a, b" : drop', 'tcp . 3001 : goto x']);
  });

  it('reads chains, base chains, wrapped elements, comments, counters and dynamic-set timers', () => {
    const r = parseNftListing(
      [
        'table ip kube-proxy {',
        '\tcomment "rules for kube-proxy"',
        '\tset affinity-X {',
        '\t\ttype ipv4_addr',
        '\t\tsize 65535',
        '\t\tflags dynamic,timeout',
        '\t\ttimeout 10m',
        '\t\telements = { 10.0.0.2 timeout 10m expires 9m58s }',
        '\t}',
        '',
        '\tmap no-endpoint-services {',
        '\t\ttype ipv4_addr . inet_proto . inet_service : verdict',
        '\t\telements = { 10.96.0.99 . tcp . 80 comment "default/pending:http" : goto reject-chain,',
        '\t\t\t     10.96.0.98 . udp . 53 : drop }',
        '\t}',
        '',
        '\tchain nat-prerouting {',
        '\t\ttype nat hook prerouting priority dstnat; policy accept;',
        '\t\tcounter packets 12 bytes 720 jump services',
        '\t}',
        '',
        '\tchain reject-chain {',
        '\t\tcomment "helper"',
        '\t\treject',
        '\t}',
        '}',
      ].join('\n'),
      'ip',
    );
    expect(r.chains.get('nat-prerouting')).toEqual({ name: 'nat-prerouting', base: { type: 'nat', hook: 'prerouting', priority: -100 }, rules: ['counter packets 12 bytes 720 jump services'] });
    expect(r.chains.get('reject-chain')!.rules).toEqual(['reject']);
    expect(r.containers.get('affinity-X')!.elements).toEqual([{ key: '10.0.0.2' }]);
    expect(r.containers.get('no-endpoint-services')!.elements).toEqual([
      { key: '10.96.0.99 . tcp . 80', comment: 'default/pending:http', value: 'goto reject-chain' },
      { key: '10.96.0.98 . udp . 53', value: 'drop' },
    ]);
  });

  it('refuses another family, and text that is not a listing', () => {
    expect(() => parseNftListing('table ip6 kube-proxy {\n}\n', 'ip')).toThrow(/not of family ip/);
    expect(() => parseNftListing('', 'ip')).toThrow(/no table ip/);
    expect(() => parseNftListing('table ip kube-proxy {\n\tchain a {\n', 'ip')).toThrow(/ends inside a block/);
  });
});

describe('nft list table parser at scale', () => {
  it('reads a 20,000-element map wrapped over 10,000 lines in linear time', () => {
    const elements: string[] = [];
    for (let i = 0; i < 20_000; i++) elements.push(`172.30.${i >> 8}.${i & 255} . tcp . 80 : goto service-${i}`);
    const lines = ['table ip kube-proxy {', '\tmap service-ips {', '\t\ttype ipv4_addr . inet_proto . inet_service : verdict'];
    for (let i = 0; i < elements.length; i += 2) {
      const pair = `${elements[i]}, ${elements[i + 1]}${i + 2 < elements.length ? ',' : ' }'}`;
      lines.push(i === 0 ? `\t\telements = { ${pair}` : `\t\t\t     ${pair}`);
    }
    lines.push('\t}', '}');
    const started = Date.now();
    const r = parseNftListing(lines.join('\n'), 'ip');
    // Quadratic re-scanning took minutes at this size; linear takes well under a second.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.containers.get('service-ips')!.elements).toHaveLength(20_000);
    expect(r.containers.get('service-ips')!.elements[19_999]).toEqual({ key: '172.30.78.31 . tcp . 80', value: 'goto service-19999' });
  });
});

describe('nft list table parser, saved listings', () => {
  it('skips # notes outside the table', () => {
    const r = parseNftListing(['# saved from node-1', 'table ip kube-proxy {', '\tchain services {', '\t}', '}', '# end'].join('\n'), 'ip');
    expect([...r.chains.keys()]).toEqual(['services']);
  });
});
