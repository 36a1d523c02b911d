import { MemoryIpvsTable } from './memory-ipvs-table.js';

function table(batch: string): MemoryIpvsTable {
  const t = new MemoryIpvsTable();
  expect(t.apply(batch)).toEqual([]);
  return t;
}

describe('MemoryIpvsTable (ipvsadm --restore as ipvsadm 1.31 did in the QEMU guest)', () => {
  it('adds, edits and deletes virtual and real servers', () => {
    const t = table('-A -t 10.96.0.10:80 -s rr -p 100\n-a -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 1\n-a -t 10.96.0.10:80 -r 10.1.1.2:80 -m -w 1\n-A -u 10.96.0.53:53 -s rr\n');
    expect(t.apply('-E -t 10.96.0.10:80 -s mh -b mh-port\n-e -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 0\n-d -t 10.96.0.10:80 -r 10.1.1.2:80\n-D -u 10.96.0.53:53\n')).toEqual([]);
    expect(t.list()).toEqual([
      {
        protocol: 'TCP', address: '10.96.0.10', port: 80, key: '10.96.0.10:80/TCP', scheduler: 'mh', flags: ['mh-port'], persistenceTimeout: 0,
        realServers: [{ address: '10.1.1.1', port: 80, weight: 0, key: '10.1.1.1:80' }],
      },
    ]);
  });

  it('-E without -p clears persistence and keeps the real servers (as the guest showed)', () => {
    const t = table('-A -t 10.96.0.10:80 -s mh -p 100\n-a -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 0\n');
    t.apply('-E -t 10.96.0.10:80 -s rr\n');
    expect(t.list()[0]).toMatchObject({ scheduler: 'rr', persistenceTimeout: 0, realServers: [{ key: '10.1.1.1:80', weight: 0 }] });
  });

  it("tries every line and returns ipvsadm's message for each failed one", () => {
    const t = table('-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1\n');
    const messages = t.apply(
      [
        '-A -t 10.96.0.10:80 -s rr',
        '-A -t 10.96.0.111:80 -s rr',
        '-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1',
        '-E -t 10.96.0.254:80 -s rr',
        '-D -t 10.96.0.254:80',
        '-d -t 10.96.0.10:80 -r 10.244.9.9:1',
        '-e -t 10.96.0.10:80 -r 10.244.9.9:1 -m -w 1',
        '-a -t 10.96.0.250:80 -r 10.1.1.1:1 -m -w 1',
        '-A -t 10.96.0.42:80 -s nosuchsched',
        '-Z --bogus',
        '-A -t 10.96.0.43:80 -s rr',
        '',
      ].join('\n'),
    );
    expect(messages.slice(0, 8)).toEqual([
      'Service already exists',
      'Destination already exists',
      'No such service',
      'No such service',
      'No such destination',
      'No such destination',
      'Service not defined',
      'Scheduler or persistence engine not found',
    ]);
    expect(messages[8]).toMatch(/"-Z" is not -A, -E, -D, -a, -e or -d/);
    expect(messages).toHaveLength(9);
    expect(t.list().map((v) => v.key)).toEqual(['10.96.0.10:80/TCP', '10.96.0.111:80/TCP', '10.96.0.43:80/TCP']);
  });

  it('knows where a real server is', () => {
    const t = table('-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.1.1.1:80 -m -w 1\n');
    expect([t.has('10.96.0.10:80/TCP'), t.has('10.96.0.10:80/TCP', '10.1.1.1:80'), t.has('10.96.0.10:80/TCP', '10.1.1.2:80'), t.has('10.96.0.10:80/UDP')]).toEqual([true, true, false, false]);
  });
});
