import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector, SelectorError } from './selectors.js';

describe('label selectors', () => {
  const m = (sel: string, labels?: Record<string, string>) => matchesLabels(parseLabelSelector(sel), labels);

  it('supports existence, equality and inequality, ANDed by commas', () => {
    expect(m('', {})).toBe(true);
    expect(m('app', { app: 'x' })).toBe(true);
    expect(m('app', {})).toBe(false);
    expect(m('!app', {})).toBe(true);
    expect(m('!app', { app: '' })).toBe(false);
    expect(m('app=web', { app: 'web' })).toBe(true);
    expect(m('app==web', { app: 'web' })).toBe(true);
    expect(m('app=web', { app: 'db' })).toBe(false);
    expect(m('app!=web', {})).toBe(true);
    expect(m('app!=web', { app: 'db' })).toBe(true);
    expect(m('app!=web', { app: 'web' })).toBe(false);
    expect(m('a=1, !b', { a: '1' })).toBe(true);
    expect(m('a=1,!b', { a: '1', b: '2' })).toBe(false);
  });

  it("parses kube-proxy's selectors", () => {
    const sel = '!service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless';
    expect(m(sel, { app: 'x' })).toBe(true);
    expect(m(sel, { 'service.kubernetes.io/service-proxy-name': 'other' })).toBe(false);
    expect(m('service.kubernetes.io/service-proxy-name=mine,!service.kubernetes.io/headless', { 'service.kubernetes.io/service-proxy-name': 'mine' })).toBe(true);
  });

  it('rejects what it does not understand', () => {
    expect(() => parseLabelSelector('env in (a,b)')).toThrow(SelectorError);
    expect(() => parseLabelSelector('bad key=1')).toThrow(SelectorError);
  });
});

describe('field selectors', () => {
  it('matches dotted paths; a missing field reads as ""', () => {
    const node = { metadata: { name: 'n1' }, spec: { clusterIP: 'None' } };
    expect(matchesFields(parseFieldSelector('metadata.name=n1'), node)).toBe(true);
    expect(matchesFields(parseFieldSelector('metadata.name==n2'), node)).toBe(false);
    expect(matchesFields(parseFieldSelector('spec.clusterIP!=None'), node)).toBe(false);
    expect(matchesFields(parseFieldSelector('spec.clusterIP!=None'), { spec: {} })).toBe(true);
    expect(matchesFields(parseFieldSelector('metadata.namespace='), node)).toBe(true);
    expect(() => parseFieldSelector('metadata.name')).toThrow(SelectorError);
  });
});
