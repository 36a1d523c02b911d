import { existsSync } from 'node:fs';
import { isNoRulesFound, type BackendPlugin, type CommandExecutor, type IPFamily, type ModeTracer, type NoRulesFound, type RuleSnapshot } from '@kube-proxy/core';
import { TraceInputError } from './trace-packet.js';

/**
 * Without the ip_vs module no virtual server exists, and asking ipvsadm would make the kernel load the
 * module (modprobe): a change to the host that reading must not make. So IPVS is read only when loaded.
 */
export function ipvsLoaded(): boolean {
  return existsSync('/proc/net/ip_vs');
}

const IPVS_NOT_LOADED: NoRulesFound = { found: false, lookedFor: '/proc/net/ip_vs (the ip_vs module is not loaded, so no virtual server exists)' };

/** readLive, except for IPVS when its module is not loaded (see ipvsLoaded). */
function readMode(mode: string, tracer: ModeTracer, executor: CommandExecutor, family: IPFamily, ipvsIsLoaded: () => boolean): Promise<RuleSnapshot | NoRulesFound> {
  if (mode === 'ipvs' && !ipvsIsLoaded()) return Promise.resolve(IPVS_NOT_LOADED);
  return tracer.readLive(executor, family);
}

/** Which modes are tried, in order, when --live is given without --proxy-mode. */
export const LIVE_DETECTION_ORDER: readonly string[] = ['nftables', 'ipvs', 'iptables', 'userspace'];

/** The registered backends, as far as reading the kernel needs them. */
export interface TracerLookup {
  get(name: string): BackendPlugin | undefined;
  all(): readonly BackendPlugin[];
}

export interface LiveRules {
  readonly mode: string;
  readonly tracer: ModeTracer;
  readonly snapshot: RuleSnapshot;
}

/** The tracer of `mode`, or a clear error (an unknown mode, a mode that cannot trace). */
export function tracerOf(backends: TracerLookup, mode: string): ModeTracer {
  const plugin = backends.get(mode);
  if (!plugin) throw new TraceInputError(`unknown proxy mode "${mode}"; registered modes: ${backends.all().map((b) => b.name).join(', ')}`);
  if (!plugin.tracer) throw new TraceInputError(`proxy mode "${mode}" cannot trace packets (its backend has no tracer)`);
  return plugin.tracer;
}

/**
 * Reads the rules this host's kernel holds for `family` (never changing them). With `requested`
 * (--proxy-mode), that mode's rules or an error saying what was looked for; otherwise the first mode
 * of LIVE_DETECTION_ORDER (then any plugin that traces) whose rules are there.
 */
export async function readLiveRules(
  backends: TracerLookup,
  requested: string,
  executor: CommandExecutor,
  family: IPFamily,
  ipvsIsLoaded: () => boolean = ipvsLoaded,
): Promise<LiveRules> {
  if (requested !== '' && requested !== 'auto') {
    const tracer = tracerOf(backends, requested);
    const read = await readMode(requested, tracer, executor, family, ipvsIsLoaded);
    if (isNoRulesFound(read)) throw new TraceInputError(`no ${requested} rules found on this node for ${family}: looked for ${read.lookedFor}`);
    return { mode: requested, tracer, snapshot: read };
  }
  const plugins = backends.all().filter((b) => b.tracer !== undefined);
  const ordered = [
    ...LIVE_DETECTION_ORDER.map((name) => plugins.find((p) => p.name === name)).filter((p): p is BackendPlugin => p !== undefined),
    ...plugins.filter((p) => !LIVE_DETECTION_ORDER.includes(p.name)),
  ];
  const lookedFor: string[] = [];
  for (const plugin of ordered) {
    const tracer = plugin.tracer;
    if (!tracer) continue;
    try {
      const read = await readMode(plugin.name, tracer, executor, family, ipvsIsLoaded);
      if (!isNoRulesFound(read)) return { mode: plugin.name, tracer, snapshot: read };
      lookedFor.push(`${plugin.name}: ${read.lookedFor}`);
    } catch (err) {
      lookedFor.push(`${plugin.name}: ${(err as Error).message}`);
    }
  }
  if (ordered.length === 0) throw new TraceInputError('no proxy mode of this build can read the kernel (no backend has a tracer)');
  throw new TraceInputError(`no kube-proxy rules found on this node for ${family}: looked for ${lookedFor.join('; ')}`);
}
