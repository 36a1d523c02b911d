/**
 * A native-code yardstick for the emulation factor, beside the JavaScript one (the guest re-running
 * the host's compute): `gzip -6 -c` of the full ipvsadm batch, the same binary and input on the
 * host and in the guest (whose root is the host's), median of 3 after a warm-up. The kernel tools
 * are native code; their slowdown under TCG may be closer to this than to JIT-compiled JavaScript.
 * The input is the batch repeated to at least 4 MB, so gzip's work, not its process start, dominates.
 */
import { run } from '@kube-proxy/testing-netns';
import { median, ms } from './ipvs-workload.js';

const MIN_INPUT_BYTES = 4_000_000;

export async function measureNativeYardstick(batch: string, timeoutMs: number): Promise<number> {
  if (batch === '') throw new Error('the native yardstick needs a non-empty batch');
  const input = batch.repeat(Math.ceil(MIN_INPUT_BYTES / Buffer.byteLength(batch)));
  const once = async (): Promise<number> => {
    const t = process.hrtime.bigint();
    await run('gzip', ['-6', '-c'], { input, timeoutMs });
    return ms(t);
  };
  await once();
  const times: number[] = [];
  for (let i = 0; i < 3; i++) times.push(await once());
  return median(times);
}
