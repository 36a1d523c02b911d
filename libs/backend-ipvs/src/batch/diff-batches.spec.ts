import { makeService, TestCluster } from '../testing/ipvs-fixtures.js';
import { diffDesiredStates } from './diff-batches.js';

function web(c: TestCluster, fn: (spec: Record<string, unknown>) => void = () => undefined): void {
  c.service(makeService('ns1', 'web', (svc) => {
    svc.spec.clusterIP = '10.96.0.10';
    svc.spec.ports = [{ name: 'http', port: 80, protocol: 'TCP' }];
    fn(svc.spec as Record<string, unknown>);
  }));
}

describe('diffDesiredStates', () => {
  it('is empty between equal states', () => {
    const c = new TestCluster();
    web(c);
    c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080 }]);
    expect(diffDesiredStates(c.state(), c.state())).toEqual({ ipvsadm: '', ipset: '' });
  });

  it('adds a new service: -A with its -a lines, and its set entries', () => {
    const before = new TestCluster().state();
    const c = new TestCluster();
    web(c);
    c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080, nodeName: 'test-hostname' }]);
    expect(diffDesiredStates(before, c.state())).toEqual({
      ipvsadm: '-A -t 10.96.0.10:80 -s rr\n-a -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 1\n',
      ipset: 'add KUBE-LOOP-BACK 10.244.1.5,tcp:8080,10.244.1.5\nadd KUBE-CLUSTER-IP 10.96.0.10,tcp:80\nadd KUBE-IPVS-IPS 10.96.0.10\n',
    });
  });

  it('removes a service: one -D (the kernel drops its real servers) and del lines', () => {
    const c = new TestCluster();
    web(c);
    c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080 }]);
    expect(diffDesiredStates(c.state(), new TestCluster().state())).toEqual({
      ipvsadm: '-D -t 10.96.0.10:80\n',
      ipset: 'del KUBE-CLUSTER-IP 10.96.0.10,tcp:80\ndel KUBE-IPVS-IPS 10.96.0.10\n',
    });
  });

  it('edits the virtual server in place when the scheduler or the affinity timeout changes', () => {
    const c = new TestCluster();
    web(c);
    const rr = c.state();
    expect(diffDesiredStates(rr, c.state({ scheduler: 'wlc' })).ipvsadm).toBe('-E -t 10.96.0.10:80 -s wlc\n');
    web(c, (spec) => {
      spec.sessionAffinity = 'ClientIP';
      spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 600 } };
    });
    const sticky = c.state();
    expect(diffDesiredStates(rr, sticky)).toEqual({ ipvsadm: '-E -t 10.96.0.10:80 -s rr -p 600\n', ipset: '' });
    expect(diffDesiredStates(sticky, rr).ipvsadm).toBe('-E -t 10.96.0.10:80 -s rr\n');
  });

  it('adds and deletes only the real servers that changed, in key order', () => {
    const c = new TestCluster();
    web(c);
    c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080 }, { ip: '10.244.2.6', port: 8080 }]);
    const before = c.state();
    c.endpoints('ns1/web:http', [{ ip: '10.244.2.6', port: 8080 }, { ip: '10.244.3.7', port: 8080 }]);
    expect(diffDesiredStates(before, c.state()).ipvsadm).toBe(
      '-d -t 10.96.0.10:80 -r 10.244.1.5:8080\n-a -t 10.96.0.10:80 -r 10.244.3.7:8080 -m -w 1\n',
    );
  });

  it('edits a real server whose weight changed (the form graceful termination will use)', () => {
    const c = new TestCluster();
    web(c);
    c.endpoints('ns1/web:http', [{ ip: '10.244.1.5', port: 8080 }]);
    const before = c.state();
    const vs = before.virtualServers[0];
    const after = { ...before, virtualServers: [{ ...vs, realServers: [{ ...vs.realServers[0], weight: 0 }] }] };
    expect(diffDesiredStates(before, after).ipvsadm).toBe('-e -t 10.96.0.10:80 -r 10.244.1.5:8080 -m -w 0\n');
  });

  it('refuses to diff states of different families', () => {
    expect(() => diffDesiredStates(new TestCluster('IPv4').state(), new TestCluster('IPv6').state())).toThrow(RangeError);
  });
});
