/**
 * Defence in depth against hostile names, proven with the real tools (issue 10): the renderers'
 * payloads for Services whose names would end a comment or a line (fed in directly, bypassing the
 * source edge's validation) are loaded into a fresh network namespace with the real
 * iptables-restore (nft and legacy): `--test` accepts them, a real restore programs exactly the
 * rules written (none in INPUT), and iptables-save reads back every comment as the text we meant.
 * It also checks, on the tool itself, the reading rules core's tokenizer, commentText and the dry-run
 * model are built on (quotes, backslashes, NUL, the 255-byte comment, the 10,240-byte line).
 * No proxy process; one bare namespace per variant (`kprn<pid>-node` / `kprl<pid>-node`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChainNameCache, renderRuleset } from '@kube-proxy/backend-iptables/internal';
import { InMemoryTables } from '@kube-proxy/netfilter-iptables';
import { renderCaptureRules, type CapturePortal } from '@kube-proxy/backend-userspace/internal';
import { HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { UnsafeRestoreTextError, assertRestorePayload, commentText, joinHostPort, nullLogger, servicePortsFromService, type Endpoint, type ServicePort, type ServicePortName } from '@kube-proxy/core';
import { tokenize } from '@kube-proxy/netfilter-iptables';
import { IPTABLES_VARIANTS, cleanupPrefix, cleanupStaleRuns, iptablesCommand, run, runPrefix, type CommandResult, type IptablesVariant } from '@kube-proxy/testing-netns';
import { INSTALL_HINT, e2ePreflight } from './support/preflight.js';

const pre = await e2ePreflight('hostile names');
const describeNetns = pre.run ? describe : describe.skip;

const TAGS: Record<IptablesVariant, string> = { nft: 'kprn', legacy: 'kprl' };

/** The Service found from outside, and every other hostile vector, each as its own Service. */
const ISSUE = { namespace: 'default', name: 'evil" -j ACCEPT\n-A INPUT -j ACCEPT\n#', port: 'x" -j ACCEPT #' };
const VECTORS = [ISSUE, ...HOSTILE_NAMES, { namespace: 'default', name: 'web', port: 'http' }];

function rawName(namespace: string, name: string, port: string): ServicePortName {
  const nn = `${namespace}/${name}`;
  return { namespace, name, port, protocol: 'TCP', key: port === '' ? nn : `${nn}:${port}` };
}

/** NodePort Services (cluster IP 10.96.1.N, node port 30000+N, one endpoint 10.244.1.N:8080), named by hand. */
function hostileState(): { serviceMap: Map<string, ServicePort>; endpointsMap: Map<string, Endpoint[]> } {
  const serviceMap = new Map<string, ServicePort>();
  const endpointsMap = new Map<string, Endpoint[]>();
  VECTORS.forEach((v, i) => {
    const [base] = servicePortsFromService(
      {
        metadata: { namespace: 'ns', name: `svc${i}` },
        spec: { type: 'NodePort', clusterIP: `10.96.1.${i + 1}`, ports: [{ name: 'p', port: 80, protocol: 'TCP', nodePort: 30000 + i }] },
      },
      'IPv4',
      nullLogger,
    );
    if (base === undefined) throw new Error('fixture service has no port');
    // Distinct prefixes keep long names distinct after they are cut to fit a comment.
    const name = rawName(`${i}-${v.namespace}`, v.name, v.port);
    serviceMap.set(name.key, { ...base, name });
    const ip = `10.244.1.${i + 1}`;
    endpointsMap.set(name.key, [
      { ip, port: 8080, key: joinHostPort(ip, 8080), ready: true, serving: true, terminating: false, isLocal: false, nodeName: 'node-2', zone: '', zoneHints: null, nodeHints: null },
    ]);
  });
  return { serviceMap, endpointsMap };
}

