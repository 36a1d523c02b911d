import { FakeCommandExecutor, RecordingLogger } from '@kube-proxy/core/testing';
import { cleanupNftables } from './cleanup.js';

describe('cleanupNftables', () => {
  it('deletes the kube-proxy table of both families', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0 });
    expect(await cleanupNftables({ executor: exec, logger: new RecordingLogger() })).toBe(false);
    expect(exec.commandLines()).toEqual(['nft delete table ip kube-proxy', 'nft delete table ip6 kube-proxy']);
  });

  it('is quiet when a table does not exist (a clean node)', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: Could not process rule: No such file or directory\n' });
    const logger = new RecordingLogger();
    expect(await cleanupNftables({ executor: exec, logger })).toBe(false);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('reports any other failure', async () => {
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: Operation not permitted\n' });
    const logger = new RecordingLogger();
    expect(await cleanupNftables({ executor: exec, logger })).toBe(true);
    expect(logger.entries.some((e) => e.level === 'error' && /nftables/.test(e.message))).toBe(true);
  });
});
