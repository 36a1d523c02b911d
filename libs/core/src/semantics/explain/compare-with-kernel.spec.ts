import type { KernelObject } from '../../contracts/packet-trace.js';
import { explainTestConfig, explainTestNode, explainTestService, explainTestSlice } from '../../testing/explain-objects.js';
import type { IPFamily } from '../model/protocol.js';
import { compareWithKernel } from './compare-with-kernel.js';
import { explainService } from './explain-service.js';
import type { ServiceExplanation } from './service-explanation.js';

function webExplanation(families: IPFamily[] = ['IPv4']): ServiceExplanation {
  const svc = explainTestService({
    clusterIPs: families.length === 2 ? ['10.96.0.10', 'fd00:96::10'] : ['10.96.0.10'],
    ipFamilies: families,
    ports: [
      { name: 'http', port: 80, protocol: 'TCP' },
      { name: 'metrics', port: 9090, protocol: 'TCP' },
    ],
  });
  const ports = [
    { name: 'http', port: 8080 },
    { name: 'metrics', port: 9100 },
  ];
  const slices = [
    explainTestSlice([{ ip: '10.0.1.5' }, { ip: '10.0.1.6', node: 'node-2' }, { ip: '10.0.1.7', ready: false }], { ports }),
    explainTestSlice([{ ip: 'fd00::5' }], { name: 'web-v6', addressType: 'IPv6', ports }),
  ];
  return explainService({
    service: svc,
    endpointSlices: slices,
    node: { name: 'node-1', object: explainTestNode('node-1', { addresses: ['10.0.0.1', 'fd00::1'] }) },
    config: explainTestConfig({ mode: 'iptables' }),
    families,
  });
}

const chain = (name: string, endpoints: string[], servicePort?: string): KernelObject => ({
  kind: 'chain',
  name,
  rules: endpoints.length + 1,
  endpoints,
  ...(servicePort === undefined ? {} : { servicePort }),
});

describe('compareWithKernel', () => {
  it('finds nothing when the kernel sends each port to exactly its endpoints', () => {
    const objects = [chain('nat/KUBE-SVC-HTTP', ['10.0.1.5:8080', '10.0.1.6:8080']), chain('nat/KUBE-SVC-METRICS', ['10.0.1.5:9100', '10.0.1.6:9100']), { kind: 'chain', name: 'nat/KUBE-SERVICES', rules: 2 }];
    expect(compareWithKernel(webExplanation(), objects)).toEqual([]);
  });

  it('names a ready endpoint the kernel lacks, by port', () => {
    const objects = [chain('nat/KUBE-SVC-HTTP', ['10.0.1.5:8080'], 'ns/web:http'), chain('nat/KUBE-SVC-METRICS', ['10.0.1.5:9100', '10.0.1.6:9100'], 'ns/web:metrics')];
    expect(compareWithKernel(webExplanation(), objects)).toEqual([
      "endpoint 10.0.1.6:8080 is ready in the EndpointSlice but absent from the kernel's rules for ns/web:http (chain nat/KUBE-SVC-HTTP)",
    ]);
  });

  it('an endpoint under the wrong port is missing from one and stray in the other, when objects name their port', () => {
    const objects = [chain('nat/KUBE-SVC-HTTP', ['10.0.1.5:8080', '10.0.1.6:8080', '10.0.1.6:9100'], 'ns/web:http'), chain('nat/KUBE-SVC-METRICS', ['10.0.1.5:9100'], 'ns/web:metrics')];
    expect(compareWithKernel(webExplanation(), objects)).toEqual([
      "endpoint 10.0.1.6:9100 is ready in the EndpointSlice but absent from the kernel's rules for ns/web:metrics (chain nat/KUBE-SVC-METRICS)",
      'the kernel sends ns/web:http to 10.0.1.6:9100, which no EndpointSlice lists',
    ]);
  });

  it('names an endpoint the kernel sends to that no slice lists, or that the slice lists but leaves out', () => {
    const objects = [chain('nat/KUBE-SVC-HTTP', ['10.0.1.5:8080', '10.0.1.6:8080', '10.0.9.9:8080', '10.0.1.7:8080']), chain('nat/KUBE-SVC-METRICS', ['10.0.1.5:9100', '10.0.1.6:9100', '10.0.9.9:80'])];
    expect(compareWithKernel(webExplanation(), objects)).toEqual([
      'the kernel sends ns/web:http to 10.0.1.7:8080, which the EndpointSlice lists but leaves out: not ready',
      'the kernel sends ns/web to 10.0.9.9:80, which no EndpointSlice lists',
      'the kernel sends ns/web:http to 10.0.9.9:8080, which no EndpointSlice lists',
    ]);
  });

  it('says when the kernel holds nothing for a proxied Service, and when it holds rules for an unproxied one', () => {
    expect(compareWithKernel(webExplanation(), [])).toEqual(['the kernel holds no rules for ns/web (IPv4)']);
    const headless = explainService({
      service: explainTestService({ clusterIP: 'None', clusterIPs: ['None'] }),
      endpointSlices: [],
      node: { name: 'node-1' },
      config: explainTestConfig(),
      families: ['IPv4'],
    });
    expect(compareWithKernel(headless, [])).toEqual([]);
    expect(compareWithKernel(headless, [chain('nat/KUBE-SVC-X', ['10.0.1.5:8080'])])).toEqual([
      "the kernel holds 1 object(s) for ns/web, which should have none: headless Service (clusterIP None): DNS returns its endpoints' addresses; kube-proxy programs nothing for it",
    ]);
  });

  it('compares only the families the objects were read for; IPv6 endpoints as [IPv6]:PORT', () => {
    const x = webExplanation(['IPv4', 'IPv6']);
    const v4 = [chain('nat/KUBE-SVC-HTTP', ['10.0.1.5:8080', '10.0.1.6:8080']), chain('nat/KUBE-SVC-METRICS', ['10.0.1.5:9100', '10.0.1.6:9100'])];
    expect(compareWithKernel(x, v4, { families: ['IPv4'] })).toEqual([]);
    expect(compareWithKernel(x, v4)).toEqual([
      "endpoint [fd00::5]:8080 is ready in the EndpointSlice but absent from the kernel's rules for ns/web:http",
      "endpoint [fd00::5]:9100 is ready in the EndpointSlice but absent from the kernel's rules for ns/web:metrics",
    ]);
    const v6 = [chain('ip6 kube-proxy/service-http', ['[fd00::5]:8080', '[fd00::9]:8080']), chain('ip6 kube-proxy/service-metrics', ['[fd00::5]:9100'])];
    expect(compareWithKernel(x, v6, { families: ['IPv6'] })).toEqual(['the kernel sends ns/web:http to [fd00::9]:8080, which no EndpointSlice lists']);
  });
});
