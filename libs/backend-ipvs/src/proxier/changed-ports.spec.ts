import type { AppliedChanges, ServicePort } from '@kube-proxy/core';
import { changedServicePorts, type KnownPorts } from './changed-ports.js';

function applied(services: readonly string[], endpoints: readonly string[] = []): AppliedChanges {
  return {
    services: { updatedServices: new Set(services), deletedUDPClusterIPs: new Set() },
    endpoints: { updatedServices: new Set(endpoints), deletedUDPEndpoints: [], newlyActiveUDPServices: [], lastChangeTriggerTimes: new Map() },
  };
}

const map = (...keys: string[]): ReadonlyMap<string, ServicePort> => new Map(keys.map((k) => [k, {} as ServicePort]));

/** The index's view: the ports each Service had at the last sync. */
function known(...keys: string[]): KnownPorts {
  return { portsOf: (name) => keys.filter((k) => k === name || k.startsWith(`${name}:`)) };
}

describe('changedServicePorts', () => {
  it('finds every port of a changed Service, now or at the last sync, and no port of a Service whose name it prefixes', () => {
    const now = map('ns/web:http', 'ns/web:https', 'ns/web2:http', 'ns/api');
    expect([...changedServicePorts(applied(['ns/web']), now, known('ns/web:old', 'ns/web2:http'))].sort()).toEqual(['ns/web:http', 'ns/web:https', 'ns/web:old']);
    expect(changedServicePorts(applied([]), now, known(...now.keys())).size).toBe(0);
  });

  it('an endpoints-only change takes the ports the index holds for the Service, without looking at the service map', () => {
    const now = map('ns/web:http', 'ns/web:https', 'ns/api');
    expect([...changedServicePorts(applied([], ['ns/web']), now, known('ns/web:http', 'ns/web:https', 'ns/api'))].sort()).toEqual(['ns/web:http', 'ns/web:https']);
    expect([...changedServicePorts(applied([], ['ns/api']), now, known('ns/api'))]).toEqual(['ns/api']);
  });

  it('gives the same answer past the prefix-scan limit (one lookup per key)', () => {
    const names = Array.from({ length: 20 }, (_, i) => `ns/s${i}`);
    const now = map(...names.map((n) => `${n}:p`), 'ns/s1x:p', 'other/s1:p');
    expect([...changedServicePorts(applied(names), now, known())].sort()).toEqual(names.map((n) => `${n}:p`).sort());
  });
});
