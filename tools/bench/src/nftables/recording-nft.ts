import type { NftInterface, NftTransaction } from '@kube-proxy/backend-nftables/internal';

/** One transaction the kernel accepted: its text (for replay with `nft -f`), its size and its wall time. */
export interface RecordedRun {
  readonly text: string;
  readonly operations: number;
  readonly ms: number;
}

const since = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;

/**
 * An NftInterface that passes every transaction on and keeps what was applied, so the bench can
 * replay the very same texts as a kernel floor. Its own cost (joining the text) is kept apart in
 * `overheadMs`, so a sync's total can be reported without it.
 */
export class RecordingNft implements NftInterface {
  private runs: RecordedRun[] = [];
  private overhead = 0;
  private reads = 0;

  constructor(private readonly inner: NftInterface) {}

  get description(): string {
    return `recording ${this.inner.description}`;
  }

  async run(tx: NftTransaction): Promise<void> {
    const started = process.hrtime.bigint();
    await this.inner.run(tx);
    const ms = since(started);
    if (tx.size === 0) return;
    const joined = process.hrtime.bigint();
    this.runs.push({ text: tx.toString(), operations: tx.size, ms });
    this.overhead += since(joined);
  }

  tableExists(): Promise<boolean> {
    return this.timedRead(() => this.inner.tableExists());
  }

  /** A restart reads the table it takes over: nft time too, but kept apart from the transactions. */
  readState(): ReturnType<NftInterface['readState']> {
    return this.timedRead(() => this.inner.readState());
  }

  private async timedRead<T>(read: () => Promise<T>): Promise<T> {
    const started = process.hrtime.bigint();
    try {
      return await read();
    } finally {
      this.reads += since(started);
    }
  }

  /** The runs since the last take, their recording overhead and the time spent reading the table; then none are left. */
  take(): { runs: RecordedRun[]; overheadMs: number; readMs: number } {
    const out = { runs: this.runs, overheadMs: this.overhead, readMs: this.reads };
    this.runs = [];
    this.overhead = 0;
    this.reads = 0;
    return out;
  }
}

/** Sum of the runs' wall times: the kernel side of a sync (nft, with its `ip netns exec`). */
export function kernelMs(runs: readonly RecordedRun[]): number {
  return runs.reduce((sum, r) => sum + r.ms, 0);
}
