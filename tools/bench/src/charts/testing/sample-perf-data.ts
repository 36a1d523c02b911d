/** Fixture figures for the chart specs (never written to docs/perf/data: invented numbers). */
import type { PerfData } from '../perf-data.js';

export const SAMPLE_NFTABLES: PerfData = {
  id: 'nftables-scale',
  command: 'npm run bench:nftables -- --services=1000,10000,45000 --record',
  measuredAt: '2026-01-01T00:00:00.000Z',
  load1: [0.8, 1.9],
  series: [
    {
      mode: 'nftables',
      metric: 'cold-start-s',
      source: 'ours',
      label: 'cold start (spawn → rules in the kernel)',
      points: [
        { services: 1000, endpoints: 5, value: 1 },
        { services: 10_000, endpoints: 5, value: 10 },
        { services: 45_000, endpoints: 1, value: 60 },
      ],
    },
    { mode: 'nftables', metric: 'cold-start-s', source: 'kernel', label: 'nft -f of the same payload', points: [{ services: 10_000, endpoints: 5, value: 2 }] },
    { mode: 'nftables', metric: 'change-compute-ms', source: 'ours', label: 'one-endpoint change, compute', points: [{ services: 10_000, endpoints: 5, value: 12 }] },
    { mode: 'nftables', metric: 'full-resync-s', source: 'upstream', label: 'upstream full sync (#139513)', points: [{ services: 44_000, endpoints: 1, value: 394 }] },
    { mode: 'nftables', metric: 'cold-start-s', source: 'bound', label: 'bound: cold start ≤ 10 s at 10k', points: [{ services: 10_000, endpoints: 5, value: 10 }] },
    { mode: 'nftables', metric: 'rss-mb', source: 'ours', label: 'settled RSS', points: [{ services: 10_000, endpoints: 5, value: 200 }] },
    { mode: 'nftables', metric: 'rss-mb', source: 'bound', label: 'bound: RSS <= 200 MB', points: [{ services: 10_000, endpoints: 5, value: 200 }] },
  ],
};

export const SAMPLE_USERSPACE: PerfData = {
  id: 'userspace-scale',
  command: 'npm run bench:userspace-scale -- --record',
  measuredAt: '2026-01-01T00:00:00.000Z',
  load1: [1, 1],
  series: [{ mode: 'userspace', metric: 'rss-mb', source: 'ours', label: 'settled RSS <&> "quoted"', points: [{ services: 1000, endpoints: 5, value: 80 }] }],
};
