import { addressDigest, addressesOfIpOutput, createLineShape, ipsetDigest, ipvsadmDigest } from './ipvs-kernel-digest.js';

describe('IPVS kernel digests', () => {
  it('ipvsadm --save -n in kernel order matches the batch it was restored from', () => {
    const batch = '-A -t 10.96.0.1:80 -s rr\n-a -t 10.96.0.1:80 -r 10.128.0.1:8080 -m -w 1\n-A -t 10.96.0.2:80 -s rr\n';
    const save = '-A -t 10.96.0.2:80 -s rr\n-A -t 10.96.0.1:80 -s rr\n-a -t 10.96.0.1:80 -r 10.128.0.1:8080 -m -w 1\n';
    expect(ipvsadmDigest(save)).toEqual(ipvsadmDigest(batch));
    expect(ipvsadmDigest(batch).lines).toBe(3);
  });

  it('a missing or changed real server changes the ipvsadm digest', () => {
    const batch = '-A -t 10.96.0.1:80 -s rr\n-a -t 10.96.0.1:80 -r 10.128.0.1:8080 -m -w 1\n';
    expect(ipvsadmDigest('-A -t 10.96.0.1:80 -s rr\n')).not.toEqual(ipvsadmDigest(batch));
    expect(ipvsadmDigest(batch.replace('10.128.0.1', '10.128.0.2')).sha256).not.toBe(ipvsadmDigest(batch).sha256);
  });

  it("ipset save's kernel-chosen bucketsize/initval and hash order do not count; entries do", () => {
    const script = 'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536\nadd KUBE-CLUSTER-IP 10.96.0.1,tcp:80\nadd KUBE-CLUSTER-IP 10.96.0.2,tcp:80\n';
    const save =
      'create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x5a1e6f0b\n' +
      'add KUBE-CLUSTER-IP 10.96.0.2,tcp:80\nadd KUBE-CLUSTER-IP 10.96.0.1,tcp:80\n';
    expect(ipsetDigest(save)).toEqual(ipsetDigest(script));
    expect(ipsetDigest(save.replace('10.96.0.2,', '10.96.0.3,'))).not.toEqual(ipsetDigest(script));
  });

  it('a hash set the kernel has grown past its created hashsize still matches; another type or maxelem does not', () => {
    const created = 'create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536';
    expect(createLineShape(`${created.replace('1024', '4096')} bucketsize 12 initval 0x1234abcd`)).toBe(createLineShape(created));
    expect(createLineShape(created.replace('65536', '131072'))).not.toBe(createLineShape(created));
    expect(createLineShape(created.replace('hash:ip ', 'hash:ip,port '))).not.toBe(createLineShape(created));
    expect(createLineShape('create KUBE-NODE-PORT-TCP bitmap:port range 0-65535')).toBe('create KUBE-NODE-PORT-TCP bitmap:port range 0-65535');
  });

  it('reads the bound addresses out of ip -o addr show, both families', () => {
    const out =
      '7: kube-ipvs0    inet 10.96.0.1/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n' +
      '7: kube-ipvs0    inet 10.96.0.2/32 scope global kube-ipvs0\\       valid_lft forever preferred_lft forever\n' +
      '7: kube-ipvs0    inet6 fd00:10:96::a/128 scope global \\       valid_lft forever preferred_lft forever\n';
    expect(addressesOfIpOutput(out)).toEqual(['10.96.0.1', '10.96.0.2', 'fd00:10:96::a']);
    expect(addressDigest(addressesOfIpOutput(out))).toEqual(addressDigest(['fd00:10:96::a', '10.96.0.2', '10.96.0.1']));
  });
});
