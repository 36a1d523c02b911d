/**
 * What one service port asks of the localhost NodePort listeners, from the plan the nftables
 * proxier computes for its rules anyway (core's planServicePort): the endpoints external traffic
 * may use, so externalTrafficPolicy: Local means this node's endpoints only, and the topology and
 * readiness choices are core's, made once.
 */
import { endpointSetOf, type ServicePortPlan } from '@kube-proxy/core';
import type { ProxyTarget } from '@kube-proxy/userspace-proxy';

export interface LocalhostNodePort {
  /** The node port, served on 127.0.0.1 or ::1. */
  readonly nodePort: number;
  /** Endpoints in round-robin order (sorted by key); empty: no listener, connections are refused. */
  readonly endpoints: readonly ProxyTarget[];
  /** ClientIP affinity in seconds (0: none). Every client is the loopback address, so it pins all of them. */
  readonly affinitySeconds: number;
}

/** The listener a service port wants, or null (no NodePort, or not TCP: those are rejected in nft). */
export function localhostNodePortOf(plan: ServicePortPlan): LocalhostNodePort | null {
  const svc = plan.service;
  if (svc.protocol !== 'TCP' || svc.nodePort <= 0) return null;
  const endpoints = plan.externalAccepted ? endpointSetOf(plan, plan.externalEndpoints) : [];
  return {
    nodePort: svc.nodePort,
    endpoints: endpoints.map((e) => ({ ip: e.ip, port: e.port, key: e.key })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    affinitySeconds: plan.sessionAffinity ? plan.affinitySeconds : 0,
  };
}
