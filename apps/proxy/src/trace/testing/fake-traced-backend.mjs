// A backend plugin whose rules are one line per Service port, and whose ModeTracer reads them: lets
// the CLI and /debug specs run `trace` / `explain` end to end without any real mode's tracer.
// Rule line: `SVC <ns/name:port> <PROTOCOL> <IP:PORT> -> <endpoint>,<endpoint>` (no endpoint: reject).
// Loaded with --backend-plugin (plain JavaScript: a plugin is an npm module, not part of the build).

const PROVIDER = Symbol.for('kube-proxy.Provider');

const hostPort = (ip, port) => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** The rule lines for every Service port of `family`, from the Services and EndpointSlices held. */
function ruleLines(services, slices, family) {
  const lines = [];
  for (const svc of services.values()) {
    const ns = svc.metadata.namespace;
    const name = svc.metadata.name;
    const ips = (svc.spec.clusterIPs ?? [svc.spec.clusterIP]).filter((ip) => ip && ip !== 'None' && ip.includes(':') === (family === 'IPv6'));
    for (const ip of ips) {
      for (const port of svc.spec.ports ?? []) {
        const endpoints = [];
        for (const slice of slices.values()) {
          if (slice.metadata.namespace !== ns || slice.metadata.labels?.['kubernetes.io/service-name'] !== name) continue;
          const sp = (slice.ports ?? []).find((p) => (p.name ?? '') === (port.name ?? '') && (p.protocol ?? 'TCP') === (port.protocol ?? 'TCP'));
          if (!sp) continue;
          for (const ep of slice.endpoints ?? []) {
            if (ep.conditions?.ready === false) continue;
            for (const addr of ep.addresses ?? []) if (addr.includes(':') === (family === 'IPv6')) endpoints.push(hostPort(addr, sp.port));
          }
        }
        lines.push(`SVC ${ns}/${name}:${port.name ?? ''} ${port.protocol ?? 'TCP'} ${hostPort(ip, port.port)} -> ${[...new Set(endpoints)].sort().join(',')}`);
      }
    }
  }
  return lines.sort();
}

function parseRules(text) {
  const rules = [];
  for (const line of text.split('\n')) {
    const m = /^SVC (\S+) (\S+) (\S+) -> (\S*)$/.exec(line);
    if (m) rules.push({ line, servicePort: m[1], protocol: m[2], dest: m[3], endpoints: m[4] === '' ? [] : m[4].split(',') });
  }
  return rules;
}

export const fakeTracer = {
  mode: 'faketrace',
  async readLive(executor, family) {
    const result = await executor.run('fake-rules-save', [family]);
    if (result.exitCode !== 0) return { found: false, lookedFor: `fake-rules-save ${family} (the fake mode's rule dump)` };
    return { mode: 'faketrace', family, source: 'fake-rules-save', rules: parseRules(result.stdout) };
  },
  fromDryRun(text, family) {
    return { mode: 'faketrace', family, source: '--dry-run output', rules: parseRules(text) };
  },
  trace(snapshot, packet, node) {
    const dest = hostPort(packet.destIP, packet.destPort);
    const rule = snapshot.rules.find((r) => r.dest === dest && r.protocol === packet.protocol);
    const masquerade = packet.locallyGenerated;
    const masqueradeReason = masquerade ? 'traffic the node itself sends is masqueraded (fake)' : 'no rule marks the packet for masquerade; the source address is kept';
    if (!rule) {
      return { verdict: 'ACCEPT', endpoints: [], choices: [], masquerade: false, masqueradeReason, service: null, path: [], reason: `no Service rule matches ${packet.protocol} ${dest}; the packet passes unchanged` };
    }
    const step = { where: `fake/${packet.locallyGenerated ? 'output' : 'prerouting'}`, rule: rule.line, service: rule.servicePort, note: `on ${node.name}` };
    if (rule.endpoints.length === 0) {
      const ns = rule.servicePort.slice(0, rule.servicePort.indexOf(':'));
      return { verdict: 'REJECT', endpoints: [], choices: [], masquerade, masqueradeReason, service: rule.servicePort, path: [step], reason: `service ${ns} has no ready endpoints for port ${rule.servicePort}` };
    }
    const choices = rule.endpoints.map((endpoint) => ({ endpoint, probability: 1 / rule.endpoints.length }));
    return { verdict: 'DNAT', endpoints: [...rule.endpoints].sort(), choices, masquerade, masqueradeReason, service: rule.servicePort, path: [step], reason: `${rule.servicePort} sends the connection to one of ${rule.endpoints.length} endpoints` };
  },
  objectsOf(snapshot, service) {
    return snapshot.rules
      .filter((r) => r.servicePort.startsWith(`${service}:`))
      .map((r) => ({ kind: 'fake chain', name: `fake/${r.servicePort}`, rules: r.endpoints.length + 1, endpoints: r.endpoints, servicePort: r.servicePort }));
  },
};

function fakeProvider(ctx) {
  const services = new Map();
  const slices = new Map();
  const key = (o) => `${o.metadata.namespace}/${o.metadata.name}`;
  let done;
  const first = new Promise((r) => (done = r));
  let stopped;
  const loop = new Promise((r) => (stopped = r));
  let syncs = 0;
  const sync = () => {
    syncs++;
    for (const family of ctx.families) {
      const tag = ctx.families.length > 1 ? ` ${family}` : '';
      ctx.dryRunSink.write(`# sync ${syncs} full 2026-12-06T10:00:00.000Z${tag}\n${ruleLines(services, slices, family).join('\n')}\n`);
    }
    done();
  };
  return {
    onServiceAdd: (s) => services.set(key(s), s),
    onServiceUpdate: (_p, s) => services.set(key(s), s),
    onServiceDelete: (s) => services.delete(key(s)),
    onServicesSynced: () => undefined,
    onEndpointSliceAdd: (s) => slices.set(key(s), s),
    onEndpointSliceUpdate: (_p, s) => slices.set(key(s), s),
    onEndpointSliceDelete: (s) => slices.delete(key(s)),
    onEndpointSlicesSynced: sync,
    onNodeAdd: () => undefined,
    onNodeUpdate: () => undefined,
    onNodeDelete: () => undefined,
    onNodeSynced: () => undefined,
    sync,
    syncLoop: () => loop,
    stop: () => stopped(),
    firstSync: () => first,
  };
}

export const backend = {
  apiVersion: 'kube-proxy.backend/v1',
  name: 'faketrace',
  version: '0.0.1',
  detect: () => ({ usable: true, reason: 'a fake for specs' }),
  register(container, ctx) {
    container.register(PROVIDER, { useValue: fakeProvider(ctx) });
  },
  tracer: fakeTracer,
};
