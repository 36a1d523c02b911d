/**
 * Attributes a heap snapshot's bytes to the proxy's components: every live object is charged to the
 * nearest object above it in the dominator tree whose class names a component (the informer caches,
 * core's trackers and maps, the iptables backend's caches and buffers, the dry-run table model…), so a
 * component's figure is what would be freed if that component let go of it. What no component
 * dominates (shared between roots, module code, the runtime) is reported by V8 node type. It also
 * counts duplicated strings: bytes that interning would save.
 */
import { dominators, readHeapSnapshot, type HeapGraph } from './heap-snapshot.js';

/** Class name → component label. The innermost match wins (a tracker inside ProxyState is the tracker's). */
export const COMPONENTS: ReadonlyArray<readonly [label: string, classes: readonly string[]]> = [
  ['api source: informer caches (ListWatch)', ['ListWatch', 'ResourceInformer']],
  ['manifests source: stored objects', ['ManifestSource']],
  ['core: endpoint-slice cache / tracker', ['EndpointSliceCache', 'EndpointsChangeTracker']],
  ['core: service tracker', ['ServiceChangeTracker']],
  ['core: ProxyState maps', ['ProxyState']],
  ['iptables: chain-name cache', ['ChainNameCache']],
  ['iptables: applied-chain memo', ['AppliedChainMemo']],
  ['iptables: render buffers', ['RenderBuffers', 'LineBuffer']],
  ['iptables: proxier (other)', ['IptablesProxier']],
  ['dry-run: in-memory tables', ['InMemoryTables']],
  ['nftables: committed table state (TableSync)', ['TableSync']],
  ['nftables: name cache', ['NameCache']],
  ['nftables: proxier (renders, other)', ['NftablesProxier']],
  ['ipvs: per-service-port state index', ['IpvsStateIndex']],
  ['ipvs: applied view (last sync)', ['AppliedIpvs']],
  ['ipvs: proxier (other)', ['IpvsProxier']],
  ['dry-run: in-memory IPVS kernel', ['MemoryIpvsKernel']],
];

export interface ComponentBytes {
  readonly label: string;
  readonly bytes: number;
  /** Of `bytes`, how much is string payload (flat, sliced, concatenated). */
  readonly stringBytes: number;
  readonly objects: number;
}

export interface HeapBreakdown {
  readonly totalBytes: number;
  readonly components: readonly ComponentBytes[];
  /** Not dominated by any component, by V8 node type ("string", "code", "object:Foo"…), largest first. */
  readonly unowned: readonly ComponentBytes[];
  readonly strings: { readonly bytes: number; readonly count: number; readonly duplicateBytes: number };
}

const STRING_TYPES = new Set(['string', 'concatenated string', 'sliced string']);

export function breakdown(g: HeapGraph, idom: Int32Array): HeapBreakdown {
  const classToComponent = new Map<string, number>();
  COMPONENTS.forEach(([, classes], i) => classes.forEach((c) => classToComponent.set(c, i)));
  const objectType = g.typeNames.indexOf('object');
  const isString = g.typeNames.map((t) => STRING_TYPES.has(t));

  // component of each node: its own class if it names one, else its dominator's. Resolve along the
  // dominator chain with memo (-2 = not yet known, -1 = no component).
  const comp = new Int32Array(g.nodeCount).fill(-2);
  comp[0] = -1;
  const own = (v: number): number => (g.nodeType[v] === objectType ? (classToComponent.get(g.strings[g.nodeName[v]!]!) ?? -1) : -1);
  const path: number[] = [];
  for (let v = 0; v < g.nodeCount; v++) {
    if (idom[v]! < 0 || comp[v] !== -2) continue;
    let x = v;
    while (comp[x] === -2) {
      const o = own(x);
      if (o >= 0) {
        comp[x] = o;
        break;
      }
      path.push(x);
      x = idom[x]!;
    }
    const c = comp[x]!;
    for (const p of path) comp[p] = c;
    path.length = 0;
  }

  const sums = COMPONENTS.map(([label]) => ({ label, bytes: 0, stringBytes: 0, objects: 0 }));
  const unowned = new Map<string, { label: string; bytes: number; stringBytes: number; objects: number }>();
  const stringGroups = new Map<number, { count: number; size: number }>();
  let total = 0;
  let stringBytes = 0;
  let stringCount = 0;
  // From 1: node 0 is the snapshot's synthetic root.
  for (let v = 1; v < g.nodeCount; v++) {
    if (idom[v]! < 0) continue;
    const size = g.selfSize[v]!;
    total += size;
    const str = isString[g.nodeType[v]!]!;
    if (str) {
      stringBytes += size;
      stringCount++;
      if (g.typeNames[g.nodeType[v]!] === 'string') {
        const grp = stringGroups.get(g.nodeName[v]!);
        if (grp) grp.count++;
        else stringGroups.set(g.nodeName[v]!, { count: 1, size });
      }
    }
    let target;
    const c = comp[v]!;
    if (c >= 0) target = sums[c]!;
    else {
      const type = g.typeNames[g.nodeType[v]!]!;
      const key = type === 'object' ? `object:${g.strings[g.nodeName[v]!]}` : type;
      target = unowned.get(key);
      if (!target) unowned.set(key, (target = { label: key, bytes: 0, stringBytes: 0, objects: 0 }));
    }
    target.bytes += size;
    target.objects++;
    if (str) target.stringBytes += size;
  }
  let duplicateBytes = 0;
  for (const { count, size } of stringGroups.values()) duplicateBytes += (count - 1) * size;
  return {
    totalBytes: total,
    components: sums,
    unowned: [...unowned.values()].sort((a, b) => b.bytes - a.bytes),
    strings: { bytes: stringBytes, count: stringCount, duplicateBytes },
  };
}

export function breakdownOfFile(file: string): HeapBreakdown {
  const g = readHeapSnapshot(file);
  return breakdown(g, dominators(g));
}

const mb = (b: number): string => (b / 1048576).toFixed(1);

/** A plain-text table: component, retained MB, of which strings, objects; then the top unowned types. */
export function formatBreakdown(b: HeapBreakdown, unownedRows = 8): string {
  const rows: string[] = [];
  const line = (label: string, bytes: number, strings: number, objects: number) =>
    rows.push(`  ${label.padEnd(44)} ${mb(bytes).padStart(8)} MB ${mb(strings).padStart(8)} MB ${String(objects).padStart(10)}`);
  rows.push(`  ${'component'.padEnd(44)} ${'retained'.padStart(11)} ${'strings'.padStart(11)} ${'objects'.padStart(10)}`);
  for (const c of b.components) if (c.objects > 0) line(c.label, c.bytes, c.stringBytes, c.objects);
  const rest = b.unowned.slice(unownedRows);
  for (const u of b.unowned.slice(0, unownedRows)) line(`unowned: ${u.label}`.slice(0, 44), u.bytes, u.stringBytes, u.objects);
  line('unowned: the rest', rest.reduce((s, u) => s + u.bytes, 0), rest.reduce((s, u) => s + u.stringBytes, 0), rest.reduce((s, u) => s + u.objects, 0));
  line('total (live heap in the snapshot)', b.totalBytes, b.strings.bytes, b.components.reduce((s, c) => s + c.objects, 0) + b.unowned.reduce((s, u) => s + u.objects, 0));
  rows.push(`  strings: ${b.strings.count} (${mb(b.strings.bytes)} MB), of which duplicates of an equal flat string: ${mb(b.strings.duplicateBytes)} MB`);
  return rows.join('\n');
}
