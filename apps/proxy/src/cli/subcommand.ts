import { createLogger, parseFlags, type KubeProxyConfiguration, type ParsedFlags } from '@kube-proxy/core';
import { UnknownServiceError } from '../trace/explain-report.js';
import { parseSubcommandArgs, type Subcommand, type SubcommandArgs } from '../trace/subcommand-args.js';
import { explainHelp, traceHelp } from '../trace/subcommand-help.js';
import { TraceInputError } from '../trace/trace-packet.js';
import { knownFailure } from './cli-failure.js';
import { explainCommand } from './explain-command.js';
import { loadConfiguration } from './load-configuration.js';
import { quietLogger } from './quiet-logger.js';
import type { CliIO } from './run.js';
import { traceCommand } from './trace-command.js';

export const SUBCOMMANDS: readonly Subcommand[] = ['trace', 'explain'];

/**
 * `kube-proxy trace …` / `kube-proxy explain …`: stdout carries only the answer (text or one JSON
 * object); bad input is one line on stderr and exit 1.
 */
export async function runSubcommand(command: Subcommand, argv: readonly string[], io: CliIO): Promise<number> {
  const fail = (message: string, code = 1): number => {
    // One line, also when a tool's stderr (quoted in what was looked for) spans several.
    io.stderr.write(`kube-proxy ${command}: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return code;
  };
  try {
    const args = parseSubcommandArgs(command, argv);
    if (args.help) {
      io.stdout.write(command === 'trace' ? traceHelp() : explainHelp());
      return 0;
    }
    const parsed = parseFlags(args.proxyArgv);
    if (parsed.options.help) {
      io.stdout.write(command === 'trace' ? traceHelp() : explainHelp());
      return 0;
    }
    const { config } = await loadConfiguration(parsed);
    return await dispatch(command, args, parsed, config, io);
  } catch (err) {
    if (err instanceof TraceInputError || err instanceof UnknownServiceError) return fail(err.message);
    // Every refusal is bad input here (an unknown --proxy-mode included): exit 1.
    const known = knownFailure(err);
    if (known) return fail(known.message);
    // A bug, not bad input: the stack as it is.
    io.stderr.write(`kube-proxy ${command}: unexpected error: ${(err as Error).stack ?? String(err)}\n`);
    return 1;
  }
}

function dispatch(command: Subcommand, args: SubcommandArgs, parsed: ParsedFlags, config: KubeProxyConfiguration, io: CliIO): Promise<number> {
  const full = createLogger({ verbosity: config.logging.verbosity, format: config.logging.format, stream: io.stderr });
  const logger = parsed.values.has('v') ? full : quietLogger(full);
  for (const w of parsed.warnings) logger.warn(w);
  return command === 'trace' ? traceCommand(args, parsed, config, logger, io) : explainCommand(args, parsed, config, logger, io);
}
