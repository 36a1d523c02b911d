import { MemoryNft, NftRunError, NftTransaction } from '@kube-proxy/backend-nftables/internal';
import { RecordingNft, kernelMs } from './recording-nft.js';

const tableTx = () => new NftTransaction('ip').addTable().addChain('services');

describe('RecordingNft', () => {
  it('applies each transaction through the inner table and keeps its exact text and size', async () => {
    const inner = new MemoryNft('ip');
    const rec = new RecordingNft(inner);
    const tx = tableTx();
    await rec.run(tx);
    expect(await rec.tableExists()).toBe(true);
    const { runs } = rec.take();
    expect(runs).toHaveLength(1);
    expect(runs[0]!.text).toBe(tx.toString());
    expect(runs[0]!.operations).toBe(2);
    expect(runs[0]!.ms).toBeGreaterThanOrEqual(0);
  });

  it('passes table reads through and times them apart from the transactions', async () => {
    const rec = new RecordingNft(new MemoryNft('ip'));
    expect(await rec.readState()).toBeNull();
    await rec.run(tableTx());
    expect((await rec.readState())?.chains.map((c) => c.name)).toEqual(['services']);
    const taken = rec.take();
    expect(taken.runs).toHaveLength(1);
    expect(taken.readMs).toBeGreaterThan(0);
  });

  it('take() hands over the runs once, and empty transactions are not recorded', async () => {
    const rec = new RecordingNft(new MemoryNft('ip'));
    await rec.run(tableTx());
    await rec.run(new NftTransaction('ip'));
    expect(rec.take().runs).toHaveLength(1);
    expect(rec.take().runs).toHaveLength(0);
  });

  it('records nothing for a transaction the table refused, and lets the error through', async () => {
    const inner = new MemoryNft('ip');
    inner.failNext = 'Error: Could not process rule';
    const rec = new RecordingNft(inner);
    await expect(rec.run(tableTx())).rejects.toBeInstanceOf(NftRunError);
    expect(rec.take().runs).toHaveLength(0);
  });

  it('kernelMs sums the wall times of the runs', () => {
    expect(kernelMs([{ text: '', operations: 1, ms: 1.5 }, { text: '', operations: 1, ms: 2 }])).toBe(3.5);
  });
});
