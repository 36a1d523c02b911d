/**
 * The first sync's reconciliation with the kernel's conntrack table (issue 23 item 5a, upstream issue
 * #122740): a restart keeps the UDP flows that still reach a serving endpoint and deletes only stale ones.
 */
import type { Endpoint } from '../semantics/model/endpoint.js';
import type { ServicePort } from '../semantics/model/service-port.js';
import { servicePortName } from '../semantics/model/service-port-name.js';
import { testServicePort } from '../testing/test-service-port.js';
import { FakeCommandExecutor, RecordingLogger } from '../testing/host-fakes.js';
import type { AppliedChanges, EndpointsMap, ServicePortMap } from '../semantics/tracking/types.js';
import { ConntrackCleaner } from './conntrack-cleaner.js';

const DNS = testServicePort({
  name: servicePortName('kube-system', 'dns', 'dns', 'UDP'),
  clusterIP: '10.96.0.53',
  port: 53,
  protocol: 'UDP',
  nodePort: 30053,
  externalIPs: ['192.168.1.10'],
  externallyAccessible: true,
});
const QUIC = testServicePort({ name: servicePortName('web', 'quic', 'h3', 'UDP'), clusterIP: '10.96.0.80', port: 443, protocol: 'UDP' });
const WEB_TCP = testServicePort({ name: servicePortName('web', 'quic', 'https', 'TCP'), clusterIP: '10.96.0.80', port: 443, protocol: 'TCP' });

