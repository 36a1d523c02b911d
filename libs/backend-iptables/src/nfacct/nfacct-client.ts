import type { CommandExecutor, Logger } from '@kube-proxy/core';

/** The nfacct CLI (Debian package `nfacct`, netfilter's extended accounting). */
export const NFACCT_BINARY = 'nfacct';
/** Bounds every nfacct invocation: it only talks netlink to the kernel. */
const NFACCT_TIMEOUT_MS = 5000;

/** One line of `nfacct list` / `nfacct get NAME`: `{ pkts = 00000000000000000012, bytes = 00000000000000000720 } = NAME;` */
const COUNTER_LINE = /^\{\s*pkts\s*=\s*(\d+),\s*bytes\s*=\s*(\d+)\s*\}\s*=\s*(\S+?);?\s*$/;

export interface NfacctCounterValue {
  readonly packets: number;
  readonly bytes: number;
}

/** Parses `nfacct list` (or `nfacct get NAME`) output into counter name → packets and bytes. */
export function parseNfacctList(stdout: string): Map<string, NfacctCounterValue> {
  const out = new Map<string, NfacctCounterValue>();
  for (const line of stdout.split('\n')) {
    const m = COUNTER_LINE.exec(line.trim());
    if (m?.[3] !== undefined) out.set(m[3], { packets: Number(m[1]), bytes: Number(m[2]) });
  }
  return out;
}

/**
 * Upstream's pkg/util/nfacct (a netlink client) as the `nfacct` command line, run through core's
 * CommandExecutor with argument arrays. Counters are per network namespace, like the rules that
 * match on them.
 *
 * When the binary is missing the client is unavailable for good (upstream: nfacct.New() failed),
 * and nothing is run again. A kernel without nfnetlink_acct makes each ensure fail instead; callers
 * then render rules without the match.
 */
export class NfacctClient {
  private missing: string | undefined;

  constructor(
    private readonly executor: CommandExecutor,
    private readonly logger: Logger,
  ) {}

  /** Why the client cannot run at all (the binary could not be started), if so. */
  get unavailableReason(): string | undefined {
    return this.missing;
  }

  /**
   * Makes sure counter `name` exists (upstream's Ensure: get, else add). Resolves true when it exists
   * afterwards; false (with a verbose log line) when the tool is missing or the kernel refuses.
   */
  async ensure(name: string): Promise<boolean> {
    if (this.missing !== undefined) return false;
    const got = await this.run(['get', name]);
    if (got === undefined) return false;
    if (got.exitCode === 0) return true;
    const added = await this.run(['add', name]);
    if (added === undefined) return false;
    if (added.exitCode === 0) return true;
    // "Device or resource busy": someone created it between our get and add.
    const again = await this.run(['get', name]);
    if (again?.exitCode === 0) return true;
    this.logger.verbose('Cannot create nfacct counter; rules are written without it and its metric is not exported', {
      counter: name,
      err: (added.stderr || again?.stderr || '').trim(),
    });
    return false;
  }

  /** Every counter's packets and bytes (`nfacct list`), or undefined when they cannot be read. */
  async list(): Promise<Map<string, NfacctCounterValue> | undefined> {
    if (this.missing !== undefined) return undefined;
    const r = await this.run(['list']);
    if (r === undefined || r.exitCode !== 0) {
      if (r) this.logger.verbose('Cannot read nfacct counters', { err: r.stderr.trim() });
      return undefined;
    }
    return parseNfacctList(r.stdout);
  }

  private async run(args: readonly string[]): Promise<{ exitCode: number | null; stdout: string; stderr: string } | undefined> {
    const r = await this.executor.run(NFACCT_BINARY, args, { timeoutMs: NFACCT_TIMEOUT_MS });
    if (r.spawnError !== undefined) {
      this.missing = r.spawnError;
      this.logger.verbose('nfacct is not available; nfacct counters and their metrics are off', { err: r.spawnError });
      return undefined;
    }
    return r;
  }
}
