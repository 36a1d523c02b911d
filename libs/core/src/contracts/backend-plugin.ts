import type { DependencyContainer } from 'tsyringe';
import type { HostCapabilities } from '../host/capabilities/types.js';
import type { KubeProxyConfiguration } from '../config/types.js';
import type { ProxyContext } from './proxy-context.js';
import type { ModeTracer } from './packet-trace.js';

/** The plugin contract version this core speaks. A plugin declaring another is refused. */
export const BACKEND_PLUGIN_API_VERSION = 'kube-proxy.backend/v1';

export interface DetectResult {
  readonly usable: boolean;
  /** Why (not) usable, in words an operator can act on. */
  readonly reason: string;
}

/**
 * A proxy mode backend. Built-in backends and third-party npm packages export an object of this shape
 * (as `backend` or the default export); the composition root registers it explicitly — never by
 * import side effects.
 */
export interface BackendPlugin {
  readonly apiVersion: string;
  /** The --proxy-mode name, e.g. "iptables". */
  readonly name: string;
  /** The backend package's version. */
  readonly version: string;
  /**
   * Whether this backend can run on the host described by `host` with `config` (given by the host
   * app since plugin API 1.x; a backend must cope without it). Must not change the host.
   */
  detect(host: HostCapabilities, config?: KubeProxyConfiguration): DetectResult | Promise<DetectResult>;
  /**
   * Register the backend's Provider under PROVIDER (and anything it needs) in `container`.
   * The container already holds LOGGER, CLOCK, COMMAND_EXECUTOR, SYSCTL, HOST_FS and PROXY_CONTEXT.
   */
  register(container: DependencyContainer, context: ProxyContext): void | Promise<void>;
  /**
   * Optional: remove everything this backend may have programmed (for --cleanup). Safe on a clean node.
   */
  cleanup?(container: DependencyContainer, context: ProxyContext): Promise<void>;
  /**
   * Optional (core 0.3.0): answers `kube-proxy trace` / `explain` and /debug/trace over this mode's
   * rules, offline (its --dry-run output) or live (the host's kernel). A mode without one is not traceable.
   */
  readonly tracer?: ModeTracer;
}
