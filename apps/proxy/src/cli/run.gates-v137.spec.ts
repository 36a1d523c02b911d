import { rm } from 'node:fs/promises';
import { setEffectiveFeatureGates } from '@kube-proxy/core';
import { runCli } from './run.js';
import { captureIO } from './testing/capture-io.js';
import { runKubeProxy } from './testing/kube-proxy-bin.js';
import { manifestsDir, webManifests } from './testing/web-manifests.js';
import { DEFAULTED_MODE_WARNING } from '../mode/select-mode.js';

// Issue 23's gates and flags (v1.37) through the whole CLI: AllowServiceExternalIPs=false leaves no
// external-IP rule in any of the four modes (--dry-run --once); KubeProxyIPVS=false refuses ipvs;
// the defaulted mode is warned about; --healthz-port / --metrics-port are unknown flags (bin/kube-proxy).

const EXTERNAL_IP = '203.0.113.77';

const MANIFESTS = webManifests({
  serviceSpec: `  externalIPs: [${EXTERNAL_IP}]\n`,
  endpoints: `  - addresses: [10.244.1.11]
    nodeName: node-1
    conditions: { ready: true }
`,
});

async function dryRun(dir: string, args: readonly string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIO();
  const code = await runCli([`--manifests=${dir}`, '--hostname-override=node-1', '--dry-run', '--once', ...args], io.streams);
  return { code, out: io.out(), err: io.err() };
}

describe('kube-proxy CLI: v1.37 gates', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await manifestsDir('kp-cli-v137-', MANIFESTS);
  });
  afterAll(async () => {
    setEffectiveFeatureGates({});
    await rm(dir, { recursive: true, force: true });
  });

  describe.each(['iptables', 'nftables', 'ipvs', 'userspace'])('AllowServiceExternalIPs in %s mode', (mode) => {
    it('on (the default): the external IP is programmed', async () => {
      const run = await dryRun(dir, [`--proxy-mode=${mode}`]);
      expect(run.code).toBe(0);
      expect(run.out).toContain('10.96.0.10');
      expect(run.out).toContain(EXTERNAL_IP);
    }, 60_000);

    it('=false: no rule names the external IP; the cluster IP is still served', async () => {
      const run = await dryRun(dir, [`--proxy-mode=${mode}`, '--feature-gates=AllowServiceExternalIPs=false']);
      expect(run.code).toBe(0);
      expect(run.out).toContain('10.96.0.10');
      expect(run.out).not.toContain(EXTERNAL_IP);
    }, 60_000);
  });

  it('KubeProxyIPVS=false: --proxy-mode=ipvs exits 1 listing the modes', async () => {
    const run = await dryRun(dir, ['--proxy-mode=ipvs', '--feature-gates=KubeProxyIPVS=false']);
    expect(run.code).toBe(1);
    expect(run.out).toBe('');
    expect(run.err).toContain(
      'mode: Invalid value: "ipvs": must be iptables,nftables,userspace or blank (blank means the best-available proxy [currently iptables])',
    );
  });

  it('KubeProxyIPVS=false: a mode left empty is auto-selected without ipvs', async () => {
    const run = await dryRun(dir, ['--feature-gates=KubeProxyIPVS=false', '-v=2']);
    expect(run.code).toBe(0);
    expect(run.err).toContain('the KubeProxyIPVS feature gate is off');
    expect(run.out).toMatch(/^\*nat$/m);
  }, 60_000);

  it('warns when the mode is left to its default, not when it is given', async () => {
    const defaulted = await dryRun(dir, []);
    expect(defaulted.code).toBe(0);
    expect(defaulted.err).toContain(DEFAULTED_MODE_WARNING);
    const given = await dryRun(dir, ['--proxy-mode=iptables']);
    expect(given.err).not.toContain(DEFAULTED_MODE_WARNING);
  }, 60_000);
});

describe('bin/kube-proxy: flags removed upstream in v1.32', () => {
  it.each(['--healthz-port=10256', '--metrics-port=10249'])('%s is an unknown flag (exit status 1)', async (flag) => {
    const run = await runKubeProxy([flag, '--manifests=examples', '--dry-run', '--once']);
    expect(run.code).toBe(1);
    expect(run.err).toContain(`unknown flag: ${flag.slice(0, flag.indexOf('='))}`);
  }, 60_000);
});
