import { nullLogger } from '@kube-proxy/core';
import { MergedObjects, type FileObjects, type ManifestEntry, type ObjectDiff } from './merged-objects.js';

const entry = (name: string, port: number, labels: Record<string, string> = {}): ManifestEntry => ({
  kind: 'Service',
  object: { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'default', labels }, spec: { ports: [{ port }] } },
});
const file = (...entries: ManifestEntry[]): FileObjects => new Map(entries.map((e) => [`Service/default/${String(e.object.metadata?.name)}`, e]));
const describeDiff = (d: ObjectDiff) => {
  const port = (e: ManifestEntry) => (e.object['spec'] as { ports: { port: number }[] }).ports[0]!.port;
  const name = (e: ManifestEntry) => String(e.object.metadata?.name);
  return d.op === 'add' ? `+${name(d.cur)}:${port(d.cur)}` : d.op === 'update' ? `~${name(d.cur)}:${port(d.cur)}` : `-${name(d.prev)}`;
};

describe('MergedObjects', () => {
  const order = ['a', 'b', 'c'];
  const merged = () => new MergedObjects((e) => (e.object.metadata?.labels as Record<string, string>)['skip'] === undefined, nullLogger);

  it('serves the copy of the latest file in listing order, and the next one when that copy goes', () => {
    const m = merged();
    const a = file(entry('web', 1));
    const c = file(entry('web', 3));
    expect(m.apply([{ file: 'c', before: undefined, after: c }, { file: 'a', before: undefined, after: a }], order).map(describeDiff)).toEqual(['+web:3']);
    const b = file(entry('web', 2));
    expect(m.apply([{ file: 'b', before: undefined, after: b }], order).map(describeDiff)).toEqual([]);
    expect(m.apply([{ file: 'c', before: c, after: undefined }], order).map(describeDiff)).toEqual(['~web:2']);
    expect(m.apply([{ file: 'b', before: b, after: undefined }], order).map(describeDiff)).toEqual(['~web:1']);
    expect(m.apply([{ file: 'a', before: a, after: undefined }], order).map(describeDiff)).toEqual(['-web']);
    expect(m.view.size).toBe(0);
  });

  it('reports only the objects of a changed file that differ, deletions first; filtered objects are deletions', () => {
    const m = merged();
    const before = file(entry('same', 1), entry('edited', 1), entry('gone', 1), entry('hidden', 1));
    m.apply([{ file: 'a', before: undefined, after: before }], order);
    const after = file(entry('same', 1), entry('edited', 2), entry('new', 1), entry('hidden', 1, { skip: 'yes' }));
    expect(m.apply([{ file: 'a', before, after }], order).map(describeDiff)).toEqual(['-hidden', '-gone', '~edited:2', '+new:1']);
    expect([...m.view.keys()]).toEqual(['Service/default/same', 'Service/default/edited', 'Service/default/new']);
  });
});
