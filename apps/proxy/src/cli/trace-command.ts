import {
  ExecaCommandExecutor,
  type IPFamily,
  type KubeProxyConfiguration,
  type Logger,
  type ModeTracer,
  type ParsedFlags,
  type RuleSnapshot,
  type TraceNode,
} from '@kube-proxy/core';
import { resolveNodeName } from '../node/node-identity.js';
import { readLiveRules, tracerOf } from '../trace/live-rules.js';
import { hostAddresses, nodeObjectAddresses, parseNodeAddresses } from '../trace/node-addresses.js';
import { traceOver } from '../trace/run-trace.js';
import type { SubcommandArgs } from '../trace/subcommand-args.js';
import { formatTraceText, traceJson } from '../trace/trace-output.js';
import { TraceInputError, buildTracePacket, type PacketInput } from '../trace/trace-packet.js';
import { loadBackends } from './run-setup.js';
import { renderOfflineRules } from './offline-rules.js';
import type { CliIO } from './run.js';

interface TraceRules {
  readonly mode: string;
  readonly tracer: ModeTracer;
  readonly snapshot: RuleSnapshot;
  readonly node: TraceNode;
}

/** `kube-proxy trace`: one packet through the offline or the live rules; 0 whenever a trace is produced. */
export async function traceCommand(args: SubcommandArgs, parsed: ParsedFlags, config: KubeProxyConfiguration, logger: Logger, io: CliIO): Promise<number> {
  const request: PacketInput = { from: args.from, to: args.to, protocol: args.protocol, inInterface: args.inInterface };
  // Malformed input is refused before any rule is rendered or read.
  const family = buildTracePacket(request, []).family;
  const given = args.nodeAddresses.length > 0 ? parseNodeAddresses(args.nodeAddresses) : undefined;
  const rules = args.live ? await liveRules(config, family, given, logger) : await offlineRules(parsed, config, family, given, logger);
  const answer = traceOver(rules.mode, rules.tracer, rules.snapshot, request, rules.node);
  io.stdout.write(
    args.output === 'json' ? JSON.stringify(traceJson(answer.trace, answer.origin), null, 2) + '\n' : formatTraceText(answer.trace, answer.packet, answer.origin),
  );
  return 0;
}

async function liveRules(config: KubeProxyConfiguration, family: IPFamily, given: string[] | undefined, logger: Logger): Promise<TraceRules> {
  const executor = new ExecaCommandExecutor();
  const registry = await loadBackends(config, logger);
  const live = await readLiveRules(registry, config.mode, executor, family);
  logger.info('Read the kernel rules', { mode: live.mode, family, source: live.snapshot.source });
  const addresses = given ?? (await hostAddresses(executor));
  return { ...live, node: { name: resolveNodeName(config.hostnameOverride), addresses } };
}

async function offlineRules(
  parsed: ParsedFlags,
  config: KubeProxyConfiguration,
  family: IPFamily,
  given: string[] | undefined,
  logger: Logger,
): Promise<TraceRules> {
  const offline = await renderOfflineRules(parsed, config, logger);
  const tracer = tracerOf(offline.run.registry, offline.plugin.name);
  const block = offline.blocks.get(family);
  if (block === undefined) {
    throw new TraceInputError(`the ${offline.plugin.name} rules of this node are ${offline.families.join(' and ')} only; nothing to trace a packet to ${family} over`);
  }
  const addresses = given ?? nodeObjectAddresses(offline.node);
  if (addresses.length === 0) logger.warn("The node's addresses are unknown (no Node object with addresses): no source counts as the node's own; give --node-address");
  return { mode: offline.plugin.name, tracer, snapshot: tracer.fromDryRun(block, family), node: { name: offline.run.nodeName, addresses } };
}
