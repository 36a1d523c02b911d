import { parseFlags } from '@kube-proxy/core';
import { parseSubcommandArgs } from './subcommand-args.js';
import { TraceInputError } from './trace-packet.js';

describe('parseSubcommandArgs', () => {
  it('takes trace flags in every spelling and leaves the proxy flags, values included, to parseFlags', () => {
    const a = parseSubcommandArgs('trace', [
      '--proxy-mode',
      'nftables',
      '--from=10.0.0.1:4000',
      '--to',
      '10.96.0.10:80',
      '--protocol=udp',
      '--node-address=10.0.0.1,192.168.1.1',
      '--node-address',
      'fd00::1',
      '--in-interface=eth0',
      '-v',
      '2',
      '-ojson',
      '--manifests=examples',
      '--live',
    ]);
    expect(a).toMatchObject({
      from: '10.0.0.1:4000',
      to: '10.96.0.10:80',
      protocol: 'udp',
      inInterface: 'eth0',
      nodeAddresses: ['10.0.0.1', '192.168.1.1', 'fd00::1'],
      output: 'json',
      live: true,
      help: false,
    });
    expect(a.proxyArgv).toEqual(['--proxy-mode', 'nftables', '-v', '2', '--manifests=examples']);
    const parsed = parseFlags(a.proxyArgv);
    expect(parsed.values.get('proxy-mode')).toBe('nftables');
    expect(parsed.values.get('v')).toBe(2);
  });

  it('reads -o json, -o=json and --output=text; text is the default', () => {
    expect(parseSubcommandArgs('trace', ['-o', 'json']).output).toBe('json');
    expect(parseSubcommandArgs('trace', ['-o=json']).output).toBe('json');
    expect(parseSubcommandArgs('trace', ['--output=text']).output).toBe('text');
    expect(parseSubcommandArgs('trace', []).output).toBe('text');
  });

  it('explain takes one NAMESPACE/NAME, --live and -o', () => {
    const a = parseSubcommandArgs('explain', ['--manifests', 'examples', '--live', 'default/web', '-o', 'json']);
    expect(a).toMatchObject({ service: 'default/web', live: true, output: 'json' });
    expect(a.proxyArgv).toEqual(['--manifests', 'examples']);
  });

  it('--help / -h stop parsing and ask for the help', () => {
    expect(parseSubcommandArgs('trace', ['--to=x', '-h', '--bogus']).help).toBe(true);
    expect(parseSubcommandArgs('explain', ['--help']).help).toBe(true);
  });

  it.each([
    ['trace', ['-o', 'yaml'], 'unknown output format "yaml": want text or json'],
    ['trace', ['--from'], 'flag needs an argument: --from'],
    ['trace', ['default/web'], 'trace takes no arguments, got "default/web" (the packet is --from and --to)'],
    ['trace', ['--live=maybe'], 'invalid argument "maybe" for "--live" flag: must be true or false'],
    ['explain', [], 'explain needs the Service: NAMESPACE/NAME'],
    ['explain', ['a/b', 'c/d'], 'explain takes one Service, got a/b c/d'],
    ['explain', ['web'], 'malformed Service "web": want NAMESPACE/NAME'],
    ['explain', ['--from=1.2.3.4', 'a/b'], null],
  ] as const)('%s %j → %s', (command, argv, message) => {
    if (message === null) {
      // explain has no --from: it is a proxy flag as far as explain knows, and parseFlags refuses it.
      const a = parseSubcommandArgs(command, argv);
      expect(a.proxyArgv).toEqual(['--from=1.2.3.4']);
      expect(() => parseFlags(a.proxyArgv)).toThrow('unknown flag: --from');
      return;
    }
    expect(() => parseSubcommandArgs(command, argv)).toThrow(new TraceInputError(message));
  });
});
