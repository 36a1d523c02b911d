import { addressDiff, renderAddressBatch } from './ipvs-address-batch.js';

describe('kube-ipvs0 address batch', () => {
  it('creates the dummy link first, then binds each address with its host prefix', () => {
    expect(renderAddressBatch({ createLink: true, add: ['10.96.0.1', 'fd00::a'], remove: [] })).toBe(
      'link add kube-ipvs0 type dummy\naddress add 10.96.0.1/32 dev kube-ipvs0\naddress add fd00::a/128 dev kube-ipvs0\n',
    );
  });

  it('an unchanged address set is an empty batch; a changed one unbinds before it binds', () => {
    expect(renderAddressBatch(addressDiff(['10.96.0.1', '10.96.0.2'], ['10.96.0.2', '10.96.0.1']))).toBe('');
    expect(renderAddressBatch(addressDiff(['10.96.0.1', '10.96.0.2'], ['10.96.0.2', '10.96.0.3']))).toBe(
      'address del 10.96.0.1/32 dev kube-ipvs0\naddress add 10.96.0.3/32 dev kube-ipvs0\n',
    );
  });
});
