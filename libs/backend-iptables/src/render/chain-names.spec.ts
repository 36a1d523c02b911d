import {
  hash16ForTest,
  hash16Reference,
  ChainNameCache,
  portProtoHash,
  serviceExternalChainName,
  serviceFirewallChainName,
  servicePortEndpointChainName,
  servicePortPolicyClusterChain,
  servicePortPolicyLocalChainName,
} from './chain-names.js';

// Chain names that appear in upstream's pkg/proxy/iptables/proxier_test.go expected outputs.
describe('chain names (upstream proxier_test.go values)', () => {
  it.each([
    ['ns1/svc1:p80', 'XPGD46QRK7WJZT7O'],
    ['ns2/svc2:p80', 'GNZBNJ2PO5MGZ6GT'],
    ['ns3/svc3:p80', 'X27LE4BHSL4DOUIK'],
    ['ns4/svc4:p80', '4SW47YFZTEDKD3PK'],
    ['ns5/svc5:p80', 'NUKIZ6OKUXPJNT4C'],
    ['ns2/svc2:p8080', '2VJB64SDSIJUP5T6'],
    ['ns4/svc4:p8082', 'EBDQOQU5SJFXRIL3'],
  ])('%s/tcp hashes to %s', (name, hash) => {
    expect(portProtoHash(name, 'TCP')).toBe(hash);
    expect(portProtoHash(name, 'tcp')).toBe(hash);
    expect(servicePortPolicyClusterChain(name, 'TCP')).toBe(`KUBE-SVC-${hash}`);
    expect(servicePortPolicyLocalChainName(name, 'TCP')).toBe(`KUBE-SVL-${hash}`);
    expect(serviceExternalChainName(name, 'TCP')).toBe(`KUBE-EXT-${hash}`);
    expect(serviceFirewallChainName(name, 'TCP')).toBe(`KUBE-FW-${hash}`);
  });

  it.each([
    ['ns1/svc1:p80', '10.180.0.1:80', 'KUBE-SEP-SXIVWICOYRO3J4NJ'],
    ['ns2/svc2:p80', '10.180.0.2:80', 'KUBE-SEP-RS4RBKLTHTF2IUXJ'],
    ['ns3/svc3:p80', '10.180.0.3:80', 'KUBE-SEP-OYPFS5VJICHGATKP'],
    ['ns4/svc4:p80', '10.180.0.4:80', 'KUBE-SEP-UKSFD7AGPMPPLUHC'],
    ['ns4/svc4:p80', '10.180.0.5:80', 'KUBE-SEP-C6EBXVWJJZMIWKLZ'],
    ['ns5/svc5:p80', '10.180.0.3:80', 'KUBE-SEP-I77PXRDZVX7PMWMN'],
    ['ns1/svc1:p80', '10.0.1.1:80', 'KUBE-SEP-SNQ3ZNILQDEJNDQO'],
    ['ns2/svc2:p8080', '10.0.2.1:8080', 'KUBE-SEP-UHEGFW77JX3KXTOV'],
    ['ns3/svc3:p80', '10.0.3.1:80', 'KUBE-SEP-BSWRHOQ77KEXZLNL'],
    ['ns3/svc3:p80', '10.0.3.2:80', 'KUBE-SEP-DKCFIS26GWF2WLWC'],
    ['ns3/svc3:p80', '10.0.3.3:80', 'KUBE-SEP-JVVZVJ7BSEPPRNBS'],
    ['ns4/svc4:p80', '10.0.4.1:80', 'KUBE-SEP-AYCN5HPXMIRJNJXU'],
    ['ns1/svc1:p80', '10.0.0.0:80', 'KUBE-SEP-DKGQUZGBKLTPAR56'],
    ['ns3/svc3:p8081', '203.0.113.4:8081', 'KUBE-SEP-RUVVH7YV3PHQBDOS'],
    ['ns4/svc4:p8082', '10.4.0.1:8082', 'KUBE-SEP-SU5STNODRYEWJAUF'],
  ])('%s/tcp endpoint %s is %s', (name, ep, chain) => {
    expect(servicePortEndpointChainName(name, 'TCP', ep)).toBe(chain);
  });

  it('the protocol is part of the hash', () => {
    expect(portProtoHash('ns1/svc1:p80', 'UDP')).not.toBe(portProtoHash('ns1/svc1:p80', 'TCP'));
  });
});

describe('ChainNameCache', () => {
  it('returns the same names as the pure functions', () => {
    const c = new ChainNameCache();
    expect(c.svc('ns1/svc1:p80', 'TCP')).toBe('KUBE-SVC-XPGD46QRK7WJZT7O');
    expect(c.svl('ns1/svc1:p80', 'TCP')).toBe('KUBE-SVL-XPGD46QRK7WJZT7O');
    expect(c.ext('ns1/svc1:p80', 'TCP')).toBe('KUBE-EXT-XPGD46QRK7WJZT7O');
    expect(c.fw('ns1/svc1:p80', 'TCP')).toBe('KUBE-FW-XPGD46QRK7WJZT7O');
    expect(c.sep('ns1/svc1:p80', 'TCP', '10.180.0.1:80')).toBe('KUBE-SEP-SXIVWICOYRO3J4NJ');
    expect(c.service('ns1/svc1:p80', 'TCP')).toBe(c.service('ns1/svc1:p80', 'TCP'));
    expect(c.size).toEqual({ services: 1, endpoints: 1 });
  });

  it('keeps entries used in a sync and drops the others at endSync', () => {
    const c = new ChainNameCache();
    c.beginSync();
    c.sep('ns/a:p', 'TCP', '10.0.0.1:80');
    c.sep('ns/a:p', 'TCP', '10.0.0.2:80');
    c.sep('ns/b:p', 'UDP', '10.0.0.3:53');
    c.endSync();
    expect(c.size).toEqual({ services: 2, endpoints: 3 });

    c.beginSync();
    // The same endpoint looked up several times counts once.
    c.sep('ns/a:p', 'TCP', '10.0.0.1:80');
    c.sep('ns/a:p', 'TCP', '10.0.0.1:80');
    c.sep('ns/a:p', 'TCP', '10.0.0.1:80');
    c.endSync();
    expect(c.size).toEqual({ services: 1, endpoints: 1 });
    expect(c.sep('ns/a:p', 'TCP', '10.0.0.1:80')).toBe(servicePortEndpointChainName('ns/a:p', 'TCP', '10.0.0.1:80'));
  });
});

describe('hash16 (sha256 + base32 by bit extraction)', () => {
  it('matches a plain byte-stream base32 of the digest for inputs of many lengths', () => {
    for (let len = 0; len <= 300; len++) {
      const s = Array.from({ length: len }, (_, i) => String.fromCharCode(33 + ((i * 7 + len) % 94))).join('');
      expect(hash16ForTest(s)).toBe(hash16Reference(s));
    }
  });
  it('hashes the UTF-8 bytes of non-ASCII input', () => {
    expect(hash16ForTest('ns/é:p80tcp')).toBe(hash16Reference('ns/é:p80tcp'));
  });
});
