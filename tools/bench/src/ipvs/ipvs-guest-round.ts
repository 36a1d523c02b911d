/**
 * One round of the guest's measurements, run INSIDE the VM in a network namespace of its own
 * (ipvs-guest-apply.ts starts it with `ip netns exec`; a RoundJob on stdin, a RoundResult on
 * stdout). A fresh namespace per round is what makes rounds comparable: IPVS state, sets and links
 * are per namespace, and a flushed namespace is not a fresh one (after `ipvsadm -C` the kernel
 * keeps the 50k deleted real servers in its per-namespace dest trash for ~2 min and walks that list
 * on every add: a second full load of 10k services took 4× the first).
 *  1. times `ipvsadm --restore`, `ipset restore` and `ip -batch -` of the full sync, each one
 *     process with its batch on stdin (as the proxier runs them);
 *  2. runs the host's CPU work (measureFullSync) as the JavaScript emulation yardstick and gzip of
 *     the ipvsadm batch as the native one (ipvs-native-yardstick.ts), right after the apply, so
 *     both sides of the ratio see about the same host load;
 *  3. in the last round only: times the one-endpoint change's batches on top of the full load,
 *     then checks the namespace holds exactly the state after the change (virtual and real
 *     servers, set entries, addresses), which a wrong or partial full load cannot give.
 * Any failed tool or mismatch exits non-zero with the reason on stderr.
 */
import { run } from '@kube-proxy/testing-netns';
import { readStdin } from './ipvs-read-stdin.js';
import { BENCH_IPVS_DEVICE } from './ipvs-address-batch.js';
import type { ApplyTimings, RoundJob, RoundResult, KernelExpectation } from './ipvs-guest-job.js';
import { addressDigest, addressesOfIpOutput, ipsetDigest, ipvsadmDigest, type Digest } from './ipvs-kernel-digest.js';
import { measureNativeYardstick } from './ipvs-native-yardstick.js';
import { measureFullSync, ms, type IpvsPayloads } from './ipvs-workload.js';

async function timed(command: string, args: readonly string[], input: string, timeoutMs: number): Promise<number | null> {
  if (input === '') return null; // the proxier runs nothing for an empty batch
  const t = process.hrtime.bigint();
  await run(command, args, { input, timeoutMs });
  return ms(t);
}

async function apply(p: IpvsPayloads, timeoutMs: number): Promise<ApplyTimings> {
  return {
    ipvsadm: await timed('ipvsadm', ['--restore'], p.ipvsadm, timeoutMs),
    ipset: await timed('ipset', ['restore'], p.ipset, timeoutMs),
    address: await timed('ip', ['-batch', '-'], p.address, timeoutMs),
  };
}

/** `detail`: a few read-back lines worth seeing when the digests differ. */
function same(what: string, got: Digest, want: Digest, detail = ''): void {
  if (got.lines !== want.lines || got.sha256 !== want.sha256) {
    throw new Error(`${what}: the kernel holds ${got.lines} lines (${got.sha256.slice(0, 12)}), expected ${want.lines} (${want.sha256.slice(0, 12)})${detail}`);
  }
}

async function check(when: string, want: KernelExpectation, timeoutMs: number): Promise<void> {
  same(`${when}: ipvsadm --save -n`, ipvsadmDigest((await run('ipvsadm', ['--save', '-n'], { timeoutMs })).stdout), want.ipvsadm);
  const sets = (await run('ipset', ['save'], { timeoutMs })).stdout;
  const creates = sets.split('\n').filter((l) => l.startsWith('create '));
  same(`${when}: ipset save`, ipsetDigest(sets), want.ipset, `; its sets:\n${creates.join('\n')}`);
  const ip = await run('ip', ['-o', 'addr', 'show', 'dev', BENCH_IPVS_DEVICE], { timeoutMs });
  same(`${when}: ${BENCH_IPVS_DEVICE} addresses`, addressDigest(addressesOfIpOutput(ip.stdout)), want.addresses);
}

async function main(): Promise<void> {
  const job = JSON.parse(await readStdin()) as RoundJob;
  const limit = job.toolTimeoutMs;
  const phasesMs: Record<string, number> = {};
  const phase = async <T>(name: string, f: () => Promise<T> | T): Promise<T> => {
    const t = process.hrtime.bigint();
    const v = await f();
    phasesMs[name] = Math.round(ms(t));
    return v;
  };
  const full = await phase('full apply', () => apply(job.full, limit));
  const y = await phase('yardstick', () => measureFullSync(job.n));
  const nativeMs = await phase('native yardstick', () => measureNativeYardstick(job.full.ipvsadm, limit));
  let change: ApplyTimings | null = null;
  if (job.change !== null) {
    const batches = job.change;
    change = await phase('change apply', () => apply(batches.payloads, limit));
    await phase('check', () => check('after the full sync and the one-endpoint change', batches.expectAfter, limit));
  }
  const result: RoundResult = { full, yardstick: { trackersMs: y.trackersMs, stateMs: y.stateMs, batchMs: y.batchMs }, nativeMs, change, phasesMs };
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
