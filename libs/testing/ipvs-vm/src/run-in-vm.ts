/**
 * `runInVm`: one boot of the prepared kernel under QEMU (software emulation, `-accel tcg`: the
 * host's kvm_pvm cannot run a stock kernel), one vCPU and `nice` to spare the host, bounded by
 * `timeout` and by our own SIGKILL. The host's `/` is the guest's read-only lower root; a fresh temp
 * dir is the writable `xfer` share holding the steps and, afterwards, their output. A job is a list
 * of steps, each an argument array the guest runs with `chroot` (no shell on either side parses
 * them), optionally with stdin text. The temp dir is removed by exact path.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DONE_MARKER } from './init-script.js';
import type { VmImage } from './prepare.js';
import { spawnBounded } from './spawn-bounded.js';

export interface VmStep {
  readonly argv: readonly string[];
  readonly stdin?: string;
}

export interface VmStepResult {
  readonly argv: readonly string[];
  /** Exit code in the guest; null if the step never ran. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface VmRun {
  readonly steps: readonly VmStepResult[];
  /** Every step ran and /init reached its end. */
  readonly completed: boolean;
  /** The guest's serial console (kernel messages, /init errors). */
  readonly console: string;
  readonly durationMs: number;
}

export interface VmJob {
  readonly steps: readonly VmStep[];
  /** Whole boot bound (default 170 s). */
  readonly timeoutSeconds?: number;
  readonly memoryMb?: number;
}

const KERNEL_ARGS = 'console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off no_timer_check';

function readOr(file: string, fallback: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : fallback;
}

export function qemuArgs(image: VmImage, xferDir: string, consoleLog: string, job: VmJob): string[] {
  const timeout = job.timeoutSeconds ?? 170;
  return [
    '-k', '5', String(timeout), 'nice', '-n', '10', 'qemu-system-x86_64',
    '-accel', 'tcg', '-m', String(job.memoryMb ?? 1536), '-smp', '1',
    '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot',
    '-chardev', `file,id=con,path=${consoleLog}`, '-serial', 'chardev:con',
    '-kernel', image.kernel.vmlinuz, '-initrd', image.initrd, '-append', KERNEL_ARGS,
    '-virtfs', 'local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap',
    '-virtfs', `local,path=${xferDir},mount_tag=xfer,security_model=none,multidevs=remap`,
  ];
}

export async function runInVm(image: VmImage, job: VmJob): Promise<VmRun> {
  const started = Date.now();
  const xfer = mkdtempSync(join(tmpdir(), 'kp-ipvs-vm-'));
  try {
    job.steps.forEach((step, i) => {
      if (step.argv.length === 0 || step.argv.some((a) => a.includes('\n') || a.length === 0)) {
        throw new Error(`step ${i}: arguments must be non-empty and free of newlines`);
      }
      const d = join(xfer, 'steps', String(i));
      mkdirSync(d, { recursive: true });
      if (step.stdin !== undefined) writeFileSync(join(d, 'stdin'), step.stdin);
      writeFileSync(join(d, 'argv'), step.argv.join('\n') + '\n');
    });
    const consoleLog = join(xfer, 'console.log');
    const timeoutMs = ((job.timeoutSeconds ?? 170) + 10) * 1000;
    await spawnBounded('timeout', qemuArgs(image, xfer, consoleLog, job), { timeoutMs });
    const steps = job.steps.map((step, i): VmStepResult => {
      const d = join(xfer, 'steps', String(i));
      const rc = readOr(join(d, 'rc'), '').trim();
      return { argv: step.argv, code: rc === '' ? null : Number(rc), stdout: readOr(join(d, 'stdout'), ''), stderr: readOr(join(d, 'stderr'), '') };
    });
    return { steps, completed: existsSync(join(xfer, DONE_MARKER)), console: readOr(consoleLog, ''), durationMs: Date.now() - started };
  } finally {
    rmSync(xfer, { recursive: true, force: true });
  }
}
