/**
 * Reads a V8 `.heapsnapshot` file (as written by `v8.writeHeapSnapshot()` or `--heapsnapshot-signal`)
 * into typed arrays and computes each object's retained size through the dominator tree, so the memory
 * profile can say which part of the proxy holds the bytes. A 10k-service heap writes a ~350 MB file,
 * too big for one JSON.parse (V8's string limit is ~512 MB and the parse would need gigabytes), so the
 * numeric sections are scanned straight from the file's bytes and only the string table goes through
 * JSON.parse, one string at a time.
 */
import { readFileSync } from 'node:fs';

export interface HeapGraph {
  readonly nodeCount: number;
  /** Per node: index into `typeNames`. */
  readonly nodeType: Uint8Array;
  /** Per node: index into `strings` (a constructor name, a string's value, a closure's name, …). */
  readonly nodeName: Uint32Array;
  readonly selfSize: Float64Array;
  /** Node i's edges are firstEdge[i] .. firstEdge[i + 1] - 1. */
  readonly firstEdge: Uint32Array;
  readonly edgeType: Uint8Array;
  /** Per edge: a string index (property, context, shortcut…) or an element number (element, hidden). */
  readonly edgeName: Uint32Array;
  readonly edgeTo: Uint32Array;
  readonly typeNames: readonly string[];
  readonly edgeTypeNames: readonly string[];
  readonly strings: readonly string[];
}

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

const COMMA = 0x2c;
const CLOSE = 0x5d;

/** Parses the unsigned integers of the JSON array that starts at `from` (just after its '['). */
function scanNumbers(buf: Buffer, from: number, count: number, sink: (i: number, v: number) => void): number {
  let pos = from;
  for (let i = 0; i < count; i++) {
    let c = buf[pos]!;
    while (c < 0x30 || c > 0x39) c = buf[++pos]!; // whitespace, newlines, commas
    let v = 0;
    while (c >= 0x30 && c <= 0x39) {
      v = v * 10 + (c - 0x30);
      c = buf[++pos]!;
    }
    sink(i, v);
  }
  while (buf[pos] !== CLOSE) pos++;
  return pos + 1;
}

function sectionStart(buf: Buffer, key: string, from: number): number {
  const at = buf.indexOf(`"${key}":`, from, 'latin1');
  if (at < 0) throw new Error(`heap snapshot: no "${key}" section`);
  return buf.indexOf('[', at, 'latin1') + 1;
}

/** The JSON strings of the array starting at `from`, each decoded on its own. */
function scanStrings(buf: Buffer, from: number): string[] {
  const out: string[] = [];
  let pos = from;
  for (;;) {
    while (buf[pos] !== 0x22 && buf[pos] !== CLOSE) pos++;
    if (buf[pos] === CLOSE) return out;
    const start = pos++;
    for (;;) {
      const c = buf[pos]!;
      if (c === 0x5c) pos += 2;
      else if (c === 0x22) break;
      else pos++;
    }
    pos++;
    out.push(JSON.parse(buf.toString('utf8', start, pos)) as string);
    while (buf[pos] !== COMMA && buf[pos] !== CLOSE) pos++;
  }
}

export function readHeapSnapshot(file: string): HeapGraph {
  const buf = readFileSync(file);
  const metaAt = buf.indexOf('"meta":', 0, 'latin1');
  const metaStart = buf.indexOf('{', metaAt, 'latin1');
  // The meta object has no nested braces in strings; find its matching brace.
  let depth = 0;
  let metaEnd = metaStart;
  for (; metaEnd < buf.length; metaEnd++) {
    if (buf[metaEnd] === 0x7b) depth++;
    else if (buf[metaEnd] === 0x7d && --depth === 0) break;
  }
  const meta = JSON.parse(buf.toString('utf8', metaStart, metaEnd + 1)) as Meta;
  const header = buf.toString('latin1', metaEnd, metaEnd + 200);
  const nodeCount = Number(/"node_count":(\d+)/.exec(header)?.[1]);
  const edgeCount = Number(/"edge_count":(\d+)/.exec(header)?.[1]);
  if (!Number.isFinite(nodeCount) || !Number.isFinite(edgeCount)) throw new Error('heap snapshot: no node_count/edge_count');

  const nf = meta.node_fields.length;
  const fType = meta.node_fields.indexOf('type');
  const fName = meta.node_fields.indexOf('name');
  const fSelf = meta.node_fields.indexOf('self_size');
  const fEdges = meta.node_fields.indexOf('edge_count');
  const ef = meta.edge_fields.length;
  const eType = meta.edge_fields.indexOf('type');
  const eName = meta.edge_fields.indexOf('name_or_index');
  const eTo = meta.edge_fields.indexOf('to_node');

  const nodeType = new Uint8Array(nodeCount);
  const nodeName = new Uint32Array(nodeCount);
  const selfSize = new Float64Array(nodeCount);
  const edgesOf = new Uint32Array(nodeCount);
  let pos = scanNumbers(buf, sectionStart(buf, 'nodes', metaEnd), nodeCount * nf, (i, v) => {
    const node = (i / nf) | 0;
    const f = i - node * nf;
    if (f === fType) nodeType[node] = v;
    else if (f === fName) nodeName[node] = v;
    else if (f === fSelf) selfSize[node] = v;
    else if (f === fEdges) edgesOf[node] = v;
  });
  const firstEdge = new Uint32Array(nodeCount + 1);
  for (let i = 0; i < nodeCount; i++) firstEdge[i + 1] = firstEdge[i]! + edgesOf[i]!;
  const edgeType = new Uint8Array(edgeCount);
  const edgeName = new Uint32Array(edgeCount);
  const edgeTo = new Uint32Array(edgeCount);
  pos = scanNumbers(buf, sectionStart(buf, 'edges', pos), edgeCount * ef, (i, v) => {
    const edge = (i / ef) | 0;
    const f = i - edge * ef;
    if (f === eType) edgeType[edge] = v;
    else if (f === eName) edgeName[edge] = v;
    else if (f === eTo) edgeTo[edge] = v / nf;
  });
  const strings = scanStrings(buf, sectionStart(buf, 'strings', pos));
  return {
    nodeCount,
    nodeType,
    nodeName,
    selfSize,
    firstEdge,
    edgeType,
    edgeName,
    edgeTo,
    typeNames: meta.node_types[0],
    edgeTypeNames: meta.edge_types[0],
    strings,
  };
}

