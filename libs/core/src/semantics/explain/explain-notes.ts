/*
 * The sentences that sum a Service up: why it is not proxied, or whether each port reaches an
 * endpoint; and a logger that keeps the warnings the proxiers would log as the explanation's notes.
 */
import type { V1Service } from '@kubernetes/client-node';
import type { Logger } from '../../host/logger.js';
import { nullLogger } from '../../host/logger.js';
import { hasClusterIP } from '../model/cluster-ip.js';
import type { IPFamily } from '../model/protocol.js';
import { serviceType } from '../model/service-policy.js';
import type { PortExplanation } from './service-explanation.js';

function fieldsOf(meta: Record<string, unknown> | undefined): string {
  if (meta === undefined) return '';
  const parts: string[] = [];
  for (const key of ['field', 'value', 'endpointSlice']) {
    const v = meta[key];
    if (v !== undefined) parts.push(`${key} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/** Forwards to `logger` and keeps each warning and error, once, in `notes`. */
export function notingLogger(logger: Logger | undefined, notes: string[]): Logger {
  const target = logger ?? nullLogger;
  const keep = (message: string, meta?: Record<string, unknown>): void => {
    const note = `${message}${fieldsOf(meta)}`;
    if (!notes.includes(note)) notes.push(note);
  };
  return {
    error: (message, meta) => {
      keep(message, meta);
      target.error(message, meta);
    },
    warn: (message, meta) => {
      keep(message, meta);
      target.warn(message, meta);
    },
    info: (message, meta) => target.info(message, meta),
    verbose: (message, meta) => target.verbose(message, meta),
    debug: (message, meta) => target.debug(message, meta),
    child: () => notingLogger(target, notes),
  };
}

/** Why a Service with no proxied port is not proxied, in one sentence. */
export function notProxiedReason(svc: V1Service, families: readonly IPFamily[]): string {
  const spec = svc.spec;
  if (serviceType(svc) === 'ExternalName') {
    return `ExternalName Service: DNS answers with ${spec?.externalName ?? 'its external name'}; kube-proxy programs nothing for it`;
  }
  if (spec?.clusterIP === 'None') return "headless Service (clusterIP None): DNS returns its endpoints' addresses; kube-proxy programs nothing for it";
  if (!hasClusterIP(svc)) return 'the Service has no cluster IP allocated; kube-proxy programs nothing for it';
  if (!Array.isArray(spec?.ports) || spec.ports.length === 0) return 'the Service has no ports; kube-proxy programs nothing for it';
  const has = Array.isArray(spec?.ipFamilies) && spec.ipFamilies.length > 0 ? spec.ipFamilies.join(', ') : 'its cluster IP family';
  return `the Service has no valid cluster IP or port of ${families.join(' or ')} (it has ${has}); this proxy programs nothing for it`;
}

/** One sentence for a proxied Service: every port reaches an endpoint, or which do not and why. */
export function proxiedSummary(service: string, ports: readonly PortExplanation[], node: string): string {
  const problems: string[] = [];
  for (const port of ports) {
    for (const tc of port.trafficClasses) {
      if (tc.applies && tc.noEndpoints !== null && !problems.includes(tc.noEndpoints.reason)) problems.push(tc.noEndpoints.reason);
    }
  }
  const families = [...new Set(ports.map((p) => p.family))].join(' and ');
  if (problems.length === 0) return `service ${service} is proxied on ${node} (${families}) and every port reaches an endpoint`;
  return `service ${service} is proxied on ${node} (${families}), but ${problems.join('; ')}`;
}

/** A note for each IP family the Service has but the proxy does not serve. */
export function unservedFamilyNotes(svc: V1Service, families: readonly IPFamily[]): string[] {
  const spec = svc.spec;
  const svcFamilies = Array.isArray(spec?.ipFamilies) ? spec.ipFamilies : [];
  const clusterIPs = Array.isArray(spec?.clusterIPs) ? spec.clusterIPs : [];
  const out: string[] = [];
  svcFamilies.forEach((family, i) => {
    if (families.includes(family as IPFamily)) return;
    const ip = clusterIPs[i];
    const what = typeof ip === 'string' && ip !== '' && ip !== 'None' ? `an ${family} cluster IP (${ip})` : `the ${family} family`;
    out.push(`the Service also has ${what}, which this proxy does not serve (it serves ${families.join(' and ')})`);
  });
  return out;
}
