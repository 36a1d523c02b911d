import type { V1Service, V1ServiceSpec } from '@kubernetes/client-node';
import type { Logger } from '../../host/logger.js';
import { clusterIPForFamily, hasClusterIP } from './cluster-ip.js';
import { formatIP, parseIP } from './ip.js';
import { isPortNumber } from './port-number.js';
import { isProtocol, type IPFamily, type Protocol } from './protocol.js';
import { externalIPsOfFamily, loadBalancerVIPsOfFamily, sourceRangesOfFamily } from './service-addresses.js';
import { namespacedName, servicePortName } from './service-port-name.js';
import type { ServicePort } from './service-port.js';
import { externalPolicyLocal, internalPolicyLocal, needsHealthCheck, serviceType } from './service-policy.js';
import {
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  DEFAULT_CLIENT_IP_TIMEOUT_SECONDS,
} from './well-known.js';

type SharedFields = Omit<
  ServicePort,
  'name' | 'port' | 'protocol' | 'nodePort' | 'externallyAccessible' | 'usesClusterEndpoints' | 'usesLocalEndpoints'
>;

/**
 * The ports a proxier of `family` serves for one Service (upstream's serviceToServiceMap +
 * newBaseServiceInfo). Services that are not proxied (ExternalName, headless, no cluster IP of this
 * family) yield []. Malformed input never throws: the bad port, address or whole Service is skipped
 * with a warning naming the Service and the field.
 *
 * `options.allowExternalIPs` overrides the process's AllowServiceExternalIPs gate (explain and trace
 * pass the gate of the configuration they explain); proxiers leave it unset.
 */
export function servicePortsFromService(
  svc: V1Service,
  family: IPFamily,
  logger: Logger,
  options: { readonly allowExternalIPs?: boolean } = {},
): ServicePort[] {
  const name = svc?.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    logger.warn('Ignoring Service without a name', { field: 'metadata.name' });
    return [];
  }
  const namespace = typeof svc.metadata?.namespace === 'string' ? svc.metadata.namespace : '';
  const ref = namespacedName(namespace, name);
  if (typeof svc.spec !== 'object' || svc.spec === null) {
    logger.warn('Ignoring Service without a spec', { service: ref, field: 'spec' });
    return [];
  }
  if (!hasClusterIP(svc)) {
    logger.debug('Skipping Service without a cluster IP', { service: ref, clusterIP: svc.spec.clusterIP });
    return [];
  }
  if (serviceType(svc) === 'ExternalName') {
    logger.debug('Skipping ExternalName Service', { service: ref });
    return [];
  }
  const clusterIPText = clusterIPForFamily(svc, family);
  if (clusterIPText === '') {
    logger.debug('Service has no cluster IP of this family', { service: ref, family });
    return [];
  }
  const clusterIP = parseIP(clusterIPText);
  if (clusterIP === undefined || clusterIP.family !== family) {
    logger.warn('Ignoring Service with an invalid cluster IP', {
      service: ref,
      field: 'spec.clusterIPs',
      value: clusterIPText,
      family,
    });
    return [];
  }

  const shared = sharedFields(svc, svc.spec, ref, family, formatIP(clusterIP), logger, options.allowExternalIPs);
  const rawPorts = svc.spec.ports;
  if (!Array.isArray(rawPorts)) {
    if (rawPorts !== undefined && rawPorts !== null) logger.warn('Ignoring Service with malformed ports', { service: ref, field: 'spec.ports' });
    return [];
  }
  const ports: ServicePort[] = [];
  rawPorts.forEach((raw, i) => {
    const field = `spec.ports[${i}]`;
    const portName = typeof raw?.name === 'string' ? raw.name : '';
    const protocol = portProtocol(raw?.protocol);
    if (protocol === undefined) {
      logger.warn('Skipping Service port with an unsupported protocol', {
        service: ref,
        field: `${field}.protocol`,
        value: raw?.protocol,
      });
      return;
    }
    if (!isPortNumber(raw?.port)) {
      logger.warn('Skipping Service port with an invalid port number', {
        service: ref,
        field: `${field}.port`,
        value: raw?.port,
      });
      return;
    }
    let nodePort = 0;
    if (raw.nodePort !== undefined && raw.nodePort !== null && raw.nodePort !== 0) {
      if (isPortNumber(raw.nodePort)) {
        nodePort = raw.nodePort;
      } else {
        logger.warn('Ignoring invalid node port', { service: ref, field: `${field}.nodePort`, value: raw.nodePort });
      }
    }
    ports.push(withDerivedFields(shared, servicePortName(namespace, name, portName, protocol), raw.port, protocol, nodePort));
  });
  return ports;
}

