import { forEachUDPFlow, parseFlowLine, type UDPFlow } from './conntrack-listing.js';

// `conntrack -L -p udp` lines as conntrack-tools v1.4.7 prints them (recorded in a scratch netns).
const LISTING = [
  'udp      17 59 src=10.244.1.13 dst=10.96.0.53 sport=40000 dport=53 [UNREPLIED] src=10.244.1.11 dst=10.244.1.13 sport=5353 dport=40000 mark=0 use=1',
  'udp      17 58 src=192.168.50.2 dst=192.168.50.1 sport=40002 dport=30053 src=10.244.1.12 dst=192.168.50.1 sport=5353 dport=40002 [ASSURED] mark=0 use=1',
  'udp      17 59 src=fd00::2 dst=fd00:96::53 sport=40003 dport=53 [UNREPLIED] src=fd00:244::11 dst=fd00::2 sport=5353 dport=40003 mark=0 use=1',
  'tcp      6 431999 ESTABLISHED src=10.244.1.13 dst=10.96.0.10 sport=5000 dport=80 src=10.244.1.11 dst=10.244.1.13 sport=8080 dport=5000 [ASSURED] mark=0 use=1',
  'udp      17 59 src=10.244.1.13 dst=10.96.0.53 sport=40000',
  '',
].join('\n');

describe('forEachUDPFlow', () => {
  it('reads the original destination and the reply source of every complete UDP line, nothing else', () => {
    const flows: UDPFlow[] = [];
    expect(forEachUDPFlow(LISTING, (f) => flows.push(f))).toBe(3);
    expect(flows).toEqual([
      { origDst: '10.96.0.53', origDstPort: 53, replySrc: '10.244.1.11', replySrcPort: 5353 },
      { origDst: '192.168.50.1', origDstPort: 30053, replySrc: '10.244.1.12', replySrcPort: 5353 },
      { origDst: 'fd00:96::53', origDstPort: 53, replySrc: 'fd00:244::11', replySrcPort: 5353 },
    ]);
  });

  it('copes with an empty listing and a last line without a newline', () => {
    expect(forEachUDPFlow('', () => undefined)).toBe(0);
    const line = LISTING.split('\n')[0] ?? '';
    expect(forEachUDPFlow(line, () => undefined)).toBe(1);
  });

  it('never reads a field of the next line', () => {
    const text = 'udp 17 1 src=1.1.1.1 dst=2.2.2.2 sport=1 dport=2\nudp 17 1 src=3.3.3.3 dst=4.4.4.4 sport=5 dport=6 src=7.7.7.7 dst=8.8.8.8 sport=9 dport=10';
    expect(parseFlowLine(text, 0, text.indexOf('\n'))).toBeUndefined();
    expect(forEachUDPFlow(text, () => undefined)).toBe(1);
  });
});
