import { KUBE_PROXY_FLAGS, type FlagGroup, type FlagSpec, type FlagValue } from './flag-table.js';

const GROUP_TITLES: Record<FlagGroup, string> = {
  proxy: 'Flags',
  logging: 'Logging flags',
  'kube-proxy-ts': 'kube-proxy-ts flags',
  klog: '',
};

const TYPE_NAMES: Record<FlagSpec['type'], string> = {
  bool: '',
  string: 'string',
  int: 'int',
  float: 'float',
  duration: 'duration',
  stringList: 'strings',
  mapStringBool: 'mapStringBool',
};

/**
 * The --help text, laid out like pflag's usage (`  -v, --v int   help (default 0)`). Deprecated and
 * no-effect legacy flags are accepted but not listed, as pflag hides deprecated flags.
 */
export function formatHelp(): string {
  const lines: string[] = [
    'kube-proxy-ts: the Kubernetes network proxy, in TypeScript.',
    '',
    'It runs on each node and keeps the node\'s packet-forwarding rules (iptables, IPVS, nftables or a',
    'plugin backend) in step with the Services and EndpointSlices of the cluster.',
    '',
    'Usage:',
    '  kube-proxy [flags]',
    '  kube-proxy trace [flags] --from=IP[:PORT] --to=IP:PORT [--protocol=TCP|UDP|SCTP] [--live] [-o text|json]',
    '  kube-proxy explain [flags] [--live] NAMESPACE/NAME [-o text|json]',
    '',
    'Commands:',
    '  trace     Say where one packet goes through the Service rules and why (offline, or --live on this node)',
    '  explain   Say what one Service means on this node: addresses, endpoints, masquerade, kernel objects',
    '',
    'Each command takes the flags below, plus its own (kube-proxy trace --help, kube-proxy explain --help).',
  ];
  for (const group of ['proxy', 'logging', 'kube-proxy-ts'] as const) {
    const specs = KUBE_PROXY_FLAGS.filter((f) => f.group === group && !f.deprecated && !(f.noEffect && group !== 'logging'));
    const heads = specs.map(head);
    const width = Math.max(...heads.map((h) => h.length)) + 3;
    lines.push('', `${GROUP_TITLES[group]}:`);
    specs.forEach((spec, i) => {
      const text = describe(spec).split('\n');
      lines.push(heads[i].padEnd(width) + text[0]);
      for (const more of text.slice(1)) if (more !== '') lines.push(' '.repeat(width + 2) + more);
    });
  }
  const hidden = KUBE_PROXY_FLAGS.filter((f) => f.deprecated).map((f) => `--${f.name}`);
  lines.push('', `Also accepted, with a deprecation warning: ${hidden.join(', ')}.`);
  return lines.join('\n') + '\n';
}

function head(spec: FlagSpec): string {
  const short = spec.shorthand ? `-${spec.shorthand}, ` : '    ';
  const type = TYPE_NAMES[spec.type];
  return `  ${short}--${spec.name}${type ? ` ${type}` : ''}`;
}

function describe(spec: FlagSpec): string {
  const def = showDefault(spec.type, spec.default);
  return def === undefined ? spec.help : `${spec.help} (default ${def})`;
}

function showDefault(type: FlagSpec['type'], value: FlagValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (type === 'bool') return value === true ? 'true' : undefined;
  if (type === 'string') return value === '' ? undefined : JSON.stringify(value);
  if (Array.isArray(value)) return value.length ? `[${value.join(',')}]` : undefined;
  return String(value);
}
