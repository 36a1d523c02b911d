import { lineCount, measureEndpointChange, measureFullSync } from './ipvs-workload.js';

describe('IPVS benchmark workload', () => {
  it('the full sync batches hold every service with its 5 endpoints, its set entries and its bound address', () => {
    const full = measureFullSync(20);
    expect(full.state.virtualServers).toHaveLength(20);
    expect(full.state.virtualServers.every((vs) => vs.realServers.length === 5)).toBe(true);
    expect(lineCount(full.payloads.ipvsadm)).toBe(20 * 6);
    expect(full.payloads.ipvsadm).toMatch(/^-A -t 10\.96\.0\.1:80 -s rr$/m);
    expect(full.payloads.ipvsadm).toMatch(/^-a -t 10\.96\.0\.1:80 -r 10\.128\.0\.1:8080 -m -w 1$/m);
    const sets = full.state.ipsets.length;
    // One create line per catalogue set; a cluster IP entry and a bound-address entry per service;
    // one hairpin entry: service 0's first endpoint is on this node (node-0).
    expect(lineCount(full.payloads.ipset)).toBe(sets + 20 + 20 + 1);
    expect(full.payloads.ipset).toMatch(/^add KUBE-LOOP-BACK 10\.128\.0\.1,tcp:8080,10\.128\.0\.1$/m);
    expect(full.payloads.address.split('\n')[0]).toBe('link add kube-ipvs0 type dummy');
    expect(lineCount(full.payloads.address)).toBe(1 + 20);
  });

  it('one moved (node-local) endpoint is one real server and its hairpin entry out and in, nothing else', () => {
    const change = measureEndpointChange(measureFullSync(20));
    expect(change.payloads.ipvsadm).toBe(
      '-d -t 10.96.0.1:80 -r 10.128.0.1:8080\n-a -t 10.96.0.1:80 -r 10.143.66.65:8080 -m -w 1\n',
    );
    expect(change.payloads.ipset).toBe(
      'del KUBE-LOOP-BACK 10.128.0.1,tcp:8080,10.128.0.1\nadd KUBE-LOOP-BACK 10.143.66.65,tcp:8080,10.143.66.65\n',
    );
    expect(change.payloads.address).toBe('');
    expect(change.after.virtualServers.find((vs) => vs.key === '10.96.0.1:80/TCP')!.realServers.map((rs) => rs.address)).toContain('10.143.66.65');
  });
});
