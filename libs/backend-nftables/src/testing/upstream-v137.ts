/*
 * Upstream's newest readable expected dumps (pkg/proxy/nftables/proxier_test.go at kubernetes commit
 * edca5633aa54f69d9fa50f526fe3a8cabda69c91) predate kubernetes PR #140723 (v1.37): a Service with a
 * single endpoint and no session affinity then still got `… dnat ip addr . port to numgen random
 * mod 1 map { 0 : IP . PORT }`. Since #140723, as corrected for IPv6 by #140960 (nft aborted on the
 * `addr . port` form with an IPv6 constant), it gets no map at all but the plain endpoint DNAT.
 * withSingleEndpointDnat applies exactly that change to an edca5633 dump, so our specs compare
 * with upstream's verbatim text plus the one v1.37 difference, spelled out here once.
 */
const SINGLE = /^(.* meta l4proto (?:tcp|udp|sctp) dnat) (ip6?) addr \. port to numgen random mod 1 map \{ 0 : ([0-9a-fA-F.:]+) \. (\d+) \}$/;

/** One rule (or `add rule` line) in its v1.37 form. */
export function singleEndpointDnat(line: string): string {
  const m = SINGLE.exec(line);
  if (!m) return line;
  const target = m[2] === 'ip6' ? `[${m[3]}]:${m[4]}` : `${m[3]}:${m[4]}`;
  return `${m[1]} to ${target}`;
}

/** An upstream edca5633 dump with every single-endpoint DNAT map replaced as kubernetes PR #140723/#140960 do. */
export function withSingleEndpointDnat(dump: string): string {
  return dump
    .split('\n')
    .map((l) => singleEndpointDnat(l))
    .join('\n');
}
