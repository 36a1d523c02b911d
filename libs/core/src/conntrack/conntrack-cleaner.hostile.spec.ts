/**
 * conntrack arguments fed hostile strings directly (issue 10): an address that is not core's
 * canonical text never becomes an argument, so it cannot become an option (`-F` would flush every
 * flow) or add one.
 */
import type { ServicePort } from '../semantics/model/service-port.js';
import type { ServicePortName } from '../semantics/model/service-port-name.js';
import { testServicePort } from '../testing/test-service-port.js';
import { FakeCommandExecutor, RecordingLogger } from '../testing/host-fakes.js';
import type { AppliedChanges } from '../semantics/tracking/types.js';
import { ConntrackCleaner } from './conntrack-cleaner.js';

const NAME: ServicePortName = { namespace: 'default', name: 'dns', port: 'dns', protocol: 'UDP', key: 'default/dns:dns' };

function udpPort(overrides: Partial<Record<keyof ServicePort, unknown>>): ServicePort {
  // Hostile values of any type, bypassing ServicePort's types on purpose.
  return testServicePort({
    name: NAME,
    clusterIP: '10.96.0.53',
    port: 53,
    protocol: 'UDP',
    nodePort: 30053,
    externallyAccessible: true,
    ...(overrides as Partial<ServicePort>),
  });
}

function changes(deletedUDPClusterIPs: string[], deletedEndpoints: string[], newlyActive: boolean): AppliedChanges {
  return {
    services: { updatedServices: new Set(), deletedUDPClusterIPs: new Set(deletedUDPClusterIPs) },
    endpoints: {
      updatedServices: new Set(),
      deletedUDPEndpoints: deletedEndpoints.map((endpoint) => ({ endpoint, servicePortName: NAME })),
      newlyActiveUDPServices: newlyActive ? [NAME] : [],
      lastChangeTriggerTimes: new Map(),
    },
  };
}

const HOSTILE_IPS = ['-F', '--flush', '10.0.0.1 -F', '10.0.0.1\n-F', '', ' 10.0.0.1', '010.000.000.001', '::FFFF:10.0.0.1', '10.0.0.1\0'];

describe('ConntrackCleaner with hostile addresses', () => {
  it.each(HOSTILE_IPS.map((ip) => [JSON.stringify(ip), ip] as const))('never passes %s as an argument', (_label, ip) => {
    const svc = udpPort({ clusterIP: ip, externalIPs: [ip], loadBalancerVIPs: [ip] });
    const exec = new FakeCommandExecutor().setDefault({});
    const logger = new RecordingLogger();
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: exec, logger });
    const commands = cleaner.commandsFor(new Map([[NAME.key, svc]]), changes([ip], [`${ip}:53`, '10.244.1.11:53'], true));

    for (const args of commands) {
      expect(args).not.toContain(ip);
      // Every value after an option is an address or a number; no argument is an option by accident.
      for (let i = 0; i < args.length; i++) {
        if (['--orig-dst', '--dst-nat'].includes(args[i] as string)) expect(args[i + 1]).toMatch(/^[0-9a-f.:]+$/);
      }
      expect(args.filter((a) => a.startsWith('-'))).toEqual(args.filter((a) => ['-D', '-p', '--orig-dst', '--dst-nat', '--orig-port-dst', '-f'].includes(a)));
    }
    // The NodePort flows and the good endpoint are still cleared.
    expect(commands).toContainEqual(['-D', '-p', 'udp', '--orig-port-dst', '30053']);
    expect(commands).toContainEqual(['-D', '-p', 'udp', '--orig-port-dst', '30053', '--dst-nat', '10.244.1.11']);
    if (ip !== '') expect(logger.has('warn', 'Not clearing conntrack entries for an address that is not canonical IP text')).toBe(true);
  });

  it('never passes a node port that is not a port number', () => {
    const svc = udpPort({ nodePort: '30053 -F' });
    const cleaner = new ConntrackCleaner({ family: 'IPv4', executor: new FakeCommandExecutor(), logger: new RecordingLogger() });
    const commands = cleaner.commandsFor(new Map([[NAME.key, svc]]), changes([], ['10.244.1.11:53'], true));
    expect(commands.flat()).not.toContain('30053 -F');
    expect(commands).toContainEqual(['-D', '--orig-dst', '10.96.0.53', '--dst-nat', '10.244.1.11', '-p', 'udp']);
  });
});
