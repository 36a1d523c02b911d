/**
 * Host side of the benchmark's kernel columns: one QEMU boot (libs/testing/ipvs-vm) per size whose
 * single step is `node ipvs-guest-apply.js` with the GuestJob on stdin. The guest's root is the
 * host's, so the compiled script beside this file is at the same path in there (build before
 * booting). Bounded by the VM's own timeout; a guest that fails or does not finish throws with
 * its stderr and the console's tail.
 */
import { fileURLToPath } from 'node:url';
import type { VmImage } from '@kube-proxy/testing-ipvs-vm';
import { runInVm } from '@kube-proxy/testing-ipvs-vm';
import { addressDigest, ipsetDigest, ipvsadmDigest } from './ipvs-kernel-digest.js';
import type { GuestJob, GuestResult, KernelExpectation } from './ipvs-guest-job.js';
import type { EndpointChange, FullSync } from './ipvs-workload.js';
import { renderIpsetRestore, renderIpvsadmRestore, type DesiredIpvsState } from '@kube-proxy/backend-ipvs/internal';

const GUEST_SCRIPT = fileURLToPath(new URL('./ipvs-guest-apply.js', import.meta.url));

function expectation(state: DesiredIpvsState): KernelExpectation {
  return {
    ipvsadm: ipvsadmDigest(renderIpvsadmRestore(state)),
    ipset: ipsetDigest(renderIpsetRestore(state)),
    // The link line is not an address: the expectation is the bound addresses only.
    addresses: addressDigest(state.bindAddresses),
  };
}

/**
 * The whole boot's bound: boot, the final read-back (~55 s at 10k), and per round the guest's node
 * start, its cluster, the apply and both yardsticks (measured at 10k on the shared 2 cores under a
 * load of 4–6: 90–160 s a round), with well over that as margin.
 */
export function vmTimeoutSeconds(n: number, rounds: number): number {
  return Math.min(1800, 120 + Math.ceil(n * (0.015 + 0.025 * rounds)));
}

export async function applyInVm(image: VmImage, full: FullSync, change: EndpointChange, rounds: number): Promise<{ guest: GuestResult; bootMs: number }> {
  const timeoutSeconds = vmTimeoutSeconds(full.n, rounds);
  const job: GuestJob = {
    n: full.n,
    full: full.payloads,
    change: change.payloads,
    expectAfterChange: expectation(change.after),
    toolTimeoutMs: timeoutSeconds * 1000,
    rounds,
  };
  const vm = await runInVm(image, { steps: [{ argv: ['node', GUEST_SCRIPT], stdin: JSON.stringify(job) }], timeoutSeconds, memoryMb: 2048 });
  const step = vm.steps[0];
  if (!vm.completed || step === undefined || step.code !== 0) {
    throw new Error(
      `the guest did not finish (completed ${vm.completed}, exit ${step?.code}, ${vm.durationMs} ms of ${timeoutSeconds} s):\n` +
        `${step?.stderr.slice(-4000)}\nconsole tail:\n${vm.console.slice(-2000)}`,
    );
  }
  return { guest: JSON.parse(step.stdout) as GuestResult, bootMs: vm.durationMs };
}
