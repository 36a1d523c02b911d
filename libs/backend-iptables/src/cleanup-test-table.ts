/**
 * iptables-save text shaped like a node programmed in iptables mode (for the cleanup specs): N
 * ClusterIP Services × `endpoints` endpoints, with our jump rules and a few foreign rules. Chain
 * names are short counters, not hashes, so a spec can name them.
 */
export function savedNodeTables(services: number, endpoints = 5): { nat: string; filter: string } {
  const chains: string[] = [':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]'];
  const rules: string[] = [
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A POSTROUTING -j CNI-HOSTPORT',
    '-A CNI-HOSTPORT -j RETURN',
    '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MASQUERADE --random-fully',
  ];
  chains.push(':CNI-HOSTPORT - [0:0]', ':KUBE-MARK-MASQ - [0:0]', ':KUBE-NODEPORTS - [0:0]', ':KUBE-POSTROUTING - [0:0]', ':KUBE-SERVICES - [0:0]');
  for (let s = 0; s < services; s++) {
    const svc = `KUBE-SVC-${String(s).padStart(16, '0')}`;
    const ip = `172.30.${(s >> 8) & 255}.${s & 255}`;
    chains.push(`:${svc} - [0:0]`);
    rules.push(`-A KUBE-SERVICES -d ${ip}/32 -p tcp -m comment --comment "ns/svc-${s}:http cluster IP" -m tcp --dport 80 -j ${svc}`);
    for (let e = 0; e < endpoints; e++) {
      const sep = `KUBE-SEP-${String(s * endpoints + e).padStart(16, '0')}`;
      const pod = `10.${(s >> 8) & 255}.${s & 255}.${e + 2}`;
      chains.push(`:${sep} - [0:0]`);
      rules.push(`-A ${svc} -m comment --comment "ns/svc-${s}:http -> ${pod}:8080" -m statistic --mode random --probability 0.20000000019 -j ${sep}`);
      rules.push(`-A ${sep} -s ${pod}/32 -m comment --comment "ns/svc-${s}:http" -j KUBE-MARK-MASQ`);
      rules.push(`-A ${sep} -p tcp -m comment --comment "ns/svc-${s}:http" -m tcp -j DNAT --to-destination ${pod}:8080`);
    }
  }
  rules.push('-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS');
  const nat = ['*nat', ...chains, ...rules, 'COMMIT', ''].join('\n');
  const filter = [
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':KUBE-FIREWALL - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    '-A INPUT -j KUBE-FIREWALL',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    'COMMIT',
    '',
  ].join('\n');
  return { nat, filter };
}
