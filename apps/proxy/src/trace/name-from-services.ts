import { canonicalIP, formatHostPort, type TraceStep, type V1Service } from '@kube-proxy/core';
import type { TraceAnswer } from './run-trace.js';

/*
 * Some rules carry no Service names (IPVS virtual servers and ipsets have no comments, upstream's or
 * ours). When the tracer could not name the Service port but the run holds the Service objects, the
 * destination names it: the port whose cluster IP, external IP or load-balancer IP and port (or NodePort
 * on a node address) the packet was sent to.
 */

function servicePortAt(svc: V1Service, ip: string, port: number, protocol: string, nodeAddresses: ReadonlySet<string>): string | undefined {
  const spec = svc.spec;
  if (!spec) return undefined;
  const vips = new Set<string>();
  for (const a of [...(spec.clusterIPs ?? []), spec.clusterIP ?? '', ...(spec.externalIPs ?? [])]) vips.add(canonicalIP(a) ?? a);
  for (const ingress of svc.status?.loadBalancer?.ingress ?? []) if (ingress.ip) vips.add(canonicalIP(ingress.ip) ?? ingress.ip);
  for (const p of spec.ports ?? []) {
    if ((p.protocol ?? 'TCP') !== protocol) continue;
    const atVIP = vips.has(ip) && p.port === port;
    const atNodePort = p.nodePort !== undefined && p.nodePort === port && nodeAddresses.has(ip);
    if (atVIP || atNodePort) return `${svc.metadata?.namespace ?? ''}/${svc.metadata?.name ?? ''}:${p.name ?? ''}`;
  }
  return undefined;
}

/** `answer`, with `service` named from `services` when the rules did not name it. */
export function nameFromServices(answer: TraceAnswer, services: readonly V1Service[], nodeAddresses: readonly string[]): TraceAnswer {
  const { trace, packet } = answer;
  if (trace.service !== null || trace.verdict === 'ACCEPT') return answer;
  const local = new Set(nodeAddresses);
  for (const svc of services) {
    const named = servicePortAt(svc, packet.destIP, packet.destPort, packet.protocol, local);
    if (named === undefined) continue;
    const step: TraceStep = {
      where: 'Service objects',
      rule: `${named} at ${packet.protocol} ${formatHostPort(packet.destIP, packet.destPort)}`,
      service: named,
      note: 'the rules name no Service here; the Service objects of this run do',
    };
    return { ...answer, trace: { ...trace, service: named, path: [...trace.path, step] } };
  }
  return answer;
}
