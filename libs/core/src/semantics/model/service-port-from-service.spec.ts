import type { V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '../../host/logger.js';
import { setEffectiveFeatureGates } from '../../config/effective-feature-gates.js';
import { servicePortsFromService } from './service-port-from-service.js';

interface Logged {
  message: string;
  meta?: Record<string, unknown>;
}

function recordingLogger(): Logger & { warnings: Logged[] } {
  const warnings: Logged[] = [];
  const logger = {
    ...nullLogger,
    warnings,
    warn: (message: string, meta?: Record<string, unknown>) => {
      warnings.push({ message, meta });
    },
    child: () => logger,
  };
  return logger;
}

function service(spec: Partial<V1ServiceSpec>, extra: Partial<V1Service> = {}): V1Service {
  return {
    metadata: { namespace: 'ns1', name: 'svc1', ...extra.metadata },
    spec: {
      type: 'ClusterIP',
      clusterIP: '172.30.0.1',
      clusterIPs: ['172.30.0.1'],
      ipFamilies: ['IPv4'],
      ports: [{ name: 'p80', port: 80, protocol: 'TCP' }],
      ...spec,
    },
    status: extra.status,
  };
}

describe('servicePortsFromService', () => {
  it('builds a plain ClusterIP port', () => {
    const [port, ...rest] = servicePortsFromService(service({}), 'IPv4', nullLogger);
    expect(rest).toEqual([]);
    expect(port).toEqual({
      name: { namespace: 'ns1', name: 'svc1', port: 'p80', protocol: 'TCP', key: 'ns1/svc1:p80' },
      family: 'IPv4',
      clusterIP: '172.30.0.1',
      port: 80,
      protocol: 'TCP',
      nodePort: 0,
      externalIPs: [],
      loadBalancerVIPs: [],
      loadBalancerSourceRanges: [],
      sessionAffinityClientIP: false,
      stickyMaxAgeSeconds: 0,
      externalPolicyLocal: false,
      internalPolicyLocal: false,
      healthCheckNodePort: 0,
      trafficDistribution: '',
      hintsAnnotation: '',
      externallyAccessible: false,
      usesClusterEndpoints: true,
      usesLocalEndpoints: false,
    });
  });

  it('keys unnamed ports by the namespaced name alone and defaults the protocol to TCP', () => {
    const ports = servicePortsFromService(
      service({ ports: [{ port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53 }] }),
      'IPv4',
      nullLogger,
    );
    expect(ports.map((p) => [p.name.key, p.protocol])).toEqual([
      ['ns1/svc1', 'UDP'],
      ['ns1/svc1:dns-tcp', 'TCP'],
    ]);
  });

  it.each([
    ['ExternalName', { type: 'ExternalName', externalName: 'example.com' }],
    ['headless', { clusterIP: 'None', clusterIPs: ['None'] }],
    ['no cluster IP', { clusterIP: '', clusterIPs: [] }],
    ['cluster IP unset', { clusterIP: undefined, clusterIPs: undefined }],
  ])('skips %s services', (_name, spec) => {
    const logger = recordingLogger();
    expect(servicePortsFromService(service(spec), 'IPv4', logger)).toEqual([]);
    expect(logger.warnings).toEqual([]);
  });

  describe('IP families', () => {
    const dualStack = service({
      clusterIP: '172.30.0.1',
      clusterIPs: ['172.30.0.1', 'fd00::1'],
      ipFamilies: ['IPv4', 'IPv6'],
      externalIPs: ['1.1.1.1', '2001:db8::1', '1.1.1.2'],
    });

    it('takes the cluster IP of the proxier family from clusterIPs', () => {
      expect(servicePortsFromService(dualStack, 'IPv4', nullLogger)[0]?.clusterIP).toBe('172.30.0.1');
      expect(servicePortsFromService(dualStack, 'IPv6', nullLogger)[0]?.clusterIP).toBe('fd00::1');
    });

    it('filters external IPs by family', () => {
      expect(servicePortsFromService(dualStack, 'IPv4', nullLogger)[0]?.externalIPs).toEqual(['1.1.1.1', '1.1.1.2']);
      expect(servicePortsFromService(dualStack, 'IPv6', nullLogger)[0]?.externalIPs).toEqual(['2001:db8::1']);
    });

    it('yields nothing for a single-stack service of the other family', () => {
      expect(servicePortsFromService(service({}), 'IPv6', nullLogger)).toEqual([]);
    });

    it('matches a legacy service without ipFamilies by the family of its clusterIP', () => {
      const legacy = service({ clusterIP: 'FD00:0::10', clusterIPs: undefined, ipFamilies: undefined });
      expect(servicePortsFromService(legacy, 'IPv4', nullLogger)).toEqual([]);
      expect(servicePortsFromService(legacy, 'IPv6', nullLogger)[0]?.clusterIP).toBe('fd00::10');
    });

    it('yields nothing when ipFamilies names the family but clusterIPs lacks the entry', () => {
      const svc = service({ clusterIPs: ['172.30.0.1'], ipFamilies: ['IPv4', 'IPv6'] });
      expect(servicePortsFromService(svc, 'IPv6', nullLogger)).toEqual([]);
    });
  });

  describe('load balancer ingress', () => {
    const lb = (ingress: object[]) =>
      service(
        { type: 'LoadBalancer', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] },
        { status: { loadBalancer: { ingress } } },
      );

    it('keeps VIP-mode and unset-mode IPs of the family only', () => {
      const svc = lb([
        { ip: '5.6.7.8' },
        { ip: '5.6.7.9', ipMode: 'VIP' },
        { ip: '5.6.7.10', ipMode: 'Proxy' },
        { ip: '2001:db8::5' },
        { hostname: 'lb.example.com' },
      ]);
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.loadBalancerVIPs).toEqual(['5.6.7.8', '5.6.7.9']);
    });

    it('marks ports with a node port or LB VIP as externally accessible', () => {
      const [port] = servicePortsFromService(lb([{ ip: '5.6.7.8' }]), 'IPv4', nullLogger);
      expect(port).toMatchObject({ nodePort: 30080, externallyAccessible: true, usesClusterEndpoints: true });
    });
  });

  describe('loadBalancerSourceRanges', () => {
    const withRanges = (ranges: string[]) =>
      service({
        type: 'LoadBalancer',
        clusterIPs: ['172.30.0.1', 'fd00::1'],
        ipFamilies: ['IPv4', 'IPv6'],
        loadBalancerSourceRanges: ranges,
      });

    it('trims whitespace, canonicalises and filters by family', () => {
      const svc = withRanges([' 10.1.2.3/16 ', '2001:DB8::/32', '192.168.0.0/24']);
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.loadBalancerSourceRanges).toEqual([
        '10.1.0.0/16',
        '192.168.0.0/24',
      ]);
      expect(servicePortsFromService(svc, 'IPv6', nullLogger)[0]?.loadBalancerSourceRanges).toEqual(['2001:db8::/32']);
    });

    it('is empty (no filtering, as upstream) for a family none of the ranges belongs to', () => {
      const svc = withRanges(['10.0.0.0/8']);
      expect(servicePortsFromService(svc, 'IPv6', nullLogger)[0]?.loadBalancerSourceRanges).toEqual([]);
    });

    it('collapses to empty when a zero-length prefix of the family allows everyone', () => {
      const svc = withRanges(['10.0.0.0/8', '0.0.0.0/0', '2001:db8::/32']);
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.loadBalancerSourceRanges).toEqual([]);
      expect(servicePortsFromService(svc, 'IPv6', nullLogger)[0]?.loadBalancerSourceRanges).toEqual(['2001:db8::/32']);
    });

    it('skips unparseable ranges with a warning', () => {
      const logger = recordingLogger();
      const svc = withRanges(['10.0.0.0/8', 'not-a-cidr']);
      expect(servicePortsFromService(svc, 'IPv4', logger)[0]?.loadBalancerSourceRanges).toEqual(['10.0.0.0/8']);
      expect(logger.warnings).toEqual([
        {
          message: expect.any(String),
          meta: { service: 'ns1/svc1', field: 'spec.loadBalancerSourceRanges[1]', value: 'not-a-cidr' },
        },
      ]);
    });
  });

  describe('session affinity', () => {
    it('defaults the ClientIP timeout to 10800 seconds', () => {
      const [port] = servicePortsFromService(service({ sessionAffinity: 'ClientIP' }), 'IPv4', nullLogger);
      expect(port).toMatchObject({ sessionAffinityClientIP: true, stickyMaxAgeSeconds: 10800 });
    });

    it('uses an explicit timeout', () => {
      const svc = service({ sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.stickyMaxAgeSeconds).toBe(60);
    });

    it('ignores the config when affinity is None', () => {
      const svc = service({ sessionAffinity: 'None', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        sessionAffinityClientIP: false,
        stickyMaxAgeSeconds: 0,
      });
    });
  });

  describe('traffic policies', () => {
    it('honours externalTrafficPolicy Local on a NodePort service', () => {
      const svc = service({
        type: 'NodePort',
        externalTrafficPolicy: 'Local',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }],
      });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        externalPolicyLocal: true,
        externallyAccessible: true,
        usesClusterEndpoints: true,
        usesLocalEndpoints: true,
        healthCheckNodePort: 0,
      });
    });

    it('ignores externalTrafficPolicy Local on a service that is not externally accessible', () => {
      const svc = service({ externalTrafficPolicy: 'Local' });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        externalPolicyLocal: false,
        usesLocalEndpoints: false,
      });
    });

    it('treats a ClusterIP service with external IPs as externally accessible', () => {
      const svc = service({ externalTrafficPolicy: 'Local', externalIPs: ['1.2.3.4'] });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        externalPolicyLocal: true,
        externallyAccessible: true,
        usesLocalEndpoints: true,
      });
    });

    it('does not count external IPs of the other family as external accessibility', () => {
      const svc = service({ externalTrafficPolicy: 'Local', externalIPs: ['2001:db8::1'] });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        externalPolicyLocal: true,
        externallyAccessible: false,
        usesLocalEndpoints: false,
      });
    });

    it('uses only local endpoints for internalTrafficPolicy Local on an internal-only port', () => {
      const svc = service({ internalTrafficPolicy: 'Local' });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        internalPolicyLocal: true,
        usesClusterEndpoints: false,
        usesLocalEndpoints: true,
      });
    });

    it('still uses cluster endpoints for internalTrafficPolicy Local when externally accessible', () => {
      const svc = service({
        type: 'NodePort',
        internalTrafficPolicy: 'Local',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }],
      });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]).toMatchObject({
        usesClusterEndpoints: true,
        usesLocalEndpoints: true,
      });
    });

    it('sets the health check node port of a LoadBalancer with externalTrafficPolicy Local', () => {
      const svc = service({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.healthCheckNodePort).toBe(32000);
    });

    it('warns when such a LoadBalancer has no health check node port', () => {
      const logger = recordingLogger();
      const svc = service({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' });
      expect(servicePortsFromService(svc, 'IPv4', logger)[0]?.healthCheckNodePort).toBe(0);
      expect(logger.warnings[0]?.meta).toMatchObject({ service: 'ns1/svc1', field: 'spec.healthCheckNodePort' });
    });

    it('ignores healthCheckNodePort when the service does not need one', () => {
      const svc = service({ type: 'LoadBalancer', healthCheckNodePort: 32000 });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.healthCheckNodePort).toBe(0);
    });
  });

  describe('topology', () => {
    it('copies trafficDistribution', () => {
      const svc = service({ trafficDistribution: 'PreferSameZone' });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.trafficDistribution).toBe('PreferSameZone');
    });

    it('reads the topology-mode annotation', () => {
      const svc = service({}, { metadata: { annotations: { 'service.kubernetes.io/topology-mode': 'Auto' } } });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.hintsAnnotation).toBe('Auto');
    });

    it('prefers the deprecated topology-aware-hints annotation when both are set', () => {
      const svc = service(
        {},
        {
          metadata: {
            annotations: {
              'service.kubernetes.io/topology-mode': 'Auto',
              'service.kubernetes.io/topology-aware-hints': 'disabled',
            },
          },
        },
      );
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.hintsAnnotation).toBe('disabled');
    });
  });

  describe('invalid input', () => {
    it('skips a port with an unsupported protocol and keeps the others', () => {
      const logger = recordingLogger();
      const svc = service({
        ports: [
          { name: 'bad', port: 80, protocol: 'ICMP' },
          { name: 'good', port: 81, protocol: 'SCTP' },
        ],
      });
      expect(servicePortsFromService(svc, 'IPv4', logger).map((p) => p.name.key)).toEqual(['ns1/svc1:good']);
      expect(logger.warnings).toEqual([
        { message: expect.any(String), meta: { service: 'ns1/svc1', field: 'spec.ports[0].protocol', value: 'ICMP' } },
      ]);
    });

    it.each([0, 65536, 1.5, -1, '80'])('skips port number %j with a warning', (bad) => {
      const logger = recordingLogger();
      const svc = service({ ports: [{ name: 'p', port: bad as number, protocol: 'TCP' }] });
      expect(servicePortsFromService(svc, 'IPv4', logger)).toEqual([]);
      expect(logger.warnings[0]?.meta).toEqual({ service: 'ns1/svc1', field: 'spec.ports[0].port', value: bad });
    });

    it('drops an invalid node port with a warning', () => {
      const logger = recordingLogger();
      const svc = service({ type: 'NodePort', ports: [{ name: 'p', port: 80, protocol: 'TCP', nodePort: 70000 }] });
      expect(servicePortsFromService(svc, 'IPv4', logger)[0]?.nodePort).toBe(0);
      expect(logger.warnings[0]?.meta).toMatchObject({ service: 'ns1/svc1', field: 'spec.ports[0].nodePort' });
    });

    it('skips the whole service when its cluster IP does not parse', () => {
      const logger = recordingLogger();
      const svc = service({ clusterIP: '172.30.0.300', clusterIPs: ['172.30.0.300'] });
      expect(servicePortsFromService(svc, 'IPv4', logger)).toEqual([]);
      expect(logger.warnings[0]?.meta).toMatchObject({ service: 'ns1/svc1', field: 'spec.clusterIPs' });
    });

    it('skips the whole service when the cluster IP listed for the family is of the other family', () => {
      const logger = recordingLogger();
      const svc = service({ clusterIPs: ['fd00::1'], ipFamilies: ['IPv4'] });
      expect(servicePortsFromService(svc, 'IPv4', logger)).toEqual([]);
      expect(logger.warnings).toHaveLength(1);
    });

    it('skips invalid external IPs with a warning', () => {
      const logger = recordingLogger();
      const svc = service({ externalIPs: ['1.2.3.4', 'nope'] });
      expect(servicePortsFromService(svc, 'IPv4', logger)[0]?.externalIPs).toEqual(['1.2.3.4']);
      expect(logger.warnings[0]?.meta).toEqual({ service: 'ns1/svc1', field: 'spec.externalIPs[1]', value: 'nope' });
    });

    it('skips a service without a name or spec, and never throws on garbage', () => {
      const logger = recordingLogger();
      expect(servicePortsFromService({ spec: {} } as V1Service, 'IPv4', logger)).toEqual([]);
      expect(servicePortsFromService({ metadata: { name: 'x', namespace: 'y' } }, 'IPv4', logger)).toEqual([]);
      expect(servicePortsFromService(null as unknown as V1Service, 'IPv4', logger)).toEqual([]);
      const weird = { metadata: { name: 'x' }, spec: { clusterIP: '1.2.3.4', ports: 'nope' } } as unknown as V1Service;
      expect(servicePortsFromService(weird, 'IPv4', logger)).toEqual([]);
      expect(logger.warnings.length).toBeGreaterThanOrEqual(2);
    });
  });

  describe('AllowServiceExternalIPs (deprecated since v1.36, KEP-5707)', () => {
    afterEach(() => setEffectiveFeatureGates({}));
    const svc = service({ type: 'NodePort', externalIPs: ['1.2.3.4', '2001:db8::1'], ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 30080 }] });
    const noNodePort = service({ externalIPs: ['1.2.3.4'] });

    it('keeps external IPs while the gate has its default (on)', () => {
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.externalIPs).toEqual(['1.2.3.4']);
      expect(servicePortsFromService(noNodePort, 'IPv4', nullLogger)[0]?.externallyAccessible).toBe(true);
    });

    it('drops them in every family when the process gate is off, and what follows from them', () => {
      setEffectiveFeatureGates({ AllowServiceExternalIPs: false });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.externalIPs).toEqual([]);
      // Still a NodePort; a ClusterIP Service whose only external address was an external IP is not
      // externally accessible any more (no external endpoint set, no eTP Local handling).
      expect(servicePortsFromService(svc, 'IPv4', nullLogger)[0]?.nodePort).toBe(30080);
      const [port] = servicePortsFromService(noNodePort, 'IPv4', nullLogger);
      expect(port?.externallyAccessible).toBe(false);
    });

    it('lets a caller (explain) decide for its own configuration, over the process gate', () => {
      setEffectiveFeatureGates({ AllowServiceExternalIPs: false });
      expect(servicePortsFromService(svc, 'IPv4', nullLogger, { allowExternalIPs: true })[0]?.externalIPs).toEqual(['1.2.3.4']);
      setEffectiveFeatureGates({});
      expect(servicePortsFromService(svc, 'IPv4', nullLogger, { allowExternalIPs: false })[0]?.externalIPs).toEqual([]);
    });
  });
});
