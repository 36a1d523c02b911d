/**
 * Test support of @kube-proxy/netfilter-iptables (`@kube-proxy/netfilter-iptables/testing`), for specs
 * and test fixtures only: ports of upstream's pkg/util/iptables/testing, the fake iptables its
 * proxier tests restore into and the iptables-save parser they compare payloads with.
 */
export { FakeIPTables } from './fake-iptables.js';
export {
  checkIPTablesRuleJumps,
  countRules,
  dumpToString,
  getChain,
  getTable,
  parseIPTablesDump,
  parseRule,
  sortIPTablesRules,
  type Chain,
  type IPTablesDump,
  type IPTablesValue,
  type Rule,
  type Table,
} from './iptables-dump.js';
export { UPSTREAM_TRACE_PACKET_DUMP } from './upstream-trace-packet-dump.js';
