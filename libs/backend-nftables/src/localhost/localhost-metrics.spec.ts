import { PromProxyMetrics } from '@kube-proxy/core';
import { FakeCommandExecutor } from '@kube-proxy/core/testing';
import { LocalhostMetrics } from './localhost-metrics.js';
import { packetsOfChainListing, readLocalhostRejected } from './reject-counters.js';

const chainJson = (packets: number) =>
  JSON.stringify({
    nftables: [
      { metainfo: { json_schema_version: 1 } },
      { chain: { family: 'ip', table: 'kube-proxy', name: 'localhost-nodeport-reject-udp', handle: 90 } },
      { rule: { family: 'ip', table: 'kube-proxy', chain: 'localhost-nodeport-reject-udp', handle: 91, expr: [{ counter: { packets, bytes: packets * 60 } }, { reject: null }] } },
    ],
  });

describe('localhost NodePort metrics', () => {
  it("have upstream v1.37's names, labels and help, and are defined only by the mode when its gate is on", async () => {
    const m = new PromProxyMetrics({ mode: 'nftables', defaultMetrics: false });
    const metrics = new LocalhostMetrics(m);
    metrics.listeners('IPv4', 2);
    metrics.listeners('IPv6', 0);
    metrics.creationFailed('IPv6');
    metrics.addRejected('IPv4', new Map([['UDP', 7], ['SCTP', 3]]));
    const { body } = await m.scrape();
    expect(body).toContain('# HELP kubeproxy_nftables_localhost_nodeport_listeners [ALPHA] Number of localhost NodePort userspace proxy listeners\n# TYPE kubeproxy_nftables_localhost_nodeport_listeners gauge');
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_listeners{ip_family="IPv4"} 2\n');
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_listeners{ip_family="IPv6"} 0\n');
    expect(body).toContain('# HELP kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total [ALPHA] Number of localhost NodePort userspace proxy listener creation failures.\n# TYPE kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total counter');
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total{ip_family="IPv4"} 0\n');
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_listener_creation_failures_total{ip_family="IPv6"} 1\n');
    expect(body).toContain(
      '# HELP kubeproxy_nftables_localhost_nodeport_rejected_packets_total [ALPHA] Number of packets rejected on localhost NodePorts. UDP and SCTP are always rejected; TCP is rejected when the localhost NodePort proxy is not running\n# TYPE kubeproxy_nftables_localhost_nodeport_rejected_packets_total counter',
    );
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_rejected_packets_total{ip_family="IPv4",protocol="UDP"} 7\n');
    expect(body).toContain('kubeproxy_nftables_localhost_nodeport_rejected_packets_total{ip_family="IPv4",protocol="SCTP"} 3\n');
  });

  it('the rejected counter follows the kernel counter (a reset, e.g. a rebuilt chain, counts in full)', async () => {
    const m = new PromProxyMetrics({ mode: 'nftables', defaultMetrics: false });
    const metrics = new LocalhostMetrics(m);
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 1, stderr: 'Error: No such file or directory' });
    exec.on({ command: 'nft', args: ['-j', 'list', 'chain', 'ip', 'kube-proxy', 'localhost-nodeport-reject-udp'] }, { exitCode: 0, stdout: chainJson(4) });
    metrics.readBeforeScrape(m, exec, ['IPv4']);
    expect((await m.scrape()).body).toContain('rejected_packets_total{ip_family="IPv4",protocol="UDP"} 4\n');
    exec.on({ command: 'nft', args: ['-j', 'list', 'chain', 'ip', 'kube-proxy', 'localhost-nodeport-reject-udp'] }, { exitCode: 0, stdout: chainJson(9) });
    expect((await m.scrape()).body).toContain('rejected_packets_total{ip_family="IPv4",protocol="UDP"} 9\n');
    exec.on({ command: 'nft', args: ['-j', 'list', 'chain', 'ip', 'kube-proxy', 'localhost-nodeport-reject-udp'] }, { exitCode: 0, stdout: chainJson(2) });
    expect((await m.scrape()).body).toContain('rejected_packets_total{ip_family="IPv4",protocol="UDP"} 11\n');
    // Chains that could not be read (TCP, SCTP here) have no series.
    expect((await m.scrape()).body).not.toContain('protocol="TCP"');
  });

  it('reads the counter statement of the chain listing', async () => {
    expect(packetsOfChainListing(chainJson(12))).toBe(12);
    expect(packetsOfChainListing('{"nftables":[]}')).toBeUndefined();
    expect(packetsOfChainListing('not json')).toBeUndefined();
    const exec = new FakeCommandExecutor().setDefault({ exitCode: 0, stdout: chainJson(1) });
    expect(await readLocalhostRejected(exec, 'ip6')).toEqual(new Map([['TCP', 1], ['UDP', 1], ['SCTP', 1]]));
    expect(exec.calls.map((c) => c.args.join(' '))).toEqual([
      '-j list chain ip6 kube-proxy localhost-nodeport-reject-tcp',
      '-j list chain ip6 kube-proxy localhost-nodeport-reject-udp',
      '-j list chain ip6 kube-proxy localhost-nodeport-reject-sctp',
    ]);
  });
});
