/** Kernel tunables by dotted or slashed name (`net/ipv4/conf/all/route_localnet`). */
export interface Sysctl {
  /** The current value, trimmed; undefined when the sysctl does not exist or cannot be read. */
  get(name: string): Promise<string | undefined>;
  /** Throws when the value cannot be written (read-only /proc/sys, permission denied in a netns). */
  set(name: string, value: string): Promise<void>;
}

export const SYSCTL = Symbol.for('kube-proxy.Sysctl');
