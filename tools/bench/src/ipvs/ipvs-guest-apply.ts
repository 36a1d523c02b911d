/**
 * Runs INSIDE the IPVS VM guest (started by ipvs-vm-apply.ts as `node <this file>`, a GuestJob on
 * stdin, a GuestResult on stdout):
 *  1. loads the modules a running node already has (ip_vs, its rr scheduler, the ip_set types,
 *     dummy) and runs each tool once, so module loading and the first reads of the binaries over
 *     9p are not counted;
 *  2. runs job.rounds rounds (ipvs-guest-round.ts), each in a fresh network namespace of its own
 *     (`ip netns add`, `lo` up, then `ip netns exec NS node ipvs-guest-round.js`; the round process times the
 *     tools itself, so `ip netns exec` is not in any timing). Namespaces are left in place until
 *     power-off: tearing one down (freeing 10k services) would run in the kernel during the next
 *     round. The last round also applies the one-endpoint change and checks the kernel's content;
 *  3. reports the round with the median apply total, the yardsticks' round with the median, and
 *     every round's totals.
 */
import { release } from 'node:os';
import { fileURLToPath } from 'node:url';
import { run } from '@kube-proxy/testing-netns';
import { readStdin } from './ipvs-read-stdin.js';
import type { ApplyTimings, GuestJob, GuestResult, RoundJob, RoundResult } from './ipvs-guest-job.js';
import { fullSyncMs, median, medianBy, ms } from './ipvs-workload.js';

const ROUND_SCRIPT = fileURLToPath(new URL('./ipvs-guest-round.js', import.meta.url));

const MODULES = [
  'ip_vs', 'ip_vs_rr', 'ip_set', 'ip_set_hash_ip', 'ip_set_hash_ipport', 'ip_set_hash_ipportip',
  'ip_set_hash_ipportnet', 'ip_set_bitmap_port', 'dummy',
];

const applyTotalMs = (a: ApplyTimings): number => (a.ipvsadm ?? 0) + (a.ipset ?? 0) + (a.address ?? 0);

async function main(): Promise<void> {
  const job = JSON.parse(await readStdin()) as GuestJob;
  const limit = job.toolTimeoutMs;
  const phasesMs: Record<string, number> = {};
  const t = process.hrtime.bigint();
  await run('modprobe', ['-a', ...MODULES], { timeoutMs: limit });
  await run('ipvsadm', ['-L', '-n'], { timeoutMs: limit });
  await run('ipset', ['list', '-n'], { timeoutMs: limit });
  await run('ip', ['-o', 'link', 'show'], { timeoutMs: limit });
  phasesMs['preload'] = Math.round(ms(t));

  const rounds: RoundResult[] = [];
  for (let r = 1; r <= job.rounds; r++) {
    const ns = `kpbench-${process.pid}-${r}`;
    await run('ip', ['netns', 'add', ns], { timeoutMs: limit });
    // As on a node: with no address at all a namespace has no local routing table yet, and IPVS
    // then refuses every real server ("address not unicast").
    await run('ip', ['-n', ns, 'link', 'set', 'lo', 'up'], { timeoutMs: limit });
    const last = r === job.rounds;
    const roundJob: RoundJob = {
      n: job.n,
      full: job.full,
      change: last ? { payloads: job.change, expectAfter: job.expectAfterChange } : null,
      toolTimeoutMs: limit,
    };
    const started = process.hrtime.bigint();
    const out = await run('ip', ['netns', 'exec', ns, 'node', ROUND_SCRIPT], { input: JSON.stringify(roundJob), timeoutMs: limit });
    phasesMs[`round ${r}`] = Math.round(ms(started));
    const round = JSON.parse(out.stdout) as RoundResult;
    for (const [k, v] of Object.entries(round.phasesMs)) phasesMs[`round ${r} ${k}`] = v;
    rounds.push(round);
  }
  const change = rounds[rounds.length - 1]?.change;
  if (change === undefined || change === null) throw new Error('the last round did not apply the change');
  const result: GuestResult = {
    full: medianBy(rounds, (x) => applyTotalMs(x.full)).full,
    fullRoundsMs: rounds.map((x) => applyTotalMs(x.full)),
    change,
    yardstick: medianBy(rounds, (x) => fullSyncMs(x.yardstick)).yardstick,
    yardstickRoundsMs: rounds.map((x) => fullSyncMs(x.yardstick)),
    nativeYardstickMs: median(rounds.map((x) => x.nativeMs)),
    nativeRoundsMs: rounds.map((x) => x.nativeMs),
    guestKernel: release(),
    phasesMs,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
