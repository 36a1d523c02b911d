import { exponentialBuckets, linearBuckets, mergeBuckets } from './buckets.js';

describe('bucket helpers', () => {
  it('computes exponential and linear buckets like client_golang', () => {
    expect(exponentialBuckets(0.001, 2, 4)).toEqual([0.001, 0.002, 0.004, 0.008]);
    expect(linearBuckets(0.25, 0.25, 2)).toEqual([0.25, 0.5]);
    expect(linearBuckets(120, 30, 3)).toEqual([120, 150, 180]);
  });

  it('merges with a leading zero bucket, as component-base MergeBuckets', () => {
    expect(mergeBuckets([1, 2], [5])).toEqual([0, 1, 2, 5]);
  });
});
