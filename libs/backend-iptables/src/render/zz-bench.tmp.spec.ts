import { nullLogger, servicePortsFromService } from '@kube-proxy/core';
import type { Endpoint, ServicePort } from '@kube-proxy/core';
import { ChainNameCache } from './chain-names.js';
import { renderRuleset } from './render-ruleset.js';
import { fakeProxierOptions, makeEndpoint, makeTestService } from './testing/fake-proxier.js';

it('bench 10k x 5', () => {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  for (let i = 0; i < 10000; i++) {
    const ns = `ns${i % 100}`, name = `svc${i}`;
    const svc = makeTestService(ns, name, (s) => {
      s.spec.clusterIP = `172.${20 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
      s.spec.type = i % 10 === 0 ? 'NodePort' : 'ClusterIP';
      s.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP', ...(i % 10 === 0 ? { nodePort: 30000 + (i % 2000) } : {}) }];
    });
    const [p] = servicePortsFromService(svc, 'IPv4', nullLogger);
    serviceMap.set(p!.name.key, p!);
    const eps: Endpoint[] = [];
    for (let e = 0; e < 5; e++) eps.push(makeEndpoint({ ip: `10.${(i >> 8) & 255}.${i & 255}.${e + 1}`, nodeName: e === 0 ? 'test-node' : 'other' }, 8080));
    eps.sort((a, b) => (a.key < b.key ? -1 : 1));
    endpointsMap.set(p!.name.key, eps);
  }
  const opts = fakeProxierOptions('IPv4', { masqueradeMark: undefined });
  const names = new ChainNameCache();
  const input = { serviceMap, endpointsMap, changedServices: null, existingNatChains: null };
  let t = process.hrtime.bigint();
  let r = renderRuleset(input, opts, names);
  const cold = Number(process.hrtime.bigint() - t) / 1e6;
  const times: number[] = [];
  for (let k = 0; k < 10; k++) {
    t = process.hrtime.bigint();
    r = renderRuleset(input, opts, names);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  // partial sync with 10 changed services
  const changed = new Set(Array.from({ length: 10 }, (_, i) => `ns${i % 100}/svc${i}`));
  t = process.hrtime.bigint();
  const rp = renderRuleset({ ...input, changedServices: changed, existingNatChains: r.activeNatChains }, opts, names);
  const partial = Number(process.hrtime.bigint() - t) / 1e6;
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ cold, warmMedian: times[5], warmMin: times[0], warmMax: times[9], partial, bytes: r.payload.length, partialBytes: rp.payload.length, nat: r.natRuleCount, filter: r.filterRuleCount, chains: r.natChainCount, large: r.largeClusterMode }));
});
