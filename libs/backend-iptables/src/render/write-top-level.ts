/**
 * The fixed rules of kube-proxy's top-level chains, independent of any service: the masquerade
 * mark and its MASQUERADE in KUBE-POSTROUTING / KUBE-MARK-MASQ, kubelet's localnet guard in
 * KUBE-FIREWALL (localhost node ports only), and KUBE-FORWARD's INVALID drop and accepts.
 */
import { KUBE_CHAINS, NFACCT_COUNTERS } from './constants.js';
import type { LineSink } from './line-buffer.js';

const POSTROUTING = KUBE_CHAINS.POSTROUTING;
const MARK_MASQ = KUBE_CHAINS.MARK_MASQ;
const FORWARD = KUBE_CHAINS.FORWARD;
const KUBELET_FIREWALL = KUBE_CHAINS.KUBELET_FIREWALL;

/** Marked packets are masqueraded once (the mark is cleared first so re-traversal does not repeat it). */
export function writeMasqueradeChains(postrouting: LineSink, markMasq: LineSink, mark: string, randomFully: boolean): void {
  postrouting.write(`-A ${POSTROUTING} -m mark ! --mark ${mark}/${mark} -j RETURN`);
  postrouting.write(`-A ${POSTROUTING} -j MARK --xor-mark ${mark}`);
  postrouting.write(
    `-A ${POSTROUTING} -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE` + (randomFully ? ' --random-fully' : ''),
  );
  markMasq.write(`-A ${MARK_MASQ} -j MARK --or-mark ${mark}`);
}

/** Mitigation for the route_localnet security hole (kubelet writes an identical rule). */
export function writeKubeletFirewall(sink: LineSink): void {
  sink.write(
    `-A ${KUBELET_FIREWALL} -m comment --comment "block incoming localnet connections" -d 127.0.0.0/8 ! -s 127.0.0.0/8 -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`,
  );
}

/** KUBE-FORWARD: drop INVALID packets (unless nf_conntrack_tcp_be_liberal), accept marked and established traffic. */
export function writeForwardRules(sink: LineSink, mark: string, dropInvalid: boolean, countInvalid: boolean): void {
  if (dropInvalid) {
    sink.write(
      countInvalid
        ? `-A ${FORWARD} -m conntrack --ctstate INVALID -m nfacct --nfacct-name ${NFACCT_COUNTERS.CT_STATE_INVALID_DROPPED} -j DROP`
        : `-A ${FORWARD} -m conntrack --ctstate INVALID -j DROP`,
    );
  }
  sink.write(`-A ${FORWARD} -m comment --comment "kubernetes forwarding rules" -m mark --mark ${mark}/${mark} -j ACCEPT`);
  sink.write(`-A ${FORWARD} -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
}
