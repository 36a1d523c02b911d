import { FakeClock, FakeCommandExecutor, RecordingLogger, commandNotFound } from '@kube-proxy/core/testing';
import { NfacctClient, parseNfacctList } from './nfacct-client.js';
import { NfacctCounters } from './nfacct-counters.js';

// Output as nfacct v1.0.2 prints it (captured in a network namespace on this kernel).
const LIST = [
  '{ pkts = 00000000000000000007, bytes = 00000000000000000420 } = ct_state_invalid_dropped_pkts;',
  '{ pkts = 00000000000000000012, bytes = 00000000000000000720 } = localhost_nps_accepted_pkts;',
  '{ pkts = 00000000000000000001, bytes = 00000000000000000060 } = someone_elses;',
  '',
].join('\n');

/** A fake `nfacct` binary holding counters in memory, with the real CLI's exit codes and messages. */
function fakeNfacct(initial: Record<string, number> = {}): { exec: FakeCommandExecutor; counters: Map<string, number> } {
  const counters = new Map(Object.entries(initial));
  const line = (name: string, pkts: number) =>
    `{ pkts = ${String(pkts).padStart(20, '0')}, bytes = ${String(pkts * 60).padStart(20, '0')} } = ${name};\n`;
  const exec = new FakeCommandExecutor().on({ command: 'nfacct' }, (call) => {
    const [verb, name] = call.args;
    if (verb === 'get') {
      const p = counters.get(name!);
      return p === undefined ? { exitCode: 1, stderr: 'nfacct v1.0.2: error: No such file or directory\n' } : { stdout: line(name!, p) };
    }
    if (verb === 'add') {
      if (counters.has(name!)) return { exitCode: 1, stderr: 'nfacct v1.0.2: error: Device or resource busy\n' };
      counters.set(name!, 0);
      return {};
    }
    if (verb === 'list') return { stdout: [...counters].map(([n, p]) => line(n, p)).join('') };
    return { exitCode: 1, stderr: 'unknown command\n' };
  });
  return { exec, counters };
}

describe('parseNfacctList', () => {
  it('reads packets and bytes per counter from `nfacct list` output', () => {
    const m = parseNfacctList(LIST);
    expect(m.get('ct_state_invalid_dropped_pkts')).toEqual({ packets: 7, bytes: 420 });
    expect(m.get('localhost_nps_accepted_pkts')).toEqual({ packets: 12, bytes: 720 });
    expect(m.size).toBe(3);
    expect(parseNfacctList('').size).toBe(0);
  });
});

describe('NfacctClient.ensure', () => {
  it('creates a missing counter (get, then add) with argument arrays, and only gets an existing one', async () => {
    const { exec, counters } = fakeNfacct({ localhost_nps_accepted_pkts: 3 });
    const client = new NfacctClient(exec, new RecordingLogger());
    expect(await client.ensure('ct_state_invalid_dropped_pkts')).toBe(true);
    expect(await client.ensure('localhost_nps_accepted_pkts')).toBe(true);
    expect(exec.calls.map((c) => [c.command, ...c.args])).toEqual([
      ['nfacct', 'get', 'ct_state_invalid_dropped_pkts'],
      ['nfacct', 'add', 'ct_state_invalid_dropped_pkts'],
      ['nfacct', 'get', 'localhost_nps_accepted_pkts'],
    ]);
    expect(counters.get('ct_state_invalid_dropped_pkts')).toBe(0);
    expect(counters.get('localhost_nps_accepted_pkts')).toBe(3);
  });

  it('without the nfacct binary: false, a verbose log line only, and nothing is run again', async () => {
    const exec = new FakeCommandExecutor().on({ command: 'nfacct' }, commandNotFound('nfacct'));
    const logger = new RecordingLogger();
    const client = new NfacctClient(exec, logger);
    expect(await client.ensure('ct_state_invalid_dropped_pkts')).toBe(false);
    expect(await client.ensure('localhost_nps_accepted_pkts')).toBe(false);
    expect(await client.list()).toBeUndefined();
    expect(exec.calls).toHaveLength(1);
    expect(client.unavailableReason).toContain('ENOENT');
    expect(logger.entries.filter((e) => e.level !== 'verbose' && e.level !== 'debug')).toEqual([]);
  });

  it('when the kernel refuses (no nfnetlink_acct): false, verbose log only', async () => {
    const refuse = { exitCode: 1, stderr: 'nfacct v1.0.2: error: Protocol not supported\n' };
    const exec = new FakeCommandExecutor().on({ command: 'nfacct' }, refuse);
    const logger = new RecordingLogger();
    const client = new NfacctClient(exec, logger);
    expect(await client.ensure('ct_state_invalid_dropped_pkts')).toBe(false);
    expect(logger.entries.filter((e) => e.level !== 'verbose' && e.level !== 'debug')).toEqual([]);
    expect(JSON.stringify(logger.entries)).toContain('Protocol not supported');
  });
});

