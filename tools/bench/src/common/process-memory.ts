/**
 * Resident-memory readings of a process for the memory profile: VmRSS / VmHWM from /proc/PID/status
 * (a running proxy), and the peak RSS of a whole short-lived command through `/usr/bin/time -v`
 * (GNU time reads the kernel's maxrss at exit, so nothing between two polls is missed).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

export const GNU_TIME = '/usr/bin/time';

/** A `kB` field of /proc/PID/status (VmRSS, VmHWM, …) in KiB; undefined once the process is gone. */
export function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s*(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The pid of `parent`'s child process whose command line contains `needle`. */
export function childPid(parent: number, needle: string): number | undefined {
  try {
    for (const task of readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').trim().split(/\s+/)) {
      const pid = Number(task);
      if (pid > 0 && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return pid;
    }
  } catch {
    /* gone, or no children yet */
  }
  return undefined;
}

export interface PeakRun {
  readonly peakRssKiB: number;
  readonly wallMs: number;
  readonly exitCode: number | null;
  readonly stdoutBytes: number;
  /** The whole stdout, with `keepStdout` (kept as chunks outside the measured process). */
  readonly stdout?: Buffer;
  readonly stderr: string;
}

/** Runs `cmd args` to completion under GNU time (bounded by `timeoutMs`); stdout is counted, and kept with `keepStdout`. */
export function runMeasuringPeak(cmd: string, args: readonly string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs: number; keepStdout?: boolean }): Promise<PeakRun> {
  if (!existsSync(GNU_TIME)) throw new Error(`${GNU_TIME} is missing (Debian package "time")`);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(GNU_TIME, ['-v', cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: opts.env ?? process.env });
    let stdoutBytes = 0;
    let stderr = '';
    const kept: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => {
      stdoutBytes += d.length;
      if (opts.keepStdout) kept.push(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 1_000_000) stderr += d.toString('utf8');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr);
      if (!m) return reject(new Error(`no peak RSS in GNU time's report (exit ${code}):\n${stderr.slice(-3000)}`));
      resolve({ peakRssKiB: Number(m[1]), wallMs: Date.now() - started, exitCode: code, stdoutBytes, ...(opts.keepStdout ? { stdout: Buffer.concat(kept) } : {}), stderr });
    });
  });
}