function sharedFields(
  svc: V1Service,
  spec: V1ServiceSpec,
  ref: string,
  family: IPFamily,
  clusterIP: string,
  logger: Logger,
  allowExternalIPs: boolean | undefined,
): SharedFields {
  const sessionAffinityClientIP = spec.sessionAffinity === 'ClientIP';
  let stickyMaxAgeSeconds = 0;
  if (sessionAffinityClientIP) {
    const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    if (timeout === undefined || timeout === null) {
      stickyMaxAgeSeconds = DEFAULT_CLIENT_IP_TIMEOUT_SECONDS;
    } else if (Number.isInteger(timeout) && timeout > 0) {
      stickyMaxAgeSeconds = timeout;
    } else {
      logger.warn('Invalid session affinity timeout, using the default', {
        service: ref,
        field: 'spec.sessionAffinityConfig.clientIP.timeoutSeconds',
        value: timeout,
      });
      stickyMaxAgeSeconds = DEFAULT_CLIENT_IP_TIMEOUT_SECONDS;
    }
  }

  let healthCheckNodePort = 0;
  if (needsHealthCheck(svc)) {
    const hc = spec.healthCheckNodePort;
    if (hc === undefined || hc === null || hc === 0) {
      logger.warn('Service has no health check node port', { service: ref, field: 'spec.healthCheckNodePort' });
    } else if (isPortNumber(hc)) {
      healthCheckNodePort = hc;
    } else {
      logger.warn('Ignoring invalid health check node port', {
        service: ref,
        field: 'spec.healthCheckNodePort',
        value: hc,
      });
    }
  }

  return {
    family,
    clusterIP,
    externalIPs: externalIPsOfFamily(svc, family, ref, logger, allowExternalIPs),
    loadBalancerVIPs: loadBalancerVIPsOfFamily(svc, family, ref, logger),
    loadBalancerSourceRanges: sourceRangesOfFamily(svc, family, ref, logger),
    sessionAffinityClientIP,
    stickyMaxAgeSeconds,
    externalPolicyLocal: externalPolicyLocal(svc),
    internalPolicyLocal: internalPolicyLocal(svc),
    healthCheckNodePort,
    trafficDistribution: typeof spec.trafficDistribution === 'string' ? spec.trafficDistribution : '',
    hintsAnnotation: hintsAnnotation(svc),
  };
}

function withDerivedFields(
  shared: SharedFields,
  name: ServicePort['name'],
  port: number,
  protocol: Protocol,
  nodePort: number,
): ServicePort {
  const externallyAccessible = nodePort !== 0 || shared.loadBalancerVIPs.length > 0 || shared.externalIPs.length > 0;
  return {
    ...shared,
    name,
    port,
    protocol,
    nodePort,
    externallyAccessible,
    // Even with externalTrafficPolicy Local, an externally reachable port needs the cluster endpoint
    // set: in-cluster clients of its external addresses are short-circuited to it.
    usesClusterEndpoints: !shared.internalPolicyLocal || externallyAccessible,
    usesLocalEndpoints: shared.internalPolicyLocal || (shared.externalPolicyLocal && externallyAccessible),
  };
}

/** The deprecated annotation wins over the current one when both are present, as upstream reads them. */
function hintsAnnotation(svc: V1Service): string {
  const annotations = svc.metadata?.annotations;
  if (annotations === undefined || annotations === null) return '';
  const deprecated = annotations[ANNOTATION_TOPOLOGY_AWARE_HINTS];
  if (typeof deprecated === 'string') return deprecated;
  const mode = annotations[ANNOTATION_TOPOLOGY_MODE];
  return typeof mode === 'string' ? mode : '';
}

/** The API server defaults an omitted protocol to TCP. */
function portProtocol(value: unknown): Protocol | undefined {
  if (value === undefined || value === null || value === '') return 'TCP';
  return isProtocol(value) ? value : undefined;
}
