import type { V1Node } from '@kubernetes/client-node';
import { isNodeEligible, TO_BE_DELETED_TAINT } from './node-eligibility.js';

const node = (extra: Partial<V1Node> = {}): V1Node => ({ metadata: { name: 'node-1' }, ...extra });

describe('isNodeEligible', () => {
  it('accepts a plain Node, including one with unrelated taints', () => {
    expect(isNodeEligible(node())).toBe(true);
    expect(isNodeEligible(node({ spec: { taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] } }))).toBe(true);
  });

  it('refuses a deleted, missing or terminating Node', () => {
    expect(isNodeEligible(node(), true)).toBe(false);
    expect(isNodeEligible(undefined)).toBe(false);
    expect(isNodeEligible(node({ metadata: { name: 'node-1', deletionTimestamp: new Date() } }))).toBe(false);
  });

  it('refuses a Node cluster-autoscaler is about to delete', () => {
    expect(isNodeEligible(node({ spec: { taints: [{ key: TO_BE_DELETED_TAINT, effect: 'NoSchedule', value: '1700000000' }] } }))).toBe(false);
  });
});
