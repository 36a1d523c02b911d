/**
 * Hand-written kube-proxy-style rules (docs/datapath-testing.md) used only by the harness self-test, so that the
 * harness can be checked without the proxy: one ClusterIP (10.96.0.10:80 → pod1/pod2 :8080, masquerade for
 * off-cluster sources and hairpin) and one service without endpoints (10.96.0.99:80 → REJECT).
 */
export const HAND_RULES = `*nat
:KUBE-SERVICES - [0:0]
:KUBE-POSTROUTING - [0:0]
:KUBE-MARK-MASQ - [0:0]
:KUBE-SVC-HARNESSWEB - [0:0]
:KUBE-SEP-HARNESSWEB1 - [0:0]
:KUBE-SEP-HARNESSWEB2 - [0:0]
-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES
-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING
-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN
-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000
-A KUBE-POSTROUTING -j MASQUERADE --random-fully
-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000
-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-HARNESSWEB
-A KUBE-SVC-HARNESSWEB ! -s 10.244.0.0/16 -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ
-A KUBE-SVC-HARNESSWEB -m statistic --mode random --probability 0.5 -j KUBE-SEP-HARNESSWEB1
-A KUBE-SVC-HARNESSWEB -j KUBE-SEP-HARNESSWEB2
-A KUBE-SEP-HARNESSWEB1 -s 10.244.1.11/32 -j KUBE-MARK-MASQ
-A KUBE-SEP-HARNESSWEB1 -p tcp -m tcp -j DNAT --to-destination 10.244.1.11:8080
-A KUBE-SEP-HARNESSWEB2 -s 10.244.1.12/32 -j KUBE-MARK-MASQ
-A KUBE-SEP-HARNESSWEB2 -p tcp -m tcp -j DNAT --to-destination 10.244.1.12:8080
COMMIT
*filter
:KUBE-SERVICES - [0:0]
-A INPUT -m conntrack --ctstate NEW -j KUBE-SERVICES
-A FORWARD -m conntrack --ctstate NEW -j KUBE-SERVICES
-A OUTPUT -m conntrack --ctstate NEW -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.99/32 -p tcp -m comment --comment "default/noep:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable
COMMIT
`;
