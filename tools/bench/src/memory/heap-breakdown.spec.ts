import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { breakdown, breakdownOfFile } from './heap-breakdown.js';
import { dominators, readHeapSnapshot } from './heap-snapshot.js';

/**
 * A hand-written snapshot in V8's format. Nodes (type, name, id, self_size, edge_count):
 *   0 root → 1 ProxyState, 2 ChainNameCache, 5 (a string both reach)
 *   1 ProxyState → 3 EndpointSliceCache → 4 Object (40 bytes)
 *   1 ProxyState → 5; 2 ChainNameCache → 5, 6 (a string only it holds), weak → 3
 */
function snapshotText(): string {
  const strings = ['', 'ProxyState', 'ChainNameCache', 'EndpointSliceCache', 'Object', 'KUBE-SVC-X', 'KUBE-SEP-"Y"', 'a', 'b'];
  const OBJECT = 3;
  const STRING = 2;
  const nodes = [
    [9, 0, 1, 0, 3],
    [OBJECT, 1, 3, 100, 2],
    [OBJECT, 2, 5, 50, 3],
    [OBJECT, 3, 7, 30, 1],
    [OBJECT, 4, 9, 40, 0],
    [STRING, 5, 11, 20, 0],
    [STRING, 6, 13, 24, 0],
  ];
  const F = 5;
  const PROPERTY = 2;
  const WEAK = 6;
  const edges = [
    [PROPERTY, 7, 1 * F], [PROPERTY, 8, 2 * F], [PROPERTY, 7, 5 * F],
    [PROPERTY, 7, 3 * F], [PROPERTY, 8, 5 * F],
    [PROPERTY, 7, 5 * F], [PROPERTY, 8, 6 * F], [WEAK, 7, 3 * F],
    [PROPERTY, 7, 4 * F],
  ];
  return JSON.stringify({
    snapshot: {
      meta: {
        node_fields: ['type', 'name', 'id', 'self_size', 'edge_count'],
        node_types: [['hidden', 'array', 'string', 'object', 'code', 'closure', 'regexp', 'number', 'native', 'synthetic', 'concatenated string', 'sliced string']],
        edge_fields: ['type', 'name_or_index', 'to_node'],
        edge_types: [['context', 'element', 'property', 'internal', 'hidden', 'shortcut', 'weak']],
      },
      node_count: nodes.length,
      edge_count: edges.length,
    },
    nodes: nodes.flat(),
    edges: edges.flat(),
    strings,
  });
}

describe('heap snapshot breakdown', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kp-heap-'));
    writeFileSync(join(dir, 'tiny.heapsnapshot'), snapshotText());
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads nodes, edges and strings (escaped ones too) from the file', () => {
    const g = readHeapSnapshot(join(dir, 'tiny.heapsnapshot'));
    expect(g.nodeCount).toBe(7);
    expect(g.strings[6]).toBe('KUBE-SEP-"Y"');
    expect(Array.from(g.selfSize)).toEqual([0, 100, 50, 30, 40, 20, 24]);
    expect(Array.from(g.edgeTo.slice(0, 3))).toEqual([1, 2, 5]);
  });

  it('computes immediate dominators, ignoring weak edges', () => {
    const idom = dominators(readHeapSnapshot(join(dir, 'tiny.heapsnapshot')));
    // The string both caches hold is dominated by the root; the weak edge does not make 3 shared.
    expect(Array.from(idom)).toEqual([0, 0, 0, 1, 3, 0, 2]);
  });

  it('charges each object to its innermost component and reports shared ones as unowned', () => {
    const b = breakdownOfFile(join(dir, 'tiny.heapsnapshot'));
    const bytes = Object.fromEntries(b.components.map((c) => [c.label, c.bytes]));
    expect(bytes['core: ProxyState maps']).toBe(100);
    expect(bytes['core: endpoint-slice cache / tracker']).toBe(70);
    expect(bytes['iptables: chain-name cache']).toBe(74);
    expect(b.components.find((c) => c.label === 'iptables: chain-name cache')?.stringBytes).toBe(24);
    expect(b.unowned).toEqual([{ label: 'string', bytes: 20, stringBytes: 20, objects: 1 }]);
    expect(b.totalBytes).toBe(264);
    expect(b.strings).toEqual({ bytes: 44, count: 2, duplicateBytes: 0 });
  });

  it('counts duplicate flat strings as what interning would save', () => {
    const g = readHeapSnapshot(join(dir, 'tiny.heapsnapshot'));
    const same = { ...g, nodeName: Uint32Array.from(g.nodeName, (n, i) => (i === 6 ? g.nodeName[5]! : n)) };
    expect(breakdown(same, dominators(same)).strings.duplicateBytes).toBe(20);
  });
});
