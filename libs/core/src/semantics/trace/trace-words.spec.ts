import { formatHostPort, parseHostPort, serviceOfPort, sortedEndpoints, traceWords } from './trace-words.js';

describe('trace words', () => {
  it('spells endpoints as IP:PORT and [IPv6]:PORT and parses them back canonically', () => {
    expect(formatHostPort('10.0.0.1', 80)).toBe('10.0.0.1:80');
    expect(formatHostPort('fd00::1', 80)).toBe('[fd00::1]:80');
    expect(parseHostPort('[FD00:0::1]:443')).toEqual({ ip: 'fd00::1', port: 443 });
    expect(parseHostPort('10.0.0.1:80')).toEqual({ ip: '10.0.0.1', port: 80 });
  });

  it.each(['10.0.0.1', '10.0.0.1:0', '10.0.0.1:65536', 'fd00::1:80', '300.0.0.1:80', '[fd00::1]', 'x:80'])('refuses %s', (text) => {
    expect(parseHostPort(text)).toBeNull();
  });

  it('sorts and de-duplicates endpoints', () => {
    expect(sortedEndpoints(['10.0.0.2:80', '10.0.0.1:80', '10.0.0.2:80'])).toEqual(['10.0.0.1:80', '10.0.0.2:80']);
  });

  it('names the Service of a Service port and says why in Kubernetes terms', () => {
    expect(serviceOfPort('ns/web:http')).toBe('ns/web');
    expect(traceWords.noEndpoints('ns/web:http')).toBe('service ns/web has no ready endpoints for port ns/web:http');
    expect(traceWords.outsideSourceRanges('1.2.3.4', 'ns/lb:')).toContain('source 1.2.3.4 is outside loadBalancerSourceRanges');
    expect(traceWords.noLocalEndpoints('ns/web:', 'node-1')).toContain('externalTrafficPolicy Local and no local endpoint');
    expect(traceWords.unallocatedClusterIP('10.96.0.77')).toBe('cluster IP 10.96.0.77 is not allocated to any Service');
  });
});
