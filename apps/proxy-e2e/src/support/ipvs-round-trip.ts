/**
 * What the IPVS VM round trip compares: the services it loads (built into desired states by the
 * backend's own buildDesiredIpvsState) and the normalisation of `ipvsadm --save -n` and
 * `ipset save` text. Normalised, and only this:
 *  - ipvsadm: each `-A` line with the `-a` lines that follow it is one group; groups are sorted by
 *    their `-A` line and `-a` lines within a group are sorted (the kernel lists services in hash
 *    bucket order and a service's real servers in its own list order);
 *  - ipset: the ` bucketsize N initval 0xHEX` that ipset 7.x's save appends to a hash set's create
 *    line is removed (kernel-chosen), and `add` lines within a set are sorted (hash order); the
 *    sets themselves keep the order save prints them in (creation order).
 */
import type { Endpoint, IPFamily, ServicePort } from '@kube-proxy/core';
import { joinHostPort, nullLogger, servicePortsFromService } from '@kube-proxy/core';
import { buildDesiredIpvsState, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';

type V1Service = Parameters<typeof servicePortsFromService>[0];

export const NODE_NAME = 'ipvs-vm-node';

export function endpoint(ip: string, port: number): Endpoint {
  return {
    ip, port, key: joinHostPort(ip, port), ready: true, serving: true, terminating: false, isLocal: false,
    nodeName: 'other-node', zone: '', zoneHints: null, nodeHints: null,
  };
}

/** A service map / endpoints map for one family, and the state buildDesiredIpvsState makes of it. */
export class RoundTripCluster {
  readonly serviceMap = new Map<string, ServicePort>();
  readonly endpointsMap = new Map<string, Endpoint[]>();
  constructor(readonly family: IPFamily) {}

  service(svc: V1Service, endpoints: Record<string, readonly Endpoint[]>): this {
    for (const p of servicePortsFromService(svc, this.family, nullLogger)) this.serviceMap.set(p.name.key, p);
    for (const [key, eps] of Object.entries(endpoints)) this.endpointsMap.set(key, [...eps].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
    return this;
  }

  state(scheduler: string): DesiredIpvsState {
    return buildDesiredIpvsState(this.serviceMap, this.endpointsMap, {
      family: this.family,
      nodeName: NODE_NAME,
      nodeLabels: {},
      nodeIP: null,
      scheduler,
      nodePortAddresses: { all: true },
      localAddresses: this.family === 'IPv4' ? ['192.168.0.2'] : ['2001:db8::2'],
    });
  }
}

function lines(text: string): string[] {
  return text.split('\n').filter((l) => l.length > 0);
}

export function normaliseIpvsadmSave(text: string): string {
  const groups: string[][] = [];
  for (const l of lines(text)) {
    if (l.startsWith('-A ')) groups.push([l]);
    else if (groups.length > 0) groups[groups.length - 1].push(l);
    else groups.push([l]);
  }
  return groups
    .map((g) => [g[0], ...g.slice(1).sort()])
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map((g) => g.join('\n') + '\n')
    .join('');
}

export function normaliseIpsetSave(text: string): string {
  const groups: string[][] = [];
  for (const l of lines(text)) {
    if (l.startsWith('create ')) groups.push([l.replace(/ bucketsize \d+ initval 0x[0-9a-f]+$/, '')]);
    else if (groups.length > 0) groups[groups.length - 1].push(l);
    else groups.push([l]);
  }
  return groups.map((g) => [g[0], ...g.slice(1).sort()].join('\n') + '\n').join('');
}
