/**
 * The kernel yardstick of the cold-start ratios (issue 12, item 2): how long `iptables-legacy-restore`
 * takes to load a payload into an empty network namespace, the median of `runs` loads, each into a
 * fresh namespace (a restore on top of its own rules would measure a different thing).
 */
import { RestoreNamespace } from './netns-restore.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function legacyRestoreMs(payload: Buffer, runs = 3, name = 'kpyard-restore'): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const ns = await RestoreNamespace.create(name, 'legacy');
    try {
      const ms = await ns.restore(payload);
      if (ms === null) throw new Error('iptables-legacy-restore did not finish within the bench limit');
      times.push(ms);
    } finally {
      await ns.destroy();
    }
  }
  return median(times);
}
