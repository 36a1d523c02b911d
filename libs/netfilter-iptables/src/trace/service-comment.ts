/*
 * kube-proxy (upstream's and ours) names the Service port a rule belongs to in its comment, as
 * upstream's ServicePortName.String() spells it: `ns/name:port` (`ns/name` for an unnamed port),
 * followed by what the rule is for ("ns1/svc1:p80 cluster IP", "ns/svc:p has no endpoints",
 * "masquerade traffic for ns/svc:p external destinations", "ns/svc:p -> 10.0.0.1:80" …).
 */

// namespace (DNS label) / name (DNS label) [:port name (IANA service name)]
const SERVICE_PORT = /(?:^|\s)([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\/([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)(?::([a-z0-9](?:[-a-z0-9]*[a-z0-9])?))?(?=\s|$)/;

/**
 * The Service port a rule comment names, as PacketTrace.service spells it: `namespace/name:portName`
 * (portName empty for an unnamed port); undefined when the comment names none.
 */
export function servicePortOfComment(comment: string | undefined): string | undefined {
  if (comment === undefined) return undefined;
  const m = SERVICE_PORT.exec(comment);
  if (m === null) return undefined;
  return `${m[1]}/${m[2]}:${m[3] ?? ''}`;
}
