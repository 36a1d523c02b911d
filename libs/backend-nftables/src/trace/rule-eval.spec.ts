import type { EvalEnv, FlowState } from './flow-state.js';
import type { NftRuleset } from './nft-ruleset.js';
import { evaluateRule } from './rule-eval.js';

const ruleset: NftRuleset = {
  family: 'ip',
  chains: new Map(),
  containers: new Map([
    ['ranges', { name: 'ranges', kind: 'set', elements: [{ key: '10.1.0.0/16' }, { key: '10.2.0.1-10.2.0.9' }] }],
    ['ports', { name: 'ports', kind: 'map', elements: [{ key: 'tcp . 30000-30010', value: 'goto np' }, { key: '17 . 53', value: 'drop', comment: 'ns/dns:dns' }] }],
    ['affinity-X', { name: 'affinity-X', kind: 'set', elements: [{ key: '10.0.0.2' }] }],
  ]),
};
const env: EvalEnv = { ruleset, nodeIPs: new Set(['192.168.0.2']) };
const state = (over: Partial<FlowState> = {}): FlowState => ({ saddr: '10.0.0.2', daddr: '172.30.0.1', proto: 'tcp', dport: 80, mark: 0, dnatted: false, ...over });
const outcome = (rule: string, s = state()) => evaluateRule(rule, s, env).outcome;

describe('reading one rule', () => {
  it('matches interfaces (with the listing quotes and prefix wildcards) from the input interface', () => {
    expect(outcome('iifname "cbr0" jump x', state({ iif: 'cbr0' }))).toEqual({ kind: 'jump', mode: 'jump', chain: 'x' });
    expect(outcome('iifname != veth* jump x', state({ iif: 'veth12' })).kind).toBe('nomatch');
    // Locally generated: no input interface, so only a negated match holds.
    expect(outcome('iifname cbr0 return').kind).toBe('nomatch');
    expect(outcome('iifname != cbr0 return')).toEqual({ kind: 'verdict', verdict: 'return' });
  });

  it('matches ports with their protocol, protocol sets, ranges and prefixes in named sets', () => {
    expect(outcome('tcp dport 80 drop').kind).toBe('verdict');
    expect(outcome('udp dport 80 drop').kind).toBe('nomatch');
    expect(outcome('meta l4proto { tcp, udp } drop').kind).toBe('verdict');
    expect(outcome('ip saddr @ranges drop', state({ saddr: '10.1.3.4' })).kind).toBe('verdict');
    expect(outcome('ip saddr @ranges drop', state({ saddr: '10.2.0.5' })).kind).toBe('verdict');
    expect(outcome('ip saddr @ranges drop', state({ saddr: '10.2.0.10' })).kind).toBe('nomatch');
    expect(outcome('meta l4proto . th dport vmap @ports', state({ dport: 30005 }))).toEqual({ kind: 'jump', mode: 'goto', chain: 'np' });
    const udp = evaluateRule('meta l4proto . th dport vmap @ports', state({ proto: 'udp', dport: 53 }), env);
    expect(udp.outcome).toEqual({ kind: 'verdict', verdict: 'drop' });
    expect(udp.hits).toEqual([{ container: 'ports', element: { key: '17 . 53', value: 'drop', comment: 'ns/dns:dns' } }]);
  });

  it('reads marks in both spellings (script and listing) and masquerade', () => {
    const s = state();
    expect(evaluateRule('mark set mark or 0x4000', s, env).marked).toBe(true);
    expect(s.mark).toBe(0x4000);
    expect(outcome('meta mark & 0x00004000 == 0x00000000 return', s).kind).toBe('nomatch');
    const m = evaluateRule('meta mark & 0x00004000 != 0x00000000 meta mark set meta mark ^ 0x00004000 masquerade fully-random', s, env);
    expect(m).toMatchObject({ masqueraded: true, outcome: { kind: 'verdict', verdict: 'accept' } });
    expect(s.mark).toBe(0);
  });

  it('ignores counters and comments, reads reject with a type, fib with negation, and DNAT forms', () => {
    expect(outcome('counter packets 3 bytes 180 reject with icmp type port-unreachable comment "x"')).toEqual({ kind: 'verdict', verdict: 'reject' });
    expect(outcome('fib daddr type != local drop', state({ daddr: '192.168.0.2' })).kind).toBe('nomatch');
    expect(outcome('meta l4proto tcp dnat to [fd00::1]:8080')).toEqual({ kind: 'dnat', ip: 'fd00::1', port: 8080 });
    expect(outcome('meta l4proto tcp dnat ip to numgen random mod 2 map { 0 : 10.0.0.1 . 80, 1 : 10.0.0.2 . 81 }')).toEqual({
      kind: 'endpoints',
      endpoints: [
        { ip: '10.0.0.1', port: 80 },
        { ip: '10.0.0.2', port: 81 },
      ],
    });
  });

  it('never matches a session-affinity set (a trace is of a new client), and says so', () => {
    const r = evaluateRule('ip saddr @affinity-X goto e', state(), env);
    expect(r).toMatchObject({ outcome: { kind: 'nomatch' }, affinity: true });
  });

  it('reports what it does not understand instead of guessing', () => {
    expect(outcome('ip dscp cs1 drop')).toEqual({ kind: 'unknown', rest: 'ip dscp cs1 drop' });
    expect(outcome('numgen random mod 3 vmap { 0 : goto a , 1 : goto b }')).toEqual({ kind: 'unknown', rest: 'numgen random mod 3 vmap { 0 : goto a , 1 : goto b }' });
  });
});
