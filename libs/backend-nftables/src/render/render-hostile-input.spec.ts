import { BENIGN_NAME, HOSTILE_NAMES, testServicePort } from '@kube-proxy/core/testing';
import { servicePortName } from '@kube-proxy/core';
import { NftTransaction } from '../nft/nft-transaction.js';
import { assertOneLine, assertRenderable, UnsafeNftTextError } from './render-guards.js';
import { makeTestService, newFakeProxier } from '../testing/fake-proxier.js';

const ep = { ip: '10.0.0.1', port: 80, key: '10.0.0.1:80', ready: true, serving: true, terminating: false, isLocal: false, nodeName: '', zone: '', zoneHints: null, nodeHints: null };

describe('nftables render safety (issue 10 vectors)', () => {
  it.each(HOSTILE_NAMES.filter((h) => h.label !== 'empty name and port'))('refuses $label before any text is written', (h) => {
    const svc = testServicePort({ name: servicePortName(h.namespace, h.name, h.port, 'TCP') });
    expect(() => assertRenderable(svc, [ep])).toThrow(UnsafeNftTextError);
  });

  it('accepts real names, empty port names included, and canonical addresses', () => {
    expect(() => assertRenderable(testServicePort({ name: servicePortName(BENIGN_NAME.namespace, BENIGN_NAME.name, BENIGN_NAME.port, 'TCP') }), [ep])).not.toThrow();
    expect(() => assertRenderable(testServicePort({ name: servicePortName('default', 'web', '', 'TCP') }), [ep])).not.toThrow();
  });

  it('refuses addresses that are not canonical text', () => {
    const base = testServicePort();
    expect(() => assertRenderable({ ...base, clusterIP: '10.0.0.1 } drop' }, [])).toThrow(UnsafeNftTextError);
    expect(() => assertRenderable({ ...base, externalIPs: ['010.0.0.1'] }, [])).toThrow(UnsafeNftTextError);
    expect(() => assertRenderable(base, [{ ...ep, ip: '10.0.0.1\n' }])).toThrow(UnsafeNftTextError);
    expect(() => assertRenderable({ ...base, loadBalancerSourceRanges: ['10.0.0.0/8 } accept'] }, [])).toThrow(UnsafeNftTextError);
  });

  it('no transaction line may hold a line break or NUL', () => {
    expect(() => assertOneLine('add chain ip kube-proxy a\nadd rule ip kube-proxy a accept')).toThrow(UnsafeNftTextError);
    expect(() => assertOneLine('add chain ip kube-proxy a\0')).toThrow(UnsafeNftTextError);
    expect(() => assertOneLine(new NftTransaction('ip').addChain('services').lines[0])).not.toThrow();
  });

  it('a hostile Service that reached the proxier is skipped with a log line; the others are programmed', async () => {
    const fp = newFakeProxier();
    const good = makeTestService('ns1', 'ok', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }));
    const evil = makeTestService('default', 'evil" } accept\nadd rule', (s) => Object.assign(s.spec, { clusterIP: '172.30.0.42', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }));
    fp.proxier.onServiceAdd(evil);
    fp.proxier.onServiceAdd(good);
    await fp.proxier.syncProxyRules();
    const dump = fp.nft.table.dump();
    expect(dump).toContain('172.30.0.41 . tcp . 80');
    expect(dump).not.toContain('evil');
    expect(dump).not.toContain('172.30.0.42');
    for (const line of dump.split('\n')) expect(line.includes('\r')).toBe(false);
  });
});