function ep(ip: string, port: number, o: { serving?: boolean } = {}): Endpoint {
  const serving = o.serving ?? true;
  return {
    ip,
    port,
    key: ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`,
    ready: serving,
    serving,
    terminating: false,
    isLocal: false,
    nodeName: 'n1',
    zone: '',
    zoneHints: null,
    nodeHints: null,
  };
}

function maps(entries: [ServicePort, Endpoint[]][]): { services: ServicePortMap; endpoints: EndpointsMap } {
  return {
    services: new Map(entries.map(([s]) => [s.name.key, s])),
    endpoints: new Map(entries.map(([s, e]) => [s.name.key, e])),
  };
}

/** One `conntrack -L -p udp` line: client → frontend, answered by `reply`. */
function flow(client: string, sport: number, dst: string, dport: number, reply: string, replyPort: number): string {
  return `udp      17 29 src=${client} dst=${dst} sport=${sport} dport=${dport} src=${reply} dst=${client} sport=${replyPort} dport=${sport} mark=0 use=1`;
}

const LISTING = [
  flow('10.244.1.13', 40000, '10.96.0.53', 53, '10.244.1.11', 5353), // dns → pod1
  flow('10.244.1.14', 40001, '10.96.0.53', 53, '10.244.1.12', 5353), // dns → pod2
  flow('192.168.50.2', 40002, '192.168.50.1', 30053, '10.244.1.12', 5353), // NodePort → pod2
  flow('192.168.50.2', 40003, '192.168.1.10', 53, '10.244.1.11', 5353), // external IP → pod1
  flow('10.244.1.13', 40004, '10.96.0.80', 443, '10.244.1.21', 8443), // QUIC → pod21
  flow('10.244.1.13', 40005, '8.8.8.8', 53, '8.8.8.8', 53), // not ours
].join('\n');

function changes(): AppliedChanges {
  return {
    services: { updatedServices: new Set(), deletedUDPClusterIPs: new Set() },
    endpoints: { updatedServices: new Set(), deletedUDPEndpoints: [], newlyActiveUDPServices: [], lastChangeTriggerTimes: new Map() },
  };
}

function cleaner(listing: string | undefined, family: 'IPv4' | 'IPv6' = 'IPv4'): { c: ConntrackCleaner; exec: FakeCommandExecutor } {
  const exec = new FakeCommandExecutor().setDefault({});
  if (listing !== undefined) exec.on((call) => call.args[0] === '-L', { stdout: listing, stderr: 'conntrack v1.4.7 (conntrack-tools): 6 flow entries have been shown.\n' });
  else exec.on((call) => call.args[0] === '-L', { exitCode: null, spawnError: 'spawn conntrack ENOENT' });
  return { c: new ConntrackCleaner({ family, executor: exec, logger: new RecordingLogger() }), exec };
}

/** Every deletion, run alone or as a line of a `conntrack -R -` batch, as a `conntrack …` command line. */
function deletes(exec: FakeCommandExecutor): string[] {
  return exec.calls.flatMap((call) => {
    if (call.args[0] === '-R') {
      const input = typeof call.options.input === 'string' ? call.options.input : '';
      return input.split('\n').filter((l) => l !== '').map((l) => `conntrack ${l}`);
    }
    return call.args[0] === '-D' ? [[call.command, ...call.args].join(' ')] : [];
  });
}

/** Runs the first sync over `entries` with the kernel listing `listing`; returns the executor it ran on. */
async function firstSync(
  entries: [ServicePort, Endpoint[]][],
  listing: string = LISTING,
  family: 'IPv4' | 'IPv6' = 'IPv4',
): Promise<FakeCommandExecutor> {
  const m = maps(entries);
  const { c, exec } = cleaner(listing, family);
  await c.cleanAfterSync(m.services, m.endpoints, changes());
  return exec;
}

describe('ConntrackCleaner reconciliation (first sync after a start)', () => {
  it('deletes nothing when every flow still reaches a serving endpoint of its frontend', async () => {
    const exec = await firstSync([
      [DNS, [ep('10.244.1.11', 5353), ep('10.244.1.12', 5353)]],
      [QUIC, [ep('10.244.1.21', 8443)]],
      [WEB_TCP, [ep('10.244.1.21', 8443)]],
    ]);
    expect(exec.commandLines()).toEqual(['conntrack -L -p udp -f ipv4']);
  });

  it('an endpoint gone: only the flows DNATed to it go, for every frontend of its service', async () => {
    const exec = await firstSync([
      [DNS, [ep('10.244.1.11', 5353), ep('10.244.1.13', 5353)]],
      [QUIC, [ep('10.244.1.21', 8443)]],
    ]);
    expect(deletes(exec)).toEqual([
      'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.12 --reply-port-src 5353',
      'conntrack -D -p udp --orig-port-dst 30053 --reply-src 10.244.1.12 --reply-port-src 5353',
    ]);
  });

  it('an endpoint that is no longer serving, or whose port changed, is stale too', async () => {
    const exec = await firstSync([
      [DNS, [ep('10.244.1.11', 5354), ep('10.244.1.12', 5353, { serving: false })]],
      [QUIC, [ep('10.244.1.21', 8443)]],
    ]);
    expect(deletes(exec)).toEqual([
      'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.11 --reply-port-src 5353',
      'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.12 --reply-port-src 5353',
      'conntrack -D -p udp --orig-port-dst 30053 --reply-src 10.244.1.12 --reply-port-src 5353',
      'conntrack -D -p udp --orig-dst 192.168.1.10 --orig-port-dst 53 --reply-src 10.244.1.11 --reply-port-src 5353',
    ]);
  });

  it('a service gone while its ClusterIP stays (its UDP port removed): its flows go; a service without endpoints loses all flows', async () => {
    // QUIC's UDP port is gone, the TCP port of the same ClusterIP remains; dns has no serving endpoint.
    const exec = await firstSync([
      [DNS, [ep('10.244.1.11', 5353, { serving: false })]],
      [WEB_TCP, [ep('10.244.1.21', 8443)]],
    ]);
    expect(deletes(exec)).toEqual([
      'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.11 --reply-port-src 5353',
      'conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.12 --reply-port-src 5353',
      'conntrack -D -p udp --orig-port-dst 30053 --reply-src 10.244.1.12 --reply-port-src 5353',
      'conntrack -D -p udp --orig-dst 192.168.1.10 --orig-port-dst 53 --reply-src 10.244.1.11 --reply-port-src 5353',
      'conntrack -D -p udp --orig-dst 10.96.0.80 --orig-port-dst 443 --reply-src 10.244.1.21 --reply-port-src 8443',
    ]);
  });

  it('"black hole" flows (answered by the frontend itself, created before the rules existed) go', async () => {
    const listing = [flow('10.244.1.13', 40000, '10.96.0.53', 53, '10.96.0.53', 53), flow('10.244.1.14', 40001, '10.96.0.53', 53, '10.244.1.11', 5353)].join('\n');
    const exec = await firstSync([[DNS, [ep('10.244.1.11', 5353)]]], listing);
    expect(deletes(exec)).toEqual(['conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.96.0.53 --reply-port-src 53']);
  });

  it('many clients of one stale endpoint cost one deletion; a NodePort number that is also a frontend port is judged by the frontend', async () => {
    const np = testServicePort({ name: servicePortName('a', 'np', 'p', 'UDP'), clusterIP: '10.96.0.60', port: 60, protocol: 'UDP', nodePort: 53 });
    const listing = Array.from({ length: 50 }, (_, i) => flow(`10.244.2.${i + 1}`, 41000 + i, '10.96.0.53', 53, '10.244.1.11', 5353))
      .concat(Array.from({ length: 50 }, (_, i) => flow(`10.244.2.${i + 1}`, 42000 + i, '10.96.0.53', 53, '10.244.1.99', 5353)))
      .join('\n');
    const exec = await firstSync(
      [
        [DNS, [ep('10.244.1.11', 5353)]],
        [np, [ep('10.244.1.30', 6000)]],
      ],
      listing,
    );
    expect(deletes(exec)).toEqual(['conntrack -D -p udp --orig-dst 10.96.0.53 --orig-port-dst 53 --reply-src 10.244.1.99 --reply-port-src 5353']);
  });

  it('IPv6: lists with -f ipv6 and compares canonical text', async () => {
    const v6 = testServicePort({ name: servicePortName('a', 'dns6', 'dns', 'UDP'), family: 'IPv6', clusterIP: 'fd00:96::53', port: 53, protocol: 'UDP' });
    const listing = [flow('fd00::2', 40000, 'fd00:96::53', 53, 'fd00:244::11', 5353), flow('fd00::2', 40001, 'fd00:96:0::53', 53, 'fd00:244::12', 5353)].join('\n');
    const exec = await firstSync([[v6, [ep('fd00:244::11', 5353)]]], listing, 'IPv6');
    expect(exec.commandLines()).toEqual(['conntrack -L -p udp -f ipv6', 'conntrack -R -']);
    expect(deletes(exec)).toEqual([
      'conntrack -D -p udp --orig-dst fd00:96::53 --orig-port-dst 53 --reply-src fd00:244::12 --reply-port-src 5353 -f ipv6',
    ]);
  });

  it('all deletions go in one `conntrack -R -` batch; a conntrack without -R gets them one by one', async () => {
    const m = maps([[DNS, [ep('10.244.1.13', 5353)]]]);
    const batched = cleaner(LISTING);
    await batched.c.cleanAfterSync(m.services, m.endpoints, changes());
    expect(batched.exec.commandLines()).toEqual(['conntrack -L -p udp -f ipv4', 'conntrack -R -']);
    expect(batched.exec.calls[1]?.options.discardStdout).toBe(true);
    const expected = deletes(batched.exec);
    expect(expected).toHaveLength(4);

    const old = cleaner(LISTING);
    old.exec.on((call) => call.args[0] === '-R', { exitCode: 2, stderr: "conntrack: invalid option -- 'R'\n" });
    await old.c.cleanAfterSync(m.services, m.endpoints, changes());
    expect(old.exec.commandLines()).toEqual(['conntrack -L -p udp -f ipv4', 'conntrack -R -', ...expected]);
  });

  it('only the first sync reconciles; later syncs clear by their changes', async () => {
    const m = maps([[DNS, [ep('10.244.1.11', 5353)]]]);
    const { c, exec } = cleaner(LISTING);
    await c.cleanAfterSync(m.services, m.endpoints, changes());
    exec.calls.length = 0;
    const later: AppliedChanges = { ...changes(), services: { updatedServices: new Set(), deletedUDPClusterIPs: new Set(['10.96.0.80']) } };
    await c.cleanAfterSync(m.services, m.endpoints, later);
    expect(exec.commandLines()).toEqual(['conntrack -D --orig-dst 10.96.0.80 -p udp']);
  });

  it('when the table cannot be listed, the first sync falls back to the event-driven cleanup', async () => {
    const m = maps([[DNS, [ep('10.244.1.11', 5353)]]]);
    const { c, exec } = cleaner(undefined);
    const first: AppliedChanges = {
      ...changes(),
      endpoints: { ...changes().endpoints, newlyActiveUDPServices: [DNS.name] },
    };
    await c.cleanAfterSync(m.services, m.endpoints, first);
    expect(exec.commandLines()).toEqual([
      'conntrack -L -p udp -f ipv4',
      'conntrack -D --orig-dst 10.96.0.53 -p udp',
      'conntrack -D --orig-dst 192.168.1.10 -p udp',
      'conntrack -D -p udp --orig-port-dst 30053',
    ]);
  });

  it('a listing line that is not address and port text never becomes an argument', async () => {
    const listing = 'udp 17 29 src=1.2.3.4 dst=10.96.0.53 sport=1 dport=53 src=-F dst=1.2.3.4 sport=53 dport=1 mark=0';
    const exec = await firstSync([[DNS, [ep('10.244.1.11', 5353)]]], listing);
    expect(deletes(exec)).toEqual([]);
  });
});
