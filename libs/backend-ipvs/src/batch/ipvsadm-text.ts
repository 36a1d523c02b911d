/**
 * ipvsadm lines in exactly the notation `ipvsadm --save -n` prints (ipvsadm.c's FMT_RULE output),
 * so a restore batch and a later `--save -n` read-back compare line for line:
 *   -A -t 10.96.0.1:80 -s rr [-p 10800] [-b mh-port]
 *   -a -t 10.96.0.1:80 -r 10.244.1.5:8080 -m -w 1
 * -t TCP, -u UDP, --sctp-service SCTP; IPv6 addresses in brackets. `-E` / `-D` / `-e` / `-d` are the
 * edit and delete forms `ipvsadm --restore` accepts with the same service and server notation.
 * The option order (`-p` before `-b`) is what a real kernel's `ipvsadm --save -n` printed in the
 * QEMU round trip (apps/proxy/e2e/ipvs-vm.e2e.spec.ts); `-b` first was accepted but read back swapped.
 */
import type { Protocol } from '@kube-proxy/core';
import type { RealServer, VirtualServer } from '../state/ipvs-state.js';

const SERVICE_OPTION: Record<Protocol, string> = { TCP: '-t', UDP: '-u', SCTP: '--sctp-service' };

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

/** `-t 10.96.0.1:80` (the virtual service argument pair). */
export function serviceSpec(vs: Pick<VirtualServer, 'protocol' | 'address' | 'port'>): string {
  return `${SERVICE_OPTION[vs.protocol]} ${hostPort(vs.address, vs.port)}`;
}

function serviceOptions(vs: VirtualServer): string {
  let s = ` -s ${vs.scheduler}`;
  if (vs.persistenceTimeout > 0) s += ` -p ${vs.persistenceTimeout}`;
  if (vs.flags.length > 0) s += ` -b ${vs.flags.join(',')}`;
  return s;
}

/** `-A …`: add a virtual server. */
export function addServiceLine(vs: VirtualServer): string {
  return `-A ${serviceSpec(vs)}${serviceOptions(vs)}`;
}

/** `-E …`: edit a virtual server's scheduler, flags or persistence. */
export function editServiceLine(vs: VirtualServer): string {
  return `-E ${serviceSpec(vs)}${serviceOptions(vs)}`;
}

/** `-D …`: delete a virtual server and its real servers. */
export function deleteServiceLine(vs: VirtualServer): string {
  return `-D ${serviceSpec(vs)}`;
}

/** `-a …`: add a real server (masquerading). */
export function addServerLine(vs: VirtualServer, rs: RealServer): string {
  return `-a ${serviceSpec(vs)} -r ${hostPort(rs.address, rs.port)} -m -w ${rs.weight}`;
}

/** `-e …`: edit a real server's weight. */
export function editServerLine(vs: VirtualServer, rs: RealServer): string {
  return `-e ${serviceSpec(vs)} -r ${hostPort(rs.address, rs.port)} -m -w ${rs.weight}`;
}

/** `-d …`: delete a real server. */
export function deleteServerLine(vs: VirtualServer, rs: RealServer): string {
  return `-d ${serviceSpec(vs)} -r ${hostPort(rs.address, rs.port)}`;
}
