import { HOSTILE_NAMES } from '@kube-proxy/core/testing';
import { formatPortTable } from './port-table.js';
import type { ServicePortProxy } from './socket-table.js';

// Only the fields formatPortTable reads; the table is a pure function of them.
function proxy(key: string): ServicePortProxy {
  return {
    key,
    protocol: 'TCP',
    internal: { port: 40000, endpoints: [{ key: '10.244.1.5:8080' }] },
    external: null,
  } as unknown as ServicePortProxy;
}

describe('formatPortTable', () => {
  it('prints a valid service port name unchanged', () => {
    const out = formatPortTable([proxy('default/web:http')], { listenIP: '0.0.0.0', examplePorts: false });
    expect(out).toContain('# default/web:http  TCP');
  });

  it.each(HOSTILE_NAMES.map((h) => [h.label, `${h.namespace}/${h.name}:${h.port}`] as const))(
    'keeps every line a comment for a hostile name (%s)',
    (_label, key) => {
      const out = formatPortTable([proxy(key)], { listenIP: '0.0.0.0', examplePorts: false });
      const lines = out.split('\n');
      expect(lines).toHaveLength(4); // title, header, one row, the final ''
      expect(lines.slice(0, 3).every((l) => l.startsWith('# '))).toBe(true);
      expect(out).not.toMatch(/[\0\r]/);
    },
  );
});
