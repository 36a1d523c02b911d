/*
 * `kube-proxy explain` text output: the ServiceExplanation as an operator reads it, port by port,
 * then the kernel's objects for the Service and the differences, when the caller has them.
 */
import type { KernelObject } from '../../contracts/packet-trace.js';
import type { AnsweringAddress, PortExplanation, ServiceExplanation, TrafficClassExplanation } from './service-explanation.js';

const KIND_WORDS: Readonly<Record<AnsweringAddress['kind'], string>> = {
  clusterIP: 'cluster IP',
  externalIP: 'external IP',
  loadBalancerIP: 'load-balancer IP',
  nodePort: 'NodePort',
};

function addressLine(a: AnsweringAddress): string {
  let line = `    ${a.trafficClass.padEnd(8)} ${KIND_WORDS[a.kind].padEnd(16)} ${a.address}`;
  if (a.ipMode !== undefined) line += ` (ipMode ${a.ipMode})`;
  if (!a.programmed) line += ' — not programmed';
  if (a.note !== undefined) line += `: ${a.note}`;
  return line;
}

function classLines(tc: TrafficClassExplanation): string[] {
  const field = tc.trafficClass === 'internal' ? 'internalTrafficPolicy' : 'externalTrafficPolicy';
  if (!tc.applies) return [`  ${tc.trafficClass} traffic: none (${tc.masquerade.reasons.join('; ')})`];
  const title = `  ${tc.trafficClass} traffic (${field} ${tc.policy})`;
  const count = tc.endpoints.length === 1 ? '1 endpoint' : `${tc.endpoints.length} endpoints`;
  const lines = [`${title}: ${count}`];
  if (tc.topology !== '') lines.push(`    topology: ${tc.topology} (from the EndpointSlice hints)`);
  if (tc.terminatingFallback) lines.push('    no endpoint is ready: serving terminating endpoints are used');
  for (const ep of tc.endpoints) lines.push(`    -> ${ep}`);
  for (const x of tc.excluded) lines.push(`    left out ${x.endpoint}${x.nodeName === '' ? '' : ` (${x.nodeName})`}: ${x.detail}`);
  if (tc.shortCircuitEndpoints.length > 0) {
    lines.push(`    the node's own traffic goes to the cluster endpoints: ${tc.shortCircuitEndpoints.join(', ')}`);
  }
  if (tc.noEndpoints !== null) lines.push(`    no usable endpoint: ${tc.noEndpoints.verdict}, ${tc.noEndpoints.reason}`);
  lines.push(`    masquerade (${tc.masquerade.when}): ${tc.masquerade.reasons.join('; ')}`);
  return lines;
}

function portLines(port: PortExplanation): string[] {
  const lines = [`Port ${port.servicePort} ${port.protocol} ${port.port} (${port.family})`, '  answers on:'];
  for (const a of port.addresses) lines.push(addressLine(a));
  if (port.nodePort.nodePort !== 0) lines.push(`  NodePort ${port.nodePort.nodePort}: ${port.nodePort.reason}`);
  for (const tc of port.trafficClasses) lines.push(...classLines(tc));
  if (port.sourceRanges.ranges.length > 0 || port.sourceRanges.enforced) lines.push(`  source ranges: ${port.sourceRanges.reason}`);
  if (port.healthCheckNodePort !== 0) lines.push(`  health-check node port: ${port.healthCheckNodePort} (TCP, answers whether this node has a local endpoint)`);
  if (port.sessionAffinitySeconds !== 0) lines.push(`  session affinity: ClientIP, ${port.sessionAffinitySeconds}s`);
  return lines;
}

function objectLines(objects: readonly KernelObject[]): string[] {
  const lines = [objects.length === 0 ? 'Kernel objects: none' : 'Kernel objects:'];
  for (const o of objects) {
    let line = `  ${o.kind} ${o.name}: ${o.rules} ${o.rules === 1 ? 'rule' : 'rules'}`;
    if (o.servicePort !== undefined) line += ` [${o.servicePort}]`;
    if (o.endpoints !== undefined && o.endpoints.length > 0) line += ` -> ${o.endpoints.join(', ')}`;
    lines.push(line);
  }
  return lines;
}

/** The explanation as an operator reads it, with the kernel's objects and the differences when given. */
export function formatExplanation(explanation: ServiceExplanation, objects?: readonly KernelObject[], differences?: readonly string[]): string {
  const mode = explanation.mode === '' ? 'default mode' : `${explanation.mode} mode`;
  const lines = [`Service ${explanation.service} (${explanation.type}) on node ${explanation.node}, ${mode}`, explanation.reason];
  for (const port of explanation.ports) lines.push('', ...portLines(port));
  if (explanation.notes.length > 0) lines.push('', 'Notes:', ...explanation.notes.map((n) => `  - ${n}`));
  if (objects !== undefined) lines.push('', ...objectLines(objects));
  if (differences !== undefined) {
    lines.push('', differences.length === 0 ? 'The kernel holds what the objects say.' : 'Differences from the kernel:');
    for (const d of differences) lines.push(`  - ${d}`);
  }
  return `${lines.join('\n')}\n`;
}
