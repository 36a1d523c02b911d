/**
 * A PATH shim that makes the proxy's iptables-restore fail on demand, for the fault suite: a directory
 * with one executable per restore binary the proxier calls (core's `iptablesBinaries`: iptables-nft-
 * restore, iptables-legacy-restore and the ip6tables ones), put first on the proxy's PATH. While the
 * flag file exists a call fails the way a rejected ruleset does (reads its input, says which line
 * failed, exit 1) and changes nothing; otherwise it execs the real binary with the same arguments and
 * input. An empty flag fails every restore binary; a flag listing binary names (one per line) fails
 * only those. Every call is logged with its time and outcome, so a test can see the retries.
 *
 * The shims are /bin/sh scripts: a PATH shim must be an executable the proxy's execa call can start by
 * name, and sh execs the real binary without a process of its own left in between.
 */
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { iptablesBinaries } from '@kube-proxy/netfilter-iptables';
import { type IptablesVariant } from '@kube-proxy/core';

/** The restore binaries the iptables proxier runs, per family and variant (from core's runner). */
export function restoreBinaries(): string[] {
  const variants: IptablesVariant[] = ['nft', 'legacy'];
  return variants.flatMap((v) => [iptablesBinaries('IPv4', v).restore, iptablesBinaries('IPv6', v).restore]);
}

export interface RestoreCall {
  /** Epoch ms (the shim's `date`). */
  readonly at: number;
  readonly outcome: 'fail' | 'pass';
  readonly binary: string;
  /** Its arguments, space-joined. */
  readonly args: string;
}

export interface RestoreShim {
  /** The shim directory (goes first on PATH). */
  readonly dir: string;
  /** The proxy's environment: PATH with the shim first. */
  readonly env: Readonly<Record<string, string>>;
  /** Starts failing: every restore binary, or only `binaries`. */
  failRestores(binaries?: readonly string[]): void;
  /** Stops failing. */
  passRestores(): void;
  failing(): boolean;
  /** Every call so far, oldest first. */
  calls(): RestoreCall[];
}

const SAFE_PATH = /^[A-Za-z0-9_./-]+$/;

/** The binary's absolute path on this process's PATH (resolved once, before the shim goes first). */
function which(binary: string): string {
  for (const d of (process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = join(d, binary);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  throw new Error(`${binary} is not installed (needed behind the restore shim)`);
}

/** Creates the shim directory `<parent>/restore-shim` (flag and call log beside it). */
export function createRestoreShim(parent: string): RestoreShim {
  const dir = join(parent, 'restore-shim');
  const flag = join(parent, 'restore-shim.fail');
  const log = join(parent, 'restore-shim.calls');
  for (const p of [dir, flag, log]) if (!SAFE_PATH.test(p)) throw new Error(`unsafe path for a shell shim: ${p}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(log, '');
  for (const binary of restoreBinaries()) {
    const real = which(binary);
    if (!SAFE_PATH.test(real)) throw new Error(`unsafe path for a shell shim: ${real}`);
    const script = [
      '#!/bin/sh',
      `# e2e fault shim for ${binary}: fails while ${flag} exists (and is empty or names ${binary}).`,
      `if [ -e ${flag} ] && { [ ! -s ${flag} ] || grep -qx ${binary} ${flag}; }; then`,
      '  cat >/dev/null',
      `  echo "$(date +%s%3N) fail ${binary} $*" >> ${log}`,
      `  echo "${binary}: line 1 failed (fault injected by the e2e restore shim)" >&2`,
      '  exit 1',
      'fi',
      `echo "$(date +%s%3N) pass ${binary} $*" >> ${log}`,
      `exec ${real} "$@"`,
      '',
    ].join('\n');
    const file = join(dir, binary);
    writeFileSync(file, script);
    chmodSync(file, 0o755);
  }
  return {
    dir,
    env: { PATH: `${dir}:${process.env['PATH'] ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` },
    failRestores: (binaries = []) => writeFileSync(flag, binaries.map((b) => `${b}\n`).join('')),
    passRestores: () => rmSync(flag, { force: true }),
    failing: () => existsSync(flag),
    calls: () =>
      readFileSync(log, 'utf8')
        .split('\n')
        .map((l) => l.trim().split(' '))
        .filter((f) => f.length >= 3 && (f[1] === 'fail' || f[1] === 'pass'))
        .map(([at, outcome, binary, ...args]) => ({ at: Number(at), outcome: outcome as 'fail' | 'pass', binary: binary!, args: args.join(' ') })),
  };
}