function iptablesPayload(): string {
  const { serviceMap, endpointsMap } = hostileState();
  return renderRuleset(
    { serviceMap, endpointsMap, changedServices: null, existingNatChains: null },
    {
      family: 'IPv4',
      nodeName: 'node-1',
      nodeIP: '192.168.50.1',
      masqueradeBit: 14,
      masqueradeAll: false,
      localhostNodePorts: true,
      randomFully: false,
      localDetector: { kind: 'cidr', cidr: '10.244.0.0/16' },
      nodePortAddresses: { all: true },
      nodeLabels: {},
    },
    new ChainNameCache(),
  ).payload;
}

function capturePayload(): string {
  const portals: CapturePortal[] = VECTORS.map((v, i) => ({
    name: rawName(`${i}-${v.namespace}`, v.name, v.port).key,
    protocol: 'TCP',
    clusterIP: `10.96.2.${i + 1}`,
    port: 80,
    externalIPs: [],
    loadBalancerIPs: [`203.0.113.${i + 1}`],
    nodePort: 31000 + i,
    internalProxyPort: 20000 + i,
    externalProxyPort: 20100 + i,
  }));
  return renderCaptureRules(portals, { family: 'IPv4', listenIP: '0.0.0.0', nodeIP: '192.168.50.1' }).payload;
}

/** `table/chain` → the comments of its rules, in order (iptables-save form or payload form alike). */
function commentsByChain(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let table = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    if (!line.startsWith('-A ')) continue;
    const tokens = tokenize(line);
    const key = `${table}/${tokens[1]}`;
    const list = out.get(key) ?? [];
    const at = tokens.indexOf('--comment');
    list.push(at < 0 ? '' : (tokens[at + 1] as string));
    out.set(key, list);
  }
  return out;
}

