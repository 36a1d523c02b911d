import { UnsafeRestoreTextError } from '@kube-proxy/core';
import { linkBatchLines, parseLinkBatchLine } from './link-batch.js';

describe('linkBatchLines', () => {
  it('writes the link, then the binds, then the unbinds, /32 for IPv4 and /128 for IPv6', () => {
    expect(linkBatchLines({ createLink: true, add: ['10.96.0.1', 'fd00::1'], remove: ['10.96.0.9'] })).toEqual([
      'link add kube-ipvs0 type dummy',
      'address add 10.96.0.1/32 dev kube-ipvs0',
      'address add fd00::1/128 dev kube-ipvs0',
      'address del 10.96.0.9/32 dev kube-ipvs0',
    ]);
  });

  it('writes nothing when there is nothing to do', () => {
    expect(linkBatchLines({ createLink: false, add: [], remove: [] })).toEqual([]);
  });

  it.each(['10.96.0.1/32', '10.96.0.1\nlink del lo', 'FD00::1', '010.96.0.1', ''])('refuses %j, which is not canonical address text', (bad) => {
    expect(() => linkBatchLines({ createLink: false, add: [bad], remove: [] })).toThrow(UnsafeRestoreTextError);
  });
});

describe('parseLinkBatchLine', () => {
  it('reads back every line linkBatchLines writes', () => {
    const lines = linkBatchLines({ createLink: true, add: ['10.96.0.1', 'fd00::1'], remove: ['fd00::2'] });
    expect(lines.map(parseLinkBatchLine)).toEqual([
      { op: 'link-add' },
      { op: 'address-add', address: '10.96.0.1' },
      { op: 'address-add', address: 'fd00::1' },
      { op: 'address-del', address: 'fd00::2' },
    ]);
  });

  it.each(['link del kube-ipvs0', 'address add 10.96.0.1/24 dev kube-ipvs0', 'address add fd00::1/32 dev kube-ipvs0', 'address add 10.96.0.1/32 dev eth0'])('refuses %j', (line) => {
    expect(() => parseLinkBatchLine(line)).toThrow(/not a line of the kube-ipvs0 batch/);
  });
});
