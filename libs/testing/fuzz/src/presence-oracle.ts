/**
 * What must be in a payload, worked out from the accepted objects alone (not from core's model): a
 * valid Service port of the proxier's family with at least one usable endpoint (ready, or serving
 * and terminating; on this node when internalTrafficPolicy is Local) in an accepted EndpointSlice of
 * the same port name and protocol must get its ClusterIP rule in nat KUBE-SERVICES, jumping to its
 * KUBE-SVC/KUBE-SVL chain, and that chain must jump to an endpoint chain.
 */
import type { IPFamily, V1EndpointSlice, V1Service } from '@kube-proxy/core';
import { FUZZ_NODE_NAME } from './endpoint-slice-arbitrary.js';
import type { PipelineRun } from './provider-pipeline.js';

export interface ExpectedServicePort {
  /** `namespace/name:port` as in the rule comments. */
  readonly servicePort: string;
  readonly clusterIP: string;
  readonly port: number;
  readonly protocol: string;
}

const LABEL_SERVICE_NAME = 'kubernetes.io/service-name';

function clusterIPOf(svc: V1Service, family: IPFamily): string | undefined {
  const ips = svc.spec?.clusterIPs ?? (svc.spec?.clusterIP ? [svc.spec.clusterIP] : []);
  return ips.find((ip) => ip !== 'None' && ip.includes(':') === (family === 'IPv6'));
}

/** The Service ports of `family` that must be present in the payload of `run`. */
export function expectedServicePorts(run: PipelineRun, family: IPFamily): ExpectedServicePort[] {
  const slices = run.slices.filter((s) => s.errors.length === 0).map((s) => s.input.object as V1EndpointSlice);
  const out: ExpectedServicePort[] = [];
  for (const verdict of run.services) {
    if (verdict.errors.length > 0) continue;
    const svc = verdict.input.object as V1Service;
    if (svc.spec?.type === 'ExternalName') continue;
    const clusterIP = clusterIPOf(svc, family);
    if (clusterIP === undefined) continue;
    const ns = svc.metadata?.namespace ?? '';
    const name = svc.metadata?.name ?? '';
    const internalLocal = svc.spec?.internalTrafficPolicy === 'Local';
    const own = slices.filter((s) => s.addressType === family && s.metadata?.namespace === ns && s.metadata?.labels?.[LABEL_SERVICE_NAME] === name);
    for (const port of svc.spec?.ports ?? []) {
      const portName = port.name ?? '';
      const protocol = port.protocol ?? 'TCP';
      const endpoints = own.flatMap((s) => ((s.ports ?? []).some((p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP') === protocol) ? s.endpoints : []));
      const candidates = endpoints.filter((ep) => !internalLocal || ep.nodeName === FUZZ_NODE_NAME);
      const usable = candidates.some(
        (ep) => ep.conditions?.ready !== false || (ep.conditions?.serving !== false && ep.conditions?.terminating === true),
      );
      if (usable) out.push({ servicePort: `${ns}/${name}${portName === '' ? '' : `:${portName}`}`, clusterIP, port: port.port, protocol });
    }
  }
  return out;
}

/** Why `expected` is not rendered in `payload`, or undefined when it is. */
export function missingFromPayload(payload: string, expected: ExpectedServicePort): string | undefined {
  const proto = expected.protocol.toLowerCase();
  const nat = payload.slice(payload.indexOf('*nat\n'));
  const rule = new RegExp(
    `^-A KUBE-SERVICES .*-m ${proto} -p ${proto} -d ${expected.clusterIP.replace(/[.]/g, '\\.')} --dport ${expected.port} -j (KUBE-SV[CL]-[A-Z0-9]{16})$`,
    'm',
  ).exec(nat);
  if (rule === null) return `no ClusterIP rule for ${expected.servicePort} (${expected.clusterIP}:${expected.port}/${expected.protocol}) in nat KUBE-SERVICES`;
  const chain = rule[1];
  if (!nat.includes(`\n:${chain} - [0:0]\n`)) return `${chain} of ${expected.servicePort} is not declared`;
  if (!new RegExp(`^-A ${chain} .*-j KUBE-SEP-[A-Z0-9]{16}$`, 'm').test(nat)) return `${chain} of ${expected.servicePort} jumps to no endpoint chain`;
  return undefined;
}
