import { BACKEND_PLUGIN_API_VERSION } from '@kube-proxy/core';
import { userspaceBackend } from './plugin.js';

describe('userspace backend plugin', () => {
  it('speaks the current plugin contract under the mode name "userspace"', () => {
    expect(userspaceBackend.apiVersion).toBe(BACKEND_PLUGIN_API_VERSION);
    expect(userspaceBackend.name).toBe('userspace');
    expect(userspaceBackend.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses to register until the proxier exists, naming the alternative', () => {
    expect(() => userspaceBackend.register({} as never, {} as never)).toThrow(/not implemented.*--proxy-mode=iptables/);
  });
});
