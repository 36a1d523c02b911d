/**
 * What the IPVS library hands to kernel tools, checked against hostile text (issue 10). Today it
 * only cleans up: `ipvsadm -C`, `ip link del kube-ipvs0`, iptables jumps/chains with fixed names and
 * comments, and `ipset destroy NAME` for the names `ipset list -n` prints. No string from the API
 * reaches any of them; the set names come from the kernel and are passed as one argv entry each
 * (no shell, no batch text), and only names starting with `KUBE-` are touched, so none can be an
 * option.
 */
import { assertRestoreLine, commentText, type HostCapabilities } from '@kube-proxy/core';
import { FakeCommandExecutor, RecordingLogger } from '@kube-proxy/core/testing';
import { cleanupIpvs, IPVS_CHAINS, IPVS_JUMPS } from './cleanup.js';

function host(): HostCapabilities {
  const tool = (present: boolean) => ({ present });
  return {
    kernelRelease: '6.1.0',
    ipvs: { available: true, reason: 'test' },
    nftables: { available: false, reason: 'n/a' },
    tools: { iptables: tool(false), ip6tables: tool(false), ipset: tool(true), ipvsadm: tool(true), nft: tool(false), conntrack: tool(false) },
    iptablesVariantReason: 'n/a',
    iptablesRandomFully: false,
  };
}

describe('ipvs cleanup with hostile set names', () => {
  it('destroys only KUBE- sets, each name as one argument that cannot be an option', async () => {
    const listed = ['KUBE-CLUSTER-IP', '-F', '--exist', 'KUBE-A -exist', 'KUBE-B\tflush', '  KUBE-LOOP-BACK  ', 'other', 'KUBE-"quoted"', ''].join('\n');
    const exec = new FakeCommandExecutor()
      .on({ command: 'ipvsadm', args: ['-C'] }, {})
      .on({ command: 'ip' }, { exitCode: 1, stderr: 'Cannot find device "kube-ipvs0"\n' })
      .on({ command: 'ipset', args: ['list', '-n'] }, { stdout: listed })
      .setDefault({});
    expect(await cleanupIpvs(exec, host(), new RecordingLogger())).toBe(false);

    const destroys = exec.calls.filter((c) => c.command === 'ipset' && c.args[0] === 'destroy');
    expect(destroys.map((c) => c.args)).toEqual([
      ['destroy', 'KUBE-CLUSTER-IP'],
      ['destroy', 'KUBE-A -exist'],
      ['destroy', 'KUBE-B\tflush'],
      ['destroy', 'KUBE-LOOP-BACK'],
      ['destroy', 'KUBE-"quoted"'],
    ]);
    for (const c of exec.calls) {
      // Argument arrays only; and nothing but the fixed options (ipvsadm, ipset list, each iptables
      // variant's `--version` probe and `-save -t <table>`) is option-like.
      expect(c.args.filter((a) => a.startsWith('-'))).toEqual(c.args.filter((a) => ['-C', '-n', '--version', '-t'].includes(a)));
    }
  });

  it('writes only fixed chain names and comments that are already comment-safe text', () => {
    for (const j of IPVS_JUMPS) {
      const comment = j.comment ?? '';
      // Fixed English text: its words are safe tokens, and the rule is one safe line.
      for (const word of comment.split(' ')) expect(commentText(word)).toBe(word);
      assertRestoreLine(`-A ${j.from} -m comment --comment "${comment}" -j ${j.to}`);
    }
    for (const c of IPVS_CHAINS) expect(c.chain).toMatch(/^KUBE-[A-Z-]+$/);
  });
});
