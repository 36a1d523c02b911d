import { MemoryNftTable, NftTransactionError } from './memory-table.js';
import { NftTransaction } from './nft-transaction.js';

function base(): NftTransaction {
  return new NftTransaction('ip').addTable().addMap({ name: 'm', type: 'ipv4_addr : verdict' }).addChain('a').addChain('b');
}

describe('MemoryNftTable', () => {
  it('applies a transaction and dumps it in nft.Dump() order: declarations, rules, then elements', () => {
    const t = new MemoryNftTable('ip');
    const tx = base().addRule('b', 'jump a').addElement('m', { key: '1.2.3.4', value: 'goto a' }).addSet({ name: 's', type: 'ipv4_addr' });
    t.run(tx.lines);
    expect(t.dump().split('\n').filter(Boolean)).toEqual([
      'add table ip kube-proxy { comment "rules for kube-proxy" ; }',
      'add chain ip kube-proxy a',
      'add chain ip kube-proxy b',
      'add set ip kube-proxy s { type ipv4_addr ; }',
      'add map ip kube-proxy m { type ipv4_addr : verdict ; }',
      'add rule ip kube-proxy b jump a',
      'add element ip kube-proxy m { 1.2.3.4 : goto a }',
    ]);
  });

  it('is atomic: a bad line undoes every line before it, and names the line', () => {
    const t = new MemoryNftTable('ip');
    t.run(base().lines);
    const before = t.dump();
    const tx = new NftTransaction('ip').addChain('c').addRule('c', 'jump a').flushChain('a').addRule('a', 'goto missing');
    let error: unknown;
    try {
      t.run(tx.lines);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(NftTransactionError);
    expect((error as NftTransactionError).line).toBe(4);
    expect(t.dump()).toBe(before);
  });

  it('refuses to delete a chain or set that a rule or element still references', () => {
    const t = new MemoryNftTable('ip');
    t.run(base().addRule('b', 'goto a').addSet({ name: 's', type: 'ipv4_addr' }).addRule('b', 'ip saddr @s drop').lines);
    expect(() => t.run(new NftTransaction('ip').deleteChain('a').lines)).toThrow(/busy/);
    expect(() => t.run(new NftTransaction('ip').deleteSet('s').lines)).toThrow(/busy/);
    t.run(new NftTransaction('ip').flushChain('b').deleteChain('a').deleteSet('s').lines);
    expect(t.chainNames()).toEqual(['b']);
  });

  it('keeps map elements by key: an equal re-add is a no-op, another value needs delete first', () => {
    const t = new MemoryNftTable('ip');
    t.run(base().addElement('m', { key: '1.2.3.4', value: 'goto a' }).lines);
    t.run(new NftTransaction('ip').addElement('m', { key: '1.2.3.4', value: 'goto a' }).lines);
    expect(() => t.run(new NftTransaction('ip').addElement('m', { key: '1.2.3.4', value: 'goto b' }).lines)).toThrow(/exists/);
    t.run(new NftTransaction('ip').deleteElement('m', '1.2.3.4').addElement('m', { key: '1.2.3.4', comment: 'ns/s:p', value: 'goto b' }).lines);
    expect([...t.elementsOf('m')!.values()]).toEqual(['1.2.3.4 comment "ns/s:p" : goto b']);
    expect(() => t.run(new NftTransaction('ip').deleteElement('m', '9.9.9.9').lines)).toThrow(/No such/);
  });

  it('refuses lines for another family or table, and work on a table that does not exist', () => {
    const t = new MemoryNftTable('ip6');
    expect(() => t.run(['add table ip kube-proxy'])).toThrow(/not this table/);
    expect(() => t.run(['add chain ip6 kube-proxy x'])).toThrow(/No such/);
  });

  it('delete table drops everything, and is undone with the rest of a failed transaction', () => {
    const t = new MemoryNftTable('ip');
    t.run(base().addRule('b', 'jump a').lines);
    const before = t.dump();
    expect(() => t.run(new NftTransaction('ip').deleteTable().addChain('x').lines)).toThrow();
    expect(t.dump()).toBe(before);
    t.run(new NftTransaction('ip').deleteTable().lines);
    expect(t.tableExists).toBe(false);
    expect(t.dump()).toBe('');
  });
});
