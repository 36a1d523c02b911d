import { defaultConfiguration, parseFlags } from '@kube-proxy/core';
import { zpagesFor } from './zpages-setup.js';
import { KUBE_PROXY_TS_VERSION } from './version.js';

describe('zpagesFor', () => {
  const parsed = parseFlags(['--proxy-mode=iptables', '--feature-gates=KubeProxyIPVS=false']);

  it('serves both pages by default (ComponentStatusz and ComponentFlagz are on)', () => {
    const pages = zpagesFor(parsed, defaultConfiguration(), false);
    const statusz = pages.statusz!();
    expect(statusz).toContain(`Binary version: ${KUBE_PROXY_TS_VERSION}\n`);
    expect(statusz).toContain('Emulation version: 1.37\n');
    expect(statusz).toContain(`Node.js version: ${process.version}\n`);
    expect(statusz).toContain('Paths: /configz /flagz /healthz /metrics /proxyMode /statusz\n');
    expect(statusz).toMatch(/^Up: \d+ hr \d\d min \d\d sec$/m);
    expect(pages.flagz!()).toContain('\nfeature-gates=KubeProxyIPVS=false\n');
  });

  it('leaves out a page whose gate is off', () => {
    const config = { ...defaultConfiguration(), featureGates: { ComponentStatusz: false } };
    const pages = zpagesFor(parsed, config, true);
    expect(pages.statusz).toBeUndefined();
    expect(pages.flagz).toBeDefined();
    const noFlagz = zpagesFor(parsed, { ...defaultConfiguration(), featureGates: { ComponentFlagz: false } }, true);
    expect(noFlagz.statusz!()).toContain('Paths: /configz /debug/explain /debug/trace /healthz /metrics /proxyMode /statusz\n');
    expect(noFlagz.flagz).toBeUndefined();
  });
});
