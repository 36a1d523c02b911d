import { listsAddress } from './running-proxy-probes.js';

describe('listsAddress', () => {
  const listing = 'table ip kube-proxy {\n\tset cluster-ips {\n\t\telements = { 10.96.0.1, 10.96.0.10,\n\t\t\t     10.96.0.22 }\n\t}\n}\n';

  it('finds an address that is a whole element, first, middle or last', () => {
    expect(listsAddress(listing, '10.96.0.1')).toBe(true);
    expect(listsAddress(listing, '10.96.0.10')).toBe(true);
    expect(listsAddress(listing, '10.96.0.22')).toBe(true);
  });

  it('does not take a prefix of another element for the address', () => {
    expect(listsAddress(listing, '10.96.0.2')).toBe(false);
    expect(listsAddress(listing, '0.96.0.1')).toBe(false);
    expect(listsAddress('', '10.96.0.1')).toBe(false);
  });
});
