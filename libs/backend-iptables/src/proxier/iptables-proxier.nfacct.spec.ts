import { FakeClock, FakeCommandExecutor, FakeSysctl, RecordingLogger, commandNotFound } from '@kube-proxy/core/testing';
import { NfacctClient, NfacctCounters } from '../nfacct/index.js';
import { IptablesProxier } from './iptables-proxier.js';
import type { PortSpec } from './testing/proxier-fixtures.js';
import { context, service, settle, slice, TestIptables } from './testing/proxier-fixtures.js';

// The proxier ensures upstream's two nfacct counters on full syncs and writes `-m nfacct` only into
// the rules whose counter exists; without nfacct it writes the plain rules, silently.

const NP: PortSpec[] = [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080, nodePort: 30080 }];
const INVALID_WITH = '-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP';
const INVALID_WITHOUT = '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP';
const LOCALHOST_NP = /-A KUBE-NODEPORTS -m comment --comment ns1\/web:http -m tcp -p tcp -d 127\.0\.0\.0\/8 --dport 30080 -m nfacct --nfacct-name localhost_nps_accepted_pkts -j KUBE-EXT-/;

async function firstPayload(exec: FakeCommandExecutor, withCounters = true): Promise<{ payload: string; logger: RecordingLogger }> {
  const ipt = new TestIptables('IPv4');
  const logger = new RecordingLogger();
  const clock = new FakeClock();
  const proxier = new IptablesProxier({
    family: 'IPv4',
    context: context({ dryRun: false }),
    iptables: ipt,
    executor: exec,
    sysctl: new FakeSysctl({ 'net/ipv4/conf/all/route_localnet': '0', 'net/netfilter/nf_conntrack_tcp_be_liberal': '0' }),
    clock,
    logger,
    networkInterfaces: () => ({}),
    ...(withCounters ? { nfacct: new NfacctCounters(new NfacctClient(exec, logger), clock) } : {}),
  });
  const loop = proxier.syncLoop();
  proxier.onServiceAdd(service('ns1', 'web', '10.96.0.10', NP, 'NodePort'));
  proxier.onEndpointSliceAdd(slice('ns1', 'web', 'web-1', NP, ['10.244.1.11']));
  proxier.onServicesSynced();
  proxier.onEndpointSlicesSynced();
  await settle();
  proxier.stop();
  await loop;
  return { payload: ipt.lastPayload, logger };
}

/** An executor where `nfacct get/add` succeed (the counters exist or are created). */
function withNfacct(): FakeCommandExecutor {
  return new FakeCommandExecutor().setDefault({ exitCode: 0 });
}

describe('IptablesProxier nfacct counters', () => {
  it('creates the counters and writes the INVALID drop and the localhost NodePort accept with their nfacct match', async () => {
    const exec = withNfacct();
    const { payload } = await firstPayload(exec);
    expect(exec.commandLines()).toEqual(
      expect.arrayContaining(['nfacct get ct_state_invalid_dropped_pkts', 'nfacct get localhost_nps_accepted_pkts']),
    );
    expect(payload).toContain(`${INVALID_WITH}\n`);
    expect(payload).not.toContain(`${INVALID_WITHOUT}\n`);
    expect(payload).toMatch(LOCALHOST_NP);
    // The unconditional NodePort rule stays as well.
    expect(payload).toContain('-A KUBE-NODEPORTS -m comment --comment ns1/web:http -m tcp -p tcp --dport 30080 -j KUBE-EXT-');
  });

  it('without the nfacct binary writes the rules without the match and logs nothing above verbose', async () => {
    const exec = withNfacct().on({ command: 'nfacct' }, commandNotFound('nfacct'));
    const { payload, logger } = await firstPayload(exec);
    expect(payload).toContain(`${INVALID_WITHOUT}\n`);
    expect(payload).not.toContain('nfacct');
    expect(logger.entries.filter((e) => /nfacct/i.test(e.message) && e.level !== 'verbose')).toEqual([]);
  });

  it('when the kernel refuses one counter, only the other one is matched on', async () => {
    const exec = withNfacct()
      .on({ command: 'nfacct', args: ['get', 'ct_state_invalid_dropped_pkts'] }, { exitCode: 1, stderr: 'nfacct v1.0.2: error: No such file or directory\n' })
      .on({ command: 'nfacct', args: ['add', 'ct_state_invalid_dropped_pkts'] }, { exitCode: 1, stderr: 'nfacct v1.0.2: error: Protocol not supported\n' });
    const { payload } = await firstPayload(exec);
    expect(payload).toContain(`${INVALID_WITHOUT}\n`);
    expect(payload).toMatch(LOCALHOST_NP);
  });

  it('without counters given (as in --dry-run) runs no nfacct and writes no match', async () => {
    const exec = withNfacct();
    const { payload } = await firstPayload(exec, false);
    expect(exec.commandLines().filter((l) => l.startsWith('nfacct'))).toEqual([]);
    expect(payload).not.toContain('nfacct');
  });
});
