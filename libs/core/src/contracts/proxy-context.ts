import type { KubeProxyConfiguration } from '../config/types.js';
import type { HostCapabilities } from '../host/capabilities/types.js';
import type { IPFamily } from '../semantics/model/protocol.js';

/** Where --dry-run output goes (stdout in the CLI, a buffer in tests). */
export interface TextSink {
  write(text: string): void;
  /**
   * Resolves once what was written so far has left the process (stdout drained). A pipe takes 64 kB
   * at a time: without waiting, a 16 MB dry-run block (10k services) is queued in memory whole.
   * Absent: writes are taken at once (a string in tests). Use writeDryRunBlock rather than calling it.
   */
  drained?(): Promise<void>;
}

/**
 * Everything a backend needs to know about the run it is part of, resolved once at startup by the
 * composition root. Registered in the container under PROXY_CONTEXT.
 */
export interface ProxyContext {
  readonly config: KubeProxyConfiguration;
  /** Lower-cased node name (hostname-override or hostname). */
  readonly nodeName: string;
  /** The node's primary IPs, by family (from the Node object or --bind-address); may be empty at first. */
  readonly nodeIPs: Partial<Record<IPFamily, string>>;
  /** Families this node proxies (one proxier each). */
  readonly families: readonly IPFamily[];
  /** --dry-run: never change the host; print the would-be state after each sync to dryRunSink. */
  readonly dryRun: boolean;
  readonly dryRunSink: TextSink;
  readonly host: HostCapabilities;
}

export const PROXY_CONTEXT = Symbol.for('kube-proxy.ProxyContext');