describe('NfacctCounters', () => {
  it('ensures both counters and reports which exist, in renderRuleset\'s nfacct shape', async () => {
    const { exec } = fakeNfacct();
    const counters = new NfacctCounters(new NfacctClient(exec, new RecordingLogger()), new FakeClock());
    expect(counters.presence()).toEqual({ ctStateInvalidDropped: false, localhostNodePortAccepted: false });
    expect(await counters.ensure()).toEqual({ ctStateInvalidDropped: true, localhostNodePortAccepted: true });
  });

  it('reports only the counter the kernel accepted', async () => {
    const { exec } = fakeNfacct();
    exec.on({ command: 'nfacct', args: ['add', 'localhost_nps_accepted_pkts'] }, { exitCode: 1, stderr: 'nfacct v1.0.2: error: Cannot allocate memory\n' });
    const counters = new NfacctCounters(new NfacctClient(exec, new RecordingLogger()), new FakeClock());
    expect(await counters.ensure()).toEqual({ ctStateInvalidDropped: true, localhostNodePortAccepted: false });
  });

  it('reads packet counts with one `nfacct list`, cached for a second, and only of counters that exist', async () => {
    const { exec, counters: kernel } = fakeNfacct({ someone_elses: 9 });
    const clock = new FakeClock();
    const counters = new NfacctCounters(new NfacctClient(exec, new RecordingLogger()), clock);
    expect(await counters.readPackets()).toEqual({}); // nothing ensured yet: nothing to export
    clock.advance(1000);
    await counters.ensure();
    kernel.set('ct_state_invalid_dropped_pkts', 4);
    kernel.set('localhost_nps_accepted_pkts', 11);
    const before = exec.calls.length;
    expect(await counters.readPackets()).toEqual({ ct_state_invalid_dropped_pkts: 4, localhost_nps_accepted_pkts: 11 });
    kernel.set('localhost_nps_accepted_pkts', 15);
    clock.advance(500);
    expect(await counters.readPackets()).toEqual({ ct_state_invalid_dropped_pkts: 4, localhost_nps_accepted_pkts: 11 });
    clock.advance(500);
    expect(await counters.readPackets()).toEqual({ ct_state_invalid_dropped_pkts: 4, localhost_nps_accepted_pkts: 15 });
    expect(exec.calls.slice(before).map((c) => c.args.join(' '))).toEqual(['list', 'list']);
  });

  it('reads nothing when nfacct is missing', async () => {
    const exec = new FakeCommandExecutor().on({ command: 'nfacct' }, commandNotFound('nfacct'));
    const counters = new NfacctCounters(new NfacctClient(exec, new RecordingLogger()), new FakeClock());
    expect(await counters.ensure()).toEqual({ ctStateInvalidDropped: false, localhostNodePortAccepted: false });
    expect(await counters.readPackets()).toEqual({});
  });
});
