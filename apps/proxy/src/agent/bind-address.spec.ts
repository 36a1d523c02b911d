import { parseBindAddress } from './bind-address.js';

describe('parseBindAddress', () => {
  it('listens everywhere for unspecified hosts, as Go does', () => {
    expect(parseBindAddress('0.0.0.0:10256')).toEqual({ host: undefined, port: 10256, text: '0.0.0.0:10256' });
    expect(parseBindAddress('[::]:10256').host).toBeUndefined();
    expect(parseBindAddress(':10256').host).toBeUndefined();
  });

  it('keeps specific hosts, unbracketing IPv6', () => {
    expect(parseBindAddress('127.0.0.1:10249')).toMatchObject({ host: '127.0.0.1', port: 10249 });
    expect(parseBindAddress('[::1]:10249')).toMatchObject({ host: '::1', port: 10249 });
    expect(parseBindAddress('127.0.0.1:0').port).toBe(0);
  });

  it('rejects malformed addresses', () => {
    expect(() => parseBindAddress('10256')).toThrow(/missing port/);
    expect(() => parseBindAddress('1.2.3.4:http')).toThrow(/invalid port/);
    expect(() => parseBindAddress('1.2.3.4:70000')).toThrow(/invalid port/);
    expect(() => parseBindAddress('nohost:1')).toThrow(/invalid host/);
  });
});
