import type { V1Node } from '@kubernetes/client-node';
import { FakeClock } from '@kube-proxy/core/testing';
import { ProxierHealthTracker, TO_BE_DELETED_TAINT, type NodeHandler } from '@kube-proxy/core';
import { NodeEligibilityHandler } from './node-eligibility-handler.js';
import { fanOutNodeHandler } from './node-handler-fan-out.js';

const node = (name: string, extra: Partial<V1Node> = {}): V1Node => ({ metadata: { name }, ...extra });
const tainted = node('node-1', { spec: { taints: [{ key: TO_BE_DELETED_TAINT, effect: 'NoSchedule' }] } });

describe('NodeEligibilityHandler', () => {
  it('follows its own Node through taint, untaint and deletion', () => {
    const health = new ProxierHealthTracker(new FakeClock(), 60_000);
    const h = new NodeEligibilityHandler('node-1', health);
    h.onNodeAdd(node('node-1'));
    expect(health.nodeEligible()).toBe(true);
    h.onNodeUpdate(node('node-1'), tainted);
    expect(health.nodeEligible()).toBe(false);
    h.onNodeUpdate(tainted, node('node-1'));
    expect(health.nodeEligible()).toBe(true);
    h.onNodeUpdate(node('node-1'), node('node-1', { metadata: { name: 'node-1', deletionTimestamp: new Date() } }));
    expect(health.nodeEligible()).toBe(false);
    h.onNodeAdd(node('node-1'));
    h.onNodeDelete(node('node-1'));
    expect(health.nodeEligible()).toBe(false);
  });

  it('ignores other Nodes', () => {
    const health = new ProxierHealthTracker(new FakeClock(), 60_000);
    new NodeEligibilityHandler('node-1', health).onNodeDelete(node('node-2'));
    expect(health.nodeEligible()).toBe(true);
  });
});

describe('fanOutNodeHandler', () => {
  it('forwards every event to each handler in order', () => {
    const calls: string[] = [];
    const rec = (tag: string): NodeHandler => ({
      onNodeAdd: () => void calls.push(`${tag}:add`),
      onNodeUpdate: () => void calls.push(`${tag}:update`),
      onNodeDelete: () => void calls.push(`${tag}:delete`),
      onNodeSynced: () => void calls.push(`${tag}:synced`),
    });
    const fan = fanOutNodeHandler(rec('a'), rec('b'));
    fan.onNodeAdd(node('n'));
    fan.onNodeUpdate(node('n'), node('n'));
    fan.onNodeDelete(node('n'));
    fan.onNodeSynced();
    expect(calls).toEqual(['a:add', 'b:add', 'a:update', 'b:update', 'a:delete', 'b:delete', 'a:synced', 'b:synced']);
  });
});
