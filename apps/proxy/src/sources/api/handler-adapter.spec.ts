import type { V1Service } from '@kubernetes/client-node';
import { nullLogger, type Logger } from '@kube-proxy/core';
import { HandlerAdapter, objectKey, type ObjectHandler } from './handler-adapter.js';

const svc = (name: string, rv: string, ns = 'default', ip = '10.0.0.1'): V1Service => ({
  metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}` },
  spec: { clusterIP: ip },
});

function recorder(): { log: string[]; handler: ObjectHandler<V1Service> } {
  const log: string[] = [];
  const id = (s: V1Service) => `${objectKey(s)}@${s.metadata?.resourceVersion}`;
  return {
    log,
    handler: {
      add: (s) => void log.push(`add ${id(s)}`),
      update: (a, b) => void log.push(`update ${id(a)} -> ${id(b)}`),
      delete: (s) => void log.push(`delete ${id(s)}`),
      synced: () => void log.push('synced'),
    },
  };
}

// The informer is mocked at its boundary: these are the calls ResourceInformer makes (InformerEvents).
describe('HandlerAdapter', () => {
  const errors: string[] = [];
  const logger: Logger = { ...nullLogger, error: (m, meta) => void errors.push(`${m} ${JSON.stringify(meta)}`), child: () => logger };
  beforeEach(() => {
    errors.length = 0;
  });

  it('delivers the initial list as adds, then synced exactly once', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach(r.handler);
    const s1 = svc('a', '1');
    const s2 = svc('b', '2', 'prod');
    a.add(s1);
    a.add(s2);
    a.listed([s1, s2]);
    a.listed([s1, s2]); // a later relist
    expect(r.log).toEqual(['add default/a@1', 'add prod/b@2', 'synced']);
  });

  it('turns new-object-only updates into update(previous, current)', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach(r.handler);
    const first = svc('a', '1');
    a.add(first);
    a.listed([first]);
    a.update(svc('a', '5', 'default', '10.0.0.9'));
    // An "add" for a key already delivered (a relist after a restart re-adds everything) is an update.
    a.add(svc('a', '6'));
    // An "update" for an unknown key is an add.
    a.update(svc('z', '7'));
    expect(r.log.slice(2)).toEqual(['update default/a@1 -> default/a@5', 'update default/a@5 -> default/a@6', 'add default/z@7']);
  });

  it('delivers deletes, ignoring objects it never delivered', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach(r.handler);
    a.add(svc('a', '1'));
    a.delete(svc('a', '9'));
    a.delete(svc('never', '3'));
    expect(r.log).toEqual(['add default/a@1', 'delete default/a@9']);
    expect(a.size).toBe(0);
  });

  it('after a relist, deletes what vanished meanwhile (with its last known state) and adds/updates the rest', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach(r.handler);
    const keep = svc('keep', '1');
    a.add(keep);
    a.add(svc('gone', '2'));
    a.listed([keep, svc('gone', '2')]);
    r.log.length = 0;
    // The relisted cache: "gone" disappeared, "keep" unchanged (same object), "new" appeared, "changed"...
    a.listed([keep, svc('new', '10')]);
    expect(r.log).toEqual(['add default/new@10', 'delete default/gone@2']);
    expect(a.values().map(objectKey).sort()).toEqual(['default/keep', 'default/new']);
  });

  it('keys by namespace/name: same name in two namespaces are two objects', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach(r.handler);
    a.add(svc('a', '1', 'ns1'));
    a.add(svc('a', '2', 'ns2'));
    expect(r.log).toEqual(['add ns1/a@1', 'add ns2/a@2']);
  });

  it('holds events until a handler is attached, then replays the state (and synced if listed)', () => {
    const a = new HandlerAdapter<V1Service>('Node', logger);
    a.add(svc('n', '1'));
    a.update(svc('n', '2'));
    a.listed([svc('n', '2')]);
    const r = recorder();
    a.attach(r.handler);
    expect(r.log).toEqual(['add default/n@2', 'synced']);
    expect(() => a.attach(r.handler)).toThrow(/already attached/);

    const b = new HandlerAdapter<V1Service>('Service', logger);
    const r2 = recorder();
    b.add(svc('x', '1'));
    b.attach(r2.handler);
    expect(r2.log).toEqual(['add default/x@1']);
    b.listed([svc('x', '1')]);
    expect(r2.log).toEqual(['add default/x@1', 'update default/x@1 -> default/x@1', 'synced']);
  });

  it('resync re-delivers every object as update(obj, obj), only after synced', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    const updates: Array<[V1Service, V1Service]> = [];
    a.attach({ ...r.handler, update: (p, c) => void updates.push([p, c]) });
    a.add(svc('a', '1'));
    a.resync();
    expect(updates).toEqual([]);
    a.listed(a.values());
    a.resync();
    expect(updates).toHaveLength(1);
    expect(updates[0][0]).toBe(updates[0][1]);
  });

  it('contains a throwing handler: logged, and later events still flow', () => {
    const a = new HandlerAdapter<V1Service>('Service', logger);
    const r = recorder();
    a.attach({
      ...r.handler,
      add: (s) => {
        if (s.metadata?.name === 'bad') throw new Error('boom');
        r.handler.add(s);
      },
    });
    a.add(svc('bad', '1'));
    a.add(svc('good', '2'));
    expect(r.log).toEqual(['add default/good@2']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('boom');
    // The failed object still counts as delivered: its next change is an update.
    a.update(svc('bad', '3'));
    expect(r.log).toEqual(['add default/good@2', 'update default/bad@1 -> default/bad@3']);
  });
});
