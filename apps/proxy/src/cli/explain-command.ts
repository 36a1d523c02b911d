import {
  ExecaCommandExecutor,
  isNoRulesFound,
  type CommandExecutor,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type ParsedFlags,
  type RuleSnapshot,
} from '@kube-proxy/core';
import { buildExplainReport, formatExplainText, type ExplainReport, type KernelView } from '../trace/explain-report.js';
import { lastSyncNote } from '../trace/last-sync.js';
import { readLiveRules, tracerOf, type TracerLookup } from '../trace/live-rules.js';
import { hostAddresses, parseNodeAddresses } from '../trace/node-addresses.js';
import type { SubcommandArgs } from '../trace/subcommand-args.js';
import { TraceInputError } from '../trace/trace-packet.js';
import { renderOfflineRules, type OfflineRules } from './offline-rules.js';
import { loadBackends } from './run-setup.js';
import type { CliIO } from './run.js';

const FAMILIES: readonly IPFamily[] = ['IPv4', 'IPv6'];

/** `kube-proxy explain NAMESPACE/NAME`: core's explanation, the mode's kernel objects and, with --live, the differences. */
export async function explainCommand(args: SubcommandArgs, parsed: ParsedFlags, config: KubeProxyConfiguration, logger: Logger, io: CliIO): Promise<number> {
  const { service } = args;
  if (service === undefined) throw new TraceInputError('explain needs the Service: NAMESPACE/NAME');
  const given = args.nodeAddresses.length > 0 ? parseNodeAddresses(args.nodeAddresses) : undefined;
  const executor = new ExecaCommandExecutor();
  // With --live the kernel decides the mode (unless --proxy-mode says it), and the offline rules are
  // rendered in that mode so "what the objects say" and "what the kernel holds" compare like with like.
  const live = args.live ? await readLiveView(await loadBackends(config, logger), config.mode, executor) : undefined;
  const offline = await renderOfflineRules(parsed, live ? { ...config, mode: live.mode } : config, logger);
  const expected = expectedView(offline, logger);
  const nodeAddresses = given ?? (live ? await hostAddresses(executor) : undefined);
  const report = buildExplainReport({
    service,
    objects: offline.objects,
    nodeName: offline.run.nodeName,
    node: offline.node,
    ...(nodeAddresses ? { nodeAddresses } : {}),
    nodeIPs: offline.nodeIPs,
    // The mode explained is the one chosen (an unset --proxy-mode picks one).
    config: { ...offline.config, mode: offline.plugin.name },
    families: offline.families,
    ...(expected ? { expected } : {}),
    ...(live ? { live } : {}),
    objectSource: parsed.options.manifests ? `--manifests ${parsed.options.manifests}` : "the API server's objects",
  });
  const explained = await withLastSync(report, config.metricsBindAddress);
  io.stdout.write(args.output === 'json' ? JSON.stringify(explained, null, 2) + '\n' : formatExplainText(explained));
  return 0;
}

/** Where the kernel disagrees with the objects, when this node's proxy last synced is the next question. */
async function withLastSync(report: ExplainReport, metricsBindAddress: string): Promise<ExplainReport> {
  const differences = report.kernel.differences;
  if (differences === undefined || differences.length === 0) return report;
  return { ...report, kernel: { ...report.kernel, differences: [...differences, await lastSyncNote(metricsBindAddress)] } };
}

/** The rules the mode would program, parsed by its tracer; undefined (with a warning) for a mode without one. */
function expectedView(offline: OfflineRules, logger: Logger): KernelView | undefined {
  const tracer = offline.plugin.tracer;
  if (!tracer) {
    logger.warn('This proxy mode cannot list its kernel objects (its backend has no tracer)', { mode: offline.plugin.name });
    return undefined;
  }
  const snapshots = new Map<IPFamily, RuleSnapshot>();
  for (const [family, block] of offline.blocks) snapshots.set(family, tracer.fromDryRun(block, family));
  return { mode: offline.plugin.name, tracer, snapshots };
}

/** The kernel's rules of every family it holds any for, in the requested or the detected mode. */
async function readLiveView(backends: TracerLookup, requested: string, executor: CommandExecutor): Promise<KernelView> {
  let first: Awaited<ReturnType<typeof readLiveRules>> | undefined;
  const failures: string[] = [];
  for (const family of FAMILIES) {
    try {
      first = await readLiveRules(backends, requested, executor, family);
      break;
    } catch (err) {
      if (!(err instanceof TraceInputError)) throw err;
      failures.push(err.message);
    }
  }
  // Neither family: say what was looked for in each (an unknown or untraceable mode is said once).
  if (!first) throw new TraceInputError([...new Set(failures)].join('; '));
  const snapshots = new Map<IPFamily, RuleSnapshot>([[first.snapshot.family, first.snapshot]]);
  const tracer = tracerOf(backends, first.mode);
  for (const family of FAMILIES) {
    if (snapshots.has(family)) continue;
    const read = await tracer.readLive(executor, family);
    if (!isNoRulesFound(read)) snapshots.set(family, read);
  }
  return { mode: first.mode, tracer, snapshots };
}
