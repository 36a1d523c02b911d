/*
 * `explain --live`: what the Service's objects say the kernel should hold against what a mode's
 * tracer found there (its objectsOf), endpoint by endpoint, in operator words.
 */
import type { KernelObject } from '../../contracts/packet-trace.js';
import { ipFamilyOf } from '../model/ip.js';
import type { IPFamily } from '../model/protocol.js';
import { formatHostPort, parseHostPort } from '../trace/trace-words.js';
import type { EndpointFacts, ExcludedEndpoint, PortExplanation, ServiceExplanation } from './service-explanation.js';

export interface CompareOptions {
  /** The families the kernel objects were read for (default: every family of the explanation). */
  readonly families?: readonly IPFamily[];
}

/** Every endpoint some class of the port reaches: each must have its own rules in the kernel. */
function expectedOf(port: PortExplanation): Set<string> {
  const out = new Set<string>();
  for (const tc of port.trafficClasses) {
    for (const ep of tc.endpoints) out.add(ep);
    for (const ep of tc.shortCircuitEndpoints) out.add(ep);
  }
  return out;
}

function familyOfEndpoint(endpoint: string): IPFamily | undefined {
  const hp = parseHostPort(endpoint);
  return hp === null ? undefined : ipFamilyOf(hp.ip);
}

/** Kernel endpoints: per Service port where the object names it, the rest pooled for the Service. */
interface KernelEndpoints {
  readonly byPort: Map<string, Set<string>>;
  readonly pooled: Set<string>;
  /** Per Service port, the objects that send it to endpoints (`chain nat/KUBE-SVC-…`), to name them. */
  readonly objectNames: Map<string, string[]>;
}

function kernelEndpoints(objects: readonly KernelObject[]): KernelEndpoints {
  const byPort = new Map<string, Set<string>>();
  const pooled = new Set<string>();
  const objectNames = new Map<string, string[]>();
  for (const obj of objects) {
    if (obj.servicePort !== undefined && (obj.endpoints?.length ?? 0) > 0) {
      const names = objectNames.get(obj.servicePort) ?? [];
      names.push(`${obj.kind} ${obj.name}`);
      objectNames.set(obj.servicePort, names);
    }
    for (const ep of obj.endpoints ?? []) {
      // Respelled as trace output spells it, whatever the tool printed.
      const hp = parseHostPort(ep);
      const key = hp === null ? ep : formatHostPort(hp.ip, hp.port);
      if (obj.servicePort === undefined) {
        pooled.add(key);
      } else {
        let set = byPort.get(obj.servicePort);
        if (set === undefined) byPort.set(obj.servicePort, (set = new Set()));
        set.add(key);
      }
    }
  }
  return { byPort, pooled, objectNames };
}

function condition(facts: EndpointFacts | undefined): string {
  if (facts === undefined || facts.ready) return 'ready';
  return facts.serving && facts.terminating ? 'serving (terminating)' : 'usable';
}

function missingFromKernel(ports: readonly PortExplanation[], kernel: KernelEndpoints): string[] {
  const out: string[] = [];
  for (const port of ports) {
    const attributed = kernel.byPort.get(port.servicePort);
    for (const ep of [...expectedOf(port)].sort()) {
      if (attributed?.has(ep) || kernel.pooled.has(ep)) continue;
      const facts = port.sliceEndpoints.find((f) => f.endpoint === ep);
      const names = kernel.objectNames.get(port.servicePort);
      const where = names === undefined ? '' : ` (${names.join(', ')})`;
      out.push(`endpoint ${ep} is ${condition(facts)} in the EndpointSlice but absent from the kernel's rules for ${port.servicePort}${where}`);
    }
  }
  return out;
}

/** The port a stray kernel endpoint most likely belongs to: the object's, one listing it, or one with its target port. */
function ownerOf(ep: string, servicePort: string | undefined, ports: readonly PortExplanation[], service: string): string {
  if (servicePort !== undefined) return servicePort;
  const listing = ports.find((p) => p.sliceEndpoints.some((f) => f.endpoint === ep));
  if (listing !== undefined) return listing.servicePort;
  const target = parseHostPort(ep)?.port;
  const byTarget = [...new Set(ports.filter((p) => p.sliceEndpoints.some((f) => f.port === target)).map((p) => p.servicePort))];
  return byTarget.length === 1 ? (byTarget[0] ?? service) : service;
}

function exclusionOf(ep: string, ports: readonly PortExplanation[], owner: string): ExcludedEndpoint | undefined {
  const candidates = ports.filter((p) => p.servicePort === owner || owner.indexOf(':') < 0);
  for (const port of candidates) {
    for (const tc of port.trafficClasses) {
      const found = tc.excluded.find((x) => x.endpoint === ep);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function strayInKernel(explanation: ServiceExplanation, ports: readonly PortExplanation[], kernel: KernelEndpoints, families: readonly IPFamily[]): string[] {
  const out: string[] = [];
  const expectedBy = new Map<string, Set<string>>();
  const all = new Set<string>();
  for (const port of ports) {
    const set = expectedOf(port);
    const merged = expectedBy.get(port.servicePort) ?? new Set<string>();
    for (const ep of set) {
      merged.add(ep);
      all.add(ep);
    }
    expectedBy.set(port.servicePort, merged);
  }
  const entries: [string | undefined, Set<string>][] = [...kernel.byPort.entries(), [undefined, kernel.pooled]];
  for (const [servicePort, set] of entries) {
    for (const ep of [...set].sort()) {
      const family = familyOfEndpoint(ep);
      if (family !== undefined && !families.includes(family)) continue;
      const expected = servicePort === undefined ? all : expectedBy.get(servicePort);
      if (expected?.has(ep)) continue;
      const owner = ownerOf(ep, servicePort, ports, explanation.service);
      const excluded = exclusionOf(ep, ports, owner);
      const why = excluded === undefined ? 'which no EndpointSlice lists' : `which the EndpointSlice lists but leaves out: ${excluded.detail}`;
      out.push(`the kernel sends ${owner} to ${ep}, ${why}`);
    }
  }
  return out;
}

/**
 * The differences between what the Service's objects say the kernel should hold (`explanation`) and
 * what it holds (`objects`, a mode tracer's objectsOf for the Service), in operator words; [] when
 * they agree. Only endpoints are compared (the contract's KernelObject carries no more meaning).
 */
export function compareWithKernel(explanation: ServiceExplanation, objects: readonly KernelObject[], options: CompareOptions = {}): string[] {
  const families = options.families ?? explanation.families;
  const ports = explanation.ports.filter((p) => families.includes(p.family));
  if (!explanation.proxied) {
    return objects.length === 0 ? [] : [`the kernel holds ${objects.length} object(s) for ${explanation.service}, which should have none: ${explanation.reason}`];
  }
  if (objects.length === 0) return ports.length === 0 ? [] : [`the kernel holds no rules for ${explanation.service} (${families.join(', ')})`];
  const kernel = kernelEndpoints(objects);
  const out = [...missingFromKernel(ports, kernel), ...strayInKernel(explanation, ports, kernel, families)];
  return [...new Set(out)];
}
