import type { ModeTracer } from '@kube-proxy/core';
import { traceIptables } from '@kube-proxy/netfilter-iptables';
import { iptablesSnapshotFromDryRun } from './dry-run-snapshot.js';
import { asIptablesSnapshot } from './iptables-snapshot.js';
import { iptablesObjectsOf } from './objects-of.js';
import { packetTraceOf } from './packet-trace-of.js';
import { readLiveIptables } from './read-live.js';

/**
 * `kube-proxy trace` / `explain` for the iptables mode: over our --dry-run output, or over the rules
 * in this host's kernel, including those upstream's kube-proxy wrote (its rule comments name the
 * Service ports).
 */
export const iptablesTracer: ModeTracer = {
  mode: 'iptables',
  readLive: readLiveIptables,
  fromDryRun: iptablesSnapshotFromDryRun,
  trace(snapshot, packet, node) {
    const { tables } = asIptablesSnapshot(snapshot);
    return packetTraceOf(traceIptables(tables, packet, node), tables, packet, node);
  },
  objectsOf(snapshot, service) {
    return iptablesObjectsOf(asIptablesSnapshot(snapshot).tables, service);
  },
};
