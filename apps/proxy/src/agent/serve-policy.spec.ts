import { servePolicy } from './serve-policy.js';

describe('servePolicy', () => {
  it('serves everything outside --dry-run', () => {
    expect(servePolicy({ dryRun: false, flagsGiven: new Set() })).toEqual({ healthz: true, metrics: true, serviceHealthChecks: true });
  });

  it('opens nothing in --dry-run unless an address is given on the command line', () => {
    expect(servePolicy({ dryRun: true, flagsGiven: new Set() })).toEqual({ healthz: false, metrics: false, serviceHealthChecks: false });
    expect(servePolicy({ dryRun: true, flagsGiven: new Map([['metrics-bind-address', '127.0.0.1:0']]) })).toEqual({
      healthz: false,
      metrics: true,
      serviceHealthChecks: false,
    });
  });
});
