import { findFlag, findShorthand } from '@kube-proxy/core';
import { TraceInputError } from './trace-packet.js';

export type Subcommand = 'trace' | 'explain';
export type OutputFormat = 'text' | 'json';

/** What `trace` / `explain` take besides the proxy's own flags. */
export interface SubcommandArgs {
  readonly help: boolean;
  readonly live: boolean;
  readonly output: OutputFormat;
  readonly from?: string;
  readonly to?: string;
  readonly protocol?: string;
  readonly inInterface?: string;
  /** --node-address, every occurrence (each may be comma-separated). */
  readonly nodeAddresses: readonly string[];
  /** explain's NAMESPACE/NAME. */
  readonly service?: string;
  /** Everything else: the proxy's flags, for core's parseFlags (which keeps their meaning). */
  readonly proxyArgv: readonly string[];
}

type OwnFlag = 'from' | 'to' | 'protocol' | 'live' | 'node-address' | 'in-interface' | 'output' | 'help';

const OWN: Record<Subcommand, readonly OwnFlag[]> = {
  trace: ['from', 'to', 'protocol', 'live', 'node-address', 'in-interface', 'output', 'help'],
  explain: ['live', 'output', 'help'],
};

interface Token {
  readonly flag: OwnFlag;
  readonly inline: string | undefined;
}

/** `--name[=v]` / `-o[=]v` / `-h` when it is one of the subcommand's own flags. */
function ownToken(arg: string, own: readonly OwnFlag[]): Token | undefined {
  if (arg === '-h') return { flag: 'help', inline: undefined };
  if (arg.startsWith('-o') && !arg.startsWith('--')) {
    const rest = arg.slice(2);
    return { flag: 'output', inline: rest === '' ? undefined : rest.replace(/^=/, '') };
  }
  if (!arg.startsWith('--')) return undefined;
  const eq = arg.indexOf('=');
  const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)).replaceAll('_', '-') as OwnFlag;
  if (!own.includes(name)) return undefined;
  return { flag: name, inline: eq < 0 ? undefined : arg.slice(eq + 1) };
}

/** Whether a proxy flag given as `arg` (no inline value) takes the next argument as its value. */
function proxyFlagTakesNext(arg: string): boolean {
  if (arg.includes('=')) return false;
  const spec = arg.startsWith('--') ? findFlag(arg.slice(2).replaceAll('_', '-')) : arg.length === 2 ? findShorthand(arg.slice(1)) : undefined;
  return spec !== undefined && spec.type !== 'bool';
}

function parseBool(flag: string, text: string | undefined): boolean {
  if (text === undefined || ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  throw new TraceInputError(`invalid argument ${JSON.stringify(text)} for "--${flag}" flag: must be true or false`);
}

/**
 * Splits a `trace` / `explain` command line (after the subcommand) into its own flags and the proxy's
 * flags. Own flags take `--flag=value` or `--flag value`; `-o json`, `-ojson` and `-o=json` as kubectl.
 */
export function parseSubcommandArgs(command: Subcommand, argv: readonly string[]): SubcommandArgs {
  const own = OWN[command];
  const values = new Map<OwnFlag, string[]>();
  const proxyArgv: string[] = [];
  const positionals: string[] = [];
  const next = (i: number): string => argv[i] ?? '';
  for (let i = 0; i < argv.length; i++) {
    const arg = next(i);
    const token = ownToken(arg, own);
    if (token) {
      let value = token.inline;
      if (value === undefined && token.flag !== 'live' && token.flag !== 'help') {
        if (i + 1 >= argv.length) throw new TraceInputError(`flag needs an argument: --${token.flag}`);
        value = next(++i);
      }
      values.set(token.flag, [...(values.get(token.flag) ?? []), value ?? '']);
      if (token.flag === 'help') break;
    } else if (arg.startsWith('-') && arg !== '-') {
      proxyArgv.push(arg);
      if (proxyFlagTakesNext(arg) && i + 1 < argv.length) proxyArgv.push(next(++i));
    } else {
      positionals.push(arg);
    }
  }
  return assemble(command, values, proxyArgv, positionals);
}

function assemble(command: Subcommand, values: Map<OwnFlag, string[]>, proxyArgv: string[], positionals: string[]): SubcommandArgs {
  const last = (flag: OwnFlag): string | undefined => values.get(flag)?.at(-1);
  const help = values.has('help');
  const output = last('output') ?? 'text';
  if (!help && output !== 'text' && output !== 'json') throw new TraceInputError(`unknown output format ${JSON.stringify(output)}: want text or json`);
  const live = values.has('live') ? parseBool('live', last('live') === '' ? undefined : last('live')) : false;
  if (!help && command === 'trace' && positionals.length > 0) {
    throw new TraceInputError(`trace takes no arguments, got ${JSON.stringify(positionals[0])} (the packet is --from and --to)`);
  }
  if (!help && command === 'explain' && positionals.length !== 1) {
    throw new TraceInputError(positionals.length === 0 ? 'explain needs the Service: NAMESPACE/NAME' : `explain takes one Service, got ${positionals.join(' ')}`);
  }
  const optional = (key: keyof SubcommandArgs, flag: OwnFlag) => (last(flag) === undefined ? {} : { [key]: last(flag) });
  const [service] = positionals;
  return {
    help,
    live,
    output: output as OutputFormat,
    nodeAddresses: (values.get('node-address') ?? []).flatMap((v) => v.split(',')).filter((v) => v.trim() !== ''),
    proxyArgv,
    ...optional('from', 'from'),
    ...optional('to', 'to'),
    ...optional('protocol', 'protocol'),
    ...optional('inInterface', 'in-interface'),
    ...(command === 'explain' && service !== undefined && positionals.length === 1 ? { service: checkServiceName(service) } : {}),
  };
}

/** NAMESPACE/NAME, both non-empty. */
export function checkServiceName(text: string): string {
  const parts = text.split('/');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
    throw new TraceInputError(`malformed Service ${JSON.stringify(text)}: want NAMESPACE/NAME`);
  }
  return text;
}
