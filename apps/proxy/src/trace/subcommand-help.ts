/** `kube-proxy trace --help` and `kube-proxy explain --help`. */

const PROXY_FLAGS_NOTE = [
  'The proxy\'s own flags keep their meaning (see kube-proxy --help): --proxy-mode, --manifests,',
  '--kubeconfig/--master, --hostname-override, --cluster-cidr, --detect-local-mode, --config, -v, ….',
];

export function traceHelp(): string {
  return [
    'kube-proxy trace: where a packet goes through the Service rules, and why.',
    '',
    'Usage:',
    '  kube-proxy trace [PROXY FLAGS] --from=IP[:PORT] --to=IP:PORT [--protocol=TCP|UDP|SCTP] [--live]',
    '                   [--node-address=IP]... [--in-interface=NAME] [-o text|json]',
    '',
    'Rules (exactly one source):',
    '  offline (default)   the rules --proxy-mode would program for the objects of --manifests or the API',
    '                      server, built as --dry-run builds them; nothing on the host is read or changed',
    "  --live              the rules in this host's kernel now (read-only); the mode is detected",
    '                      (nftables, ipvs, iptables, userspace) unless --proxy-mode is given',
    '',
    'Flags:',
    '      --from IP[:PORT]       source of the packet; one of the node\'s addresses = sent by the node (OUTPUT)',
    '      --to IP:PORT           destination ([IPv6]:PORT); its family picks the rules',
    '      --protocol string      TCP (default), UDP or SCTP',
    "      --live                 trace over this host's kernel rules instead of the offline rules",
    "      --node-address IP      the node's own addresses (repeatable); replaces the Node object's (offline)",
    "                             or the host's (--live)",
    '      --in-interface NAME    the interface the packet arrives on (interface-based local detection)',
    '  -o, --output string        text (default) or json (one JSON object: verdict, endpoints, masquerade,',
    '                             service, path, reason, …)',
    '',
    ...PROXY_FLAGS_NOTE,
    '',
    'Exit status: 0 when a trace was produced (whatever the verdict), 1 on bad input or no rules found.',
    '',
  ].join('\n');
}

export function explainHelp(): string {
  return [
    'kube-proxy explain: what one Service means on this node, port by port and family by family.',
    '',
    'Usage:',
    '  kube-proxy explain [PROXY FLAGS] [--live] NAMESPACE/NAME [-o text|json]',
    '',
    'For each port and IP family: the addresses it answers on by traffic class, the endpoints each class',
    'reaches and those left out (and why), masquerading, the source-range firewall, the health-check node',
    'port, and the kernel objects of the mode that belong to it with their rule counts. The objects come',
    'from --manifests or the API server (--kubeconfig/--master).',
    '',
    'Flags:',
    "      --live             also read this host's kernel (read-only) and report how it differs",
    '  -o, --output string    text (default) or json',
    '',
    ...PROXY_FLAGS_NOTE,
    '',
    'Exit status: 0 when explained, 1 on bad input or an unknown Service.',
    '',
  ].join('\n');
}
