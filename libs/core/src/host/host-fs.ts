/** Read-only filesystem probes used for capability detection; faked in tests. */
export interface HostFs {
  exists(path: string): Promise<boolean>;
  /** File contents, or undefined when missing or unreadable. */
  readFile(path: string): Promise<Buffer | undefined>;
  /** Kernel release (uname -r). */
  kernelRelease(): string;
}

export const HOST_FS = Symbol.for('kube-proxy.HostFs');