/**
 * Immediate dominators (Cooper, Harvey & Kennedy's iterative algorithm over a reverse post-order),
 * from node 0, the snapshot's synthetic root; weak edges do not retain. Unreachable nodes get -1.
 */
export function dominators(g: HeapGraph): Int32Array {
  const weak = g.edgeTypeNames.indexOf('weak');
  const n = g.nodeCount;
  // Iterative DFS for the post-order.
  const order = new Int32Array(n).fill(-1); // post-order number per node
  const byOrder = new Uint32Array(n);
  const stackNode = new Uint32Array(n);
  const stackEdge = new Uint32Array(n);
  const visited = new Uint8Array(n);
  let sp = 0;
  let count = 0;
  stackNode[0] = 0;
  stackEdge[0] = g.firstEdge[0]!;
  visited[0] = 1;
  sp = 1;
  while (sp > 0) {
    const v = stackNode[sp - 1]!;
    const e = stackEdge[sp - 1]!;
    if (e < g.firstEdge[v + 1]!) {
      stackEdge[sp - 1] = e + 1;
      if (g.edgeType[e] === weak) continue;
      const w = g.edgeTo[e]!;
      if (!visited[w]) {
        visited[w] = 1;
        stackNode[sp] = w;
        stackEdge[sp] = g.firstEdge[w]!;
        sp++;
      }
    } else {
      order[v] = count;
      byOrder[count++] = v;
      sp--;
    }
  }
  // Predecessors (CSR) among reachable nodes.
  const predCount = new Uint32Array(n + 1);
  for (let v = 0; v < n; v++) {
    if (order[v]! < 0) continue;
    for (let e = g.firstEdge[v]!; e < g.firstEdge[v + 1]!; e++) if (g.edgeType[e] !== weak) predCount[g.edgeTo[e]! + 1]!++;
  }
  for (let i = 0; i < n; i++) predCount[i + 1]! += predCount[i]!;
  const preds = new Uint32Array(predCount[n]!);
  const fill = predCount.slice(0, n);
  for (let v = 0; v < n; v++) {
    if (order[v]! < 0) continue;
    for (let e = g.firstEdge[v]!; e < g.firstEdge[v + 1]!; e++) if (g.edgeType[e] !== weak) preds[fill[g.edgeTo[e]!]!++] = v;
  }
  // idom in post-order numbers; root = count - 1.
  const root = count - 1;
  const idom = new Int32Array(count).fill(-1);
  idom[root] = root;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (a < b) a = idom[a]!;
      while (b < a) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let o = root - 1; o >= 0; o--) {
      const v = byOrder[o]!;
      let best = -1;
      for (let p = predCount[v]!; p < predCount[v + 1]!; p++) {
        const po = order[preds[p]!]!;
        if (idom[po] === -1) continue;
        best = best === -1 ? po : intersect(po, best);
      }
      if (best !== -1 && idom[o] !== best) {
        idom[o] = best;
        changed = true;
      }
    }
  }
  const out = new Int32Array(n).fill(-1);
  for (let o = 0; o < count; o++) out[byOrder[o]!] = byOrder[idom[o]!]!;
  out[0] = 0;
  return out;
}