describeNetns.each(IPTABLES_VARIANTS)('hostile names through the real iptables-%s-restore', (variant) => {
  let ns = '';
  let prefix = '';
  let tmp = '';
  const env: Record<string, string> = {};

  const inNs = (tool: 'iptables-restore' | 'iptables-save', args: string[], input?: string): Promise<CommandResult> =>
    run('ip', ['netns', 'exec', ns, iptablesCommand(variant, tool), ...args], { env, allowFailure: true, timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

  beforeAll(async () => {
    if (pre.missingTools.length > 0) throw new Error(`missing tools: ${pre.missingTools.join(', ')}; install with: ${INSTALL_HINT}`);
    tmp = mkdtempSync(join(tmpdir(), `kp-hostile-${variant}-`));
    if (variant === 'legacy') env['XTABLES_LOCKFILE'] = join(tmp, 'xtables.lock');
    await cleanupStaleRuns(TAGS[variant]);
    prefix = runPrefix(TAGS[variant]);
    ns = `${prefix}-node`;
    await run('ip', ['netns', 'add', ns], { timeoutMs: 10_000 });
  }, 30_000);

  afterAll(async () => {
    if (prefix) await cleanupPrefix(prefix);
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it.each([
    ['iptables renderRuleset', iptablesPayload],
    ['userspace capture rules', capturePayload],
  ])('%s: accepted by --test, programs exactly the rules written, comments read back as meant', async (_label, payloadOf) => {
    const payload = payloadOf();
    // The Service found from outside is in it, only as comment-safe text.
    const issueComment = commentText(rawName(`0-${ISSUE.namespace}`, ISSUE.name, ISSUE.port).key);
    expect(payload).toContain(issueComment);
    expect(payload).not.toMatch(/^-A INPUT/m);

    // Start from empty filter and nat tables (this namespace only).
    const reset = await inNs('iptables-restore', ['-w', '5'], '*filter\nCOMMIT\n*nat\nCOMMIT\n');
    expect(reset.code).toBe(0);

    const test = await inNs('iptables-restore', ['-w', '5', '--noflush', '--test'], payload);
    expect({ code: test.code, stderr: test.stderr }).toEqual({ code: 0, stderr: '' });

    const restore = await inNs('iptables-restore', ['-w', '5', '--noflush'], payload);
    expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: '' });

    const save = await inNs('iptables-save', []);
    expect(save.code).toBe(0);
    // Nothing reached the built-in chains; every chain holds exactly the rules and comments written.
    expect(save.stdout).not.toMatch(/^-A (INPUT|FORWARD|OUTPUT|PREROUTING|POSTROUTING) /m);
    const written = commentsByChain(payload);
    const kernel = commentsByChain(save.stdout);
    for (const [chain, comments] of written) expect({ chain, comments: kernel.get(chain) }).toEqual({ chain, comments });
    expect([...kernel.keys()].filter((c) => !written.has(c))).toEqual([]);
    expect([...kernel.values()].flat().filter((c) => c.startsWith(issueComment)).length).toBeGreaterThan(0);
  });

  // The facts core's tokenizer, commentText and the dry-run model are built on, checked against the tool.
  it('reads arguments and lines as core and the dry-run model say it does', async () => {
    const load = async (rules: string): Promise<{ code: number | null; rules: string[] }> => {
      expect((await inNs('iptables-restore', ['-w', '5'], '*filter\nCOMMIT\n')).code).toBe(0);
      const r = await inNs('iptables-restore', ['-w', '5', '--noflush'], `*filter\n:KPRT - [0:0]\n${rules}COMMIT\n`);
      const saved = (await inNs('iptables-save', ['-t', 'filter'])).stdout;
      return { code: r.code, rules: saved.split('\n').filter((l) => l.startsWith('-A KPRT')) };
    };
    const savedComment = (rule: string): string | undefined => {
      const t = tokenize(rule);
      return t[t.indexOf('--comment') + 1];
    };

    // Inside quotes a backslash takes the next character literally; tab and space are kept.
    const quoted = '-A KPRT -m comment --comment "a\\"b\\\\c\\nd\te f" -j RETURN';
    let r = await load(`${quoted}\n`);
    expect(r.code).toBe(0);
    expect(r.rules.map(savedComment)).toEqual([savedComment(quoted)]);
    expect(savedComment(quoted)).toBe('a"b\\cnd\te f');

    // Outside quotes a backslash is an ordinary character.
    r = await load('-A KPRT -m comment --comment a\\b -j RETURN\n');
    expect([r.code, r.rules.map(savedComment)]).toEqual([0, ['a\\b']]);

    // The closing quote ends the argument: what follows is another argument (here a bad one).
    const glued = '-A KPRT -m comment --comment "a b"c -j RETURN';
    expect(tokenize(glued).slice(5, 7)).toEqual(['a b', 'c']);
    expect((await load(`${glued}\n`)).code).not.toBe(0);
    // Single quotes are not quotes.
    expect((await load("-A KPRT -m comment --comment 'c d' -j RETURN\n")).code).not.toBe(0);

    // A comment is at most 255 bytes (longer ones are cut by the tool): commentText's limit.
    const long = commentText('x'.repeat(400));
    r = await load(`-A KPRT -m comment --comment ${long} -j RETURN\n`);
    expect([r.code, r.rules.map(savedComment)]).toEqual([0, [long]]);

    // NUL: the tool silently drops the rest of the line (here the target), so core refuses it.
    const nul = '-A KPRT -m comment --comment "a\0" -j DROP\n';
    r = await load(nul);
    expect(r.code).toBe(0);
    expect(r.rules).toHaveLength(1);
    expect(r.rules[0]).not.toContain('-j DROP');
    expect(() => assertRestorePayload(`*filter\n${nul}COMMIT\n`)).toThrow(UnsafeRestoreTextError);
    expect(() => new InMemoryTables().restore(`*filter\n:KPRT - [0:0]\n${nul}COMMIT\n`, { noFlush: true })).toThrow(/NUL/);

    // A line longer than the tool's 10,240-byte read buffer: its tail is read as a rule of its own.
    const split = `-A KPRT -j RETURN${' '.repeat(10_300)}-A KPRT -j DROP\n`;
    r = await load(split);
    expect([r.code, r.rules]).toEqual([0, ['-A KPRT -j RETURN', '-A KPRT -j DROP']]);
    expect(() => assertRestorePayload(`*filter\n${split}COMMIT\n`)).toThrow(UnsafeRestoreTextError);
    expect(() => new InMemoryTables().restore(`*filter\n:KPRT - [0:0]\n${split}COMMIT\n`, { noFlush: true })).toThrow(/another line/);
  });
});
