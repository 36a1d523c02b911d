#!/bin/bash
# The IPVS traffic e2e, as it runs INSIDE the QEMU guest (libs/testing/ipvs-vm boots Debian's IPVS
# kernel; this script is the job's only step, run with chroot over the host's read-only root, so
# everything here lives and dies with the VM). The guest's root namespace is the node; "pods" and
# an "outside" client are network namespaces inside the guest; the cluster is the manifests and
# scenario.env that apps/proxy-e2e/src/support/ipvs-traffic-scenario.ts wrote into $1 on the host.
# It runs bin/kube-proxy from the host's build with --manifests, sends real TCP and UDP traffic,
# changes the manifests, stops the proxy and runs --cleanup, and prints one line per check:
#   CHECK <name> PASS|FAIL|SKIP <detail>      (names: support/ipvs-traffic-checks.ts, in order)
# followed, after a FAIL, by a "=== DUMP <name> BEGIN/END" block with the kernel state and the
# proxy log tail. Every wait is bounded in tries and time. Usage: ipvs-traffic-guest.sh IN MODE REPO
set -u
IN=$1 MODE=$2 REPO=$3
# shellcheck source=/dev/null
source "$IN/scenario.env"
TAG=kpit
W=/tmp/$TAG-work M=/tmp/$TAG-work/manifests LOG=/tmp/$TAG-work/proxy.log
KP=$REPO/bin/kube-proxy
mkdir -p "$M"
SERVER_PIDS=()
PROXY=

ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
T0=$(ms)
timing() { echo "TIME $1 $(($(ms) - $2))"; }

inns() { local ns=$1; shift; if [ "$ns" = node ]; then "$@"; else ip netns exec "$TAG-$ns" "$@"; fi; }

dump() {
  echo "=== DUMP $1 BEGIN"
  {
    echo "--- ipvsadm -L -n"; ipvsadm -L -n
    echo "--- ipvsadm -L -n -c"; ipvsadm -L -n -c | head -40
    echo "--- ipset list -t"; ipset list -t
    echo "--- ip addr show kube-ipvs0"; ip addr show kube-ipvs0
    echo "--- iptables-save"; iptables-save
    echo "--- conntrack -L"; conntrack -L | head -40
    echo "--- proxy log (tail)"; tail -n 60 "$LOG"
  } 2>&1 | sed -e 's/^CHECK /CHECK: /' -e 's/^=== DUMP/=== dump/'
  echo "=== DUMP $1 END"
}

check() {
  local name=$1 verdict=$2; shift 2
  echo "CHECK $name $verdict $*"
  if [ "$verdict" = FAIL ]; then dump "$name"; fi
  return 0
}

pass_if() { local name=$1 ok=$2; shift 2; if [ "$ok" = 1 ]; then check "$name" PASS "$@"; else check "$name" FAIL "$@"; fi; }

# ipvs_only NAME: true in ipvs mode, else reports NAME as SKIP.
ipvs_only() { [ "$MODE" = ipvs ] && return 0; check "$1" SKIP "only meaningful with --proxy-mode=ipvs (this run: $MODE)"; return 1; }

# A probe prints the echo server's "<pod> <peer address>" or "ERR <class>@<guest time>" (the time
# lines a failure up with the proxy log). Classes: refused (RST / ICMP port unreachable),
# connect-timeout (SYN unanswered), no-reply (connected or sent, nothing came back), unreachable.
classify() {
  local rc=$1 out=$2 class
  if [ "$rc" -eq 0 ] && [[ $out =~ ^pod[0-9]+\ [0-9.]+$ ]]; then echo "$out"; return; fi
  case $out in
    *refused*) class=refused ;;
    *unreachable*) class=unreachable ;;
    *"timed out"*) class=connect-timeout ;;
    "") class=no-reply ;;
    *) class="rc=$rc ${out//$'\n'/ }" ;;
  esac
  echo "ERR $class@$(date +%T.%3N)"
}

# tcp NS IP PORT (timeouts generous: the guest is emulated and the host may be loaded)
tcp() {
  local out
  out=$(inns "$1" timeout 15 socat -T 8 -t 8 STDIO "TCP:$2:$3,connect-timeout=5" </dev/null 2>&1)
  classify $? "$out"
}

# udp NS IP PORT: one datagram on a connected socket, the first reply datagram (6 s at most; dd
# reads it whole in one read(), as bash's byte-wise `read` would not).
udp() {
  local out
  # shellcheck disable=SC2016
  out=$(inns "$1" timeout 10 bash -c 'exec 3<>"/dev/udp/$0/$1" || exit 3; echo ping >&3; timeout 6 dd bs=2048 count=1 status=none <&3' "$2" "$3" 2>&1)
  classify $? "$out"
}

# collect PROTO NS IP PORT N [DISTINCT]: N probes into R (fewer once DISTINCT pods answered).
collect() {
  R=()
  local i
  for ((i = 0; i < $5; i++)); do
    R+=("$($1 "$2" "$3" "$4")")
    if [ -n "${6:-}" ] && [ "$(pods_of | wc -w)" -ge "$6" ]; then break; fi
  done
}
pods_of() { printf '%s\n' "${R[@]}" | awk '$1 ~ /^pod/ { print $1 }' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
peers_of() { printf '%s\n' "${R[@]}" | awk '$1 ~ /^pod/ { print $2 }' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
errs_of() { printf '%s\n' "${R[@]}" | grep -c '^ERR'; }
replies() { local IFS=';'; echo "${R[*]}"; }

# wait_for TRIES SLEEP CMD...: runs CMD until it succeeds (TRIES at most, and no new try after 60 s).
wait_for() {
  local tries=$1 pause=$2 i end=$(($(ms) + 60000)); shift 2
  for ((i = 0; i < tries; i++)); do
    "$@" && return 0
    [ "$(ms)" -gt "$end" ] && return 1
    sleep "$pause"
  done
  return 1
}

put_manifest() { cp "$1" "$M/.$2.tmp" && mv -f "$M/.$2.tmp" "$M/$2"; }

# ip_vs real server weight of RS in service VIP:PORT ("absent" when it is not listed).
rs_weight() {
  ipvsadm -L -n -t "$1:$2" 2>/dev/null | awk -v rs="$3" '$1 == "->" && $2 == rs { print $4; found = 1 } END { if (!found) print "absent" }'
}

finish() {
  [ -n "$PROXY" ] && kill -KILL "$PROXY" 2>/dev/null
  for p in "${SERVER_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for ns in client outside $PODS; do ip netns del "$TAG-$ns" 2>/dev/null; done
  for f in auto.log refused.log cleanup.log proxy.log; do
    echo "=== LOG $f BEGIN"; tail -n 80 "$W/$f" 2>/dev/null; echo "=== LOG $f END"
  done
  timing total "$T0"
}
trap finish EXIT

# ---------------------------------------------------------------- topology and echo servers
t=$(ms)
echo 1 >/proc/sys/net/ipv4/ip_forward
ip netns add $TAG-outside
ip link add $TAG-ho type veth peer name eth0 netns $TAG-outside
ip addr add "$NODE_IP/24" dev $TAG-ho && ip link set $TAG-ho up
inns outside ip link set lo up
inns outside ip addr add "$OUTSIDE_IP/24" dev eth0 && inns outside ip link set eth0 up
ip route add default via "$OUTSIDE_IP" dev $TAG-ho
i=0
for p in client $PODS; do
  if [ "$p" = client ]; then ip=$CLIENT_IP; else v=IP_$p; ip=${!v}; fi
  ip netns add "$TAG-$p"
  ip link add "$TAG-h$i" type veth peer name eth0 netns "$TAG-$p"
  ip addr add "$POD_GATEWAY/32" dev "$TAG-h$i" && ip link set "$TAG-h$i" up
  ip route add "$ip/32" dev "$TAG-h$i"
  inns "$p" ip link set lo up
  inns "$p" ip addr add "$ip/32" dev eth0 && inns "$p" ip link set eth0 up
  inns "$p" ip route add "$POD_GATEWAY" dev eth0 && inns "$p" ip route add default via "$POD_GATEWAY" dev eth0
  i=$((i + 1))
done
UDP_ECHO='import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
s.settimeout(600)
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(("%s %s\n" % (sys.argv[1], peer[0])).encode(), peer)'
for p in $PODS; do
  inns "$p" socat TCP-LISTEN:"$ECHO_TCP",fork,reuseaddr SYSTEM:"echo $p \$SOCAT_PEERADDR" </dev/null >/dev/null 2>>"$W/servers.log" &
  SERVER_PIDS+=($!)
  # UDP: one process answering every datagram itself (socat's UDP-RECVFROM,fork can hand a
  # datagram to a stale child under load, which then answers the wrong peer). Exits after 10 idle min.
  inns "$p" python3 -c "$UDP_ECHO" "$p" "$ECHO_UDP" </dev/null >/dev/null 2>>"$W/servers.log" &
  SERVER_PIDS+=($!)
  inns "$p" socat -T 150 TCP-LISTEN:"$HOLD_TCP",fork,reuseaddr SYSTEM:"echo $p \$SOCAT_PEERADDR; while read -r l; do echo $p \$l; done" </dev/null >/dev/null 2>>"$W/servers.log" &
  SERVER_PIDS+=($!)
done
pods_answer() {
  local p v
  for p in $PODS; do
    v=IP_$p
    [ "$(tcp client "${!v}" "$ECHO_TCP")" = "$p $CLIENT_IP" ] || return 1
    [ "$(udp client "${!v}" "$ECHO_UDP")" = "$p $CLIENT_IP" ] || return 1
    [ "$(tcp client "${!v}" "$HOLD_TCP")" = "$p $CLIENT_IP" ] || return 1
  done
}
pods_deadline=$(($(ms) + 30000)) PODS_OK=0
pods_ready() { pods_answer && PODS_OK=1 && return 0; [ "$(ms)" -gt "$pods_deadline" ]; }
wait_for 20 0.5 pods_ready
if [ $PODS_OK = 1 ]; then
  check pods-reachable PASS "TCP $ECHO_TCP, UDP $ECHO_UDP and TCP $HOLD_TCP of $PODS answer the client directly in $(($(ms) - t)) ms"
else
  check pods-reachable FAIL "a pod echo server did not answer the client directly within 20 tries / 30 s; servers.log: $(tr '\n' ' ' <"$W/servers.log" | cut -c1-400)"
fi
timing topology "$t"
cp "$IN"/initial/*.yaml "$M/"
ROUTE_LOCALNET_BEFORE=$(cat /proc/sys/net/ipv4/conf/all/route_localnet)

# ---------------------------------------------------------------- auto: --proxy-mode unset
t=$(ms)
timeout 150 "$KP" --manifests="$M" --hostname-override="$NODE" --cluster-cidr="$CLUSTER_CIDR" --dry-run --once -v=2 >"$W/auto.out" 2>"$W/auto.log"
rc=$?
choice=$(grep -m1 -E 'Proxy mode not set|Using proxy mode' "$W/auto.log")
if [ $rc -eq 0 ] && grep -qE 'Proxy mode not set.*using ipvs|Using proxy mode mode="ipvs"' "$W/auto.log"; then
  check auto-mode PASS "exit 0 after $(($(ms) - t)) ms, $(wc -l <"$W/auto.out") lines of dry-run output; log: $choice"
else
  check auto-mode FAIL "exit $rc after $(($(ms) - t)) ms; log: ${choice:-no mode line}; last: $(tail -n 3 "$W/auto.log" | tr '\n' ' ' | cut -c1-600)"
fi
timing auto "$t"

# ---------------------------------------------------------------- a refused ipvs start changes nothing
# ipvsadm hidden from PATH (every other sbin tool still there): --proxy-mode=ipvs must refuse with
# exit 1 before it touches the IPVS or conntrack sysctls.
if ipvs_only refused-start; then
  t=$(ms)
  mkdir -p "$W/path-without-ipvsadm"
  ln -s /usr/sbin/* "$W/path-without-ipvsadm/" && rm -f "$W/path-without-ipvsadm/ipvsadm"
  ipvsadm -L -n >/dev/null 2>&1 # ip_vs loaded, so net/ipv4/vs/ exists before and after
  SYSCTLS="net/ipv4/vs/conntrack net/netfilter/nf_conntrack_max net/netfilter/nf_conntrack_tcp_timeout_established net/netfilter/nf_conntrack_tcp_timeout_close_wait"
  sysctl_values() { local k; for k in $SYSCTLS; do printf '%s=%s ' "$k" "$(cat "/proc/sys/$k" 2>&1)"; done; }
  before=$(sysctl_values)
  PATH=$W/path-without-ipvsadm:/usr/local/bin:/usr/bin:/bin timeout 120 "$KP" --proxy-mode=ipvs --manifests="$M" --hostname-override="$NODE" \
    --cluster-cidr="$CLUSTER_CIDR" -v=2 >"$W/refused.log" 2>&1
  rc=$?
  after=$(sysctl_values)
  ok=0; [ $rc = 1 ] && [ "$before" = "$after" ] && ok=1
  pass_if refused-start $ok "exit $rc after $(($(ms) - t)) ms; sysctls before: ${before}after: ${after}log: $(grep -v '^$' "$W/refused.log" | tail -n 2 | tr '\n' ' ' | cut -c1-500)"
  timing refused-start "$t"
fi

# ---------------------------------------------------------------- the proxy
t=$(ms)
case $MODE in
  ipvs) PERIODS=(--ipvs-sync-period=10s --ipvs-min-sync-period=0s) ;;
  *) PERIODS=(--iptables-sync-period=10s --iptables-min-sync-period=0s) ;;
esac
"$KP" --proxy-mode="$MODE" --manifests="$M" --hostname-override="$NODE" --cluster-cidr="$CLUSTER_CIDR" "${PERIODS[@]}" -v=2 >"$LOG" 2>&1 &
PROXY=$!
web_answers() { kill -0 "$PROXY" 2>/dev/null || return 2; [[ $(tcp client "$WEB_IP" "$WEB_TCP") == pod* ]]; }
started=0
for ((i = 0; i < 150; i++)); do
  web_answers; r=$?
  [ $r -eq 0 ] && { started=1; break; }
  [ $r -eq 2 ] && break
  [ $(($(ms) - t)) -gt 150000 ] && break
  sleep 0.5
done
sync_errors=$(grep -c 'Failed to sync' "$LOG")
if [ $started = 1 ] && [ "$sync_errors" -gt 0 ]; then
  # A clean start on an empty node must not need a retry (it once did: both families raced to create kube-ipvs0).
  check proxy-started FAIL "$WEB_IP:$WEB_TCP answered, but only after $sync_errors failed sync(s): $(grep -m1 'Failed to sync' "$LOG" | cut -c1-400)"
elif [ $started = 1 ]; then
  check proxy-started PASS "$WEB_IP:$WEB_TCP answered $(($(ms) - t)) ms after the start of bin/kube-proxy --proxy-mode=$MODE; $(grep -m1 'Using proxy mode' "$LOG" | cut -c1-200); failed syncs before that: $sync_errors $(grep -m1 'Failed to sync' "$LOG" | cut -c1-300)"
else
  kill -0 "$PROXY" 2>/dev/null && how="still running" || how="exited"
  check proxy-started FAIL "$WEB_IP:$WEB_TCP did not answer within $(($(ms) - t)) ms (proxy $how); last log: $(tail -n 5 "$LOG" | tr '\n' ' ' | cut -c1-800)"
fi
timing proxy-start "$t"

if ipvs_only ipvs-state; then
  missing=()
  addrs=$(ip -4 -o addr show dev kube-ipvs0 2>&1)
  save=$(ipvsadm -S -n 2>&1)
  set_entries=$(ipset list KUBE-CLUSTER-IP 2>&1)
  for v in WEB LOCAL STICKY EMPTY DRAIN GONE; do
    ipv=${v}_IP; portv=${v}_TCP
    grep -q "inet ${!ipv}/32" <<<"$addrs" || missing+=("kube-ipvs0:${!ipv}")
    grep -qx -- "-A -t ${!ipv}:${!portv} -s rr.*" <<<"$save" || missing+=("vs:${!ipv}:${!portv}")
    grep -q "^${!ipv},tcp:${!portv}" <<<"$set_entries" || missing+=("KUBE-CLUSTER-IP:${!ipv},tcp:${!portv}")
  done
  grep -qE -- "^-A -u $WEB_IP:$WEB_UDP " <<<"$save" || missing+=("vs:udp:$WEB_IP:$WEB_UDP")
  grep -qE -- "^-A -t $NODE_IP:$WEB_NODE_TCP " <<<"$save" || missing+=("vs:nodeport:$NODE_IP:$WEB_NODE_TCP")
  grep -qE -- "^-A -t $STICKY_IP:$STICKY_TCP .*-p 10800" <<<"$save" || missing+=("vs:persistent:$STICKY_IP:$STICKY_TCP")
  grep -qE -- "^-a -t $WEB_IP:$WEB_TCP -r $IP_pod1:$ECHO_TCP -m" <<<"$save" || missing+=("rs:$IP_pod1:$ECHO_TCP")
  n=$(grep -c '^-A' <<<"$save")
  if [ ${#missing[@]} -eq 0 ]; then check ipvs-state PASS "$n virtual servers; kube-ipvs0 and KUBE-CLUSTER-IP hold every ClusterIP"
  else check ipvs-state FAIL "missing: ${missing[*]}"; fi
fi

if ipvs_only sysctls; then
  vs=$(cat /proc/sys/net/ipv4/vs/conntrack 2>&1) rl=$(cat /proc/sys/net/ipv4/conf/all/route_localnet)
  ok=0; [ "$vs" = 1 ] && [ "$rl" = 1 ] && ok=1
  pass_if sysctls $ok "net.ipv4.vs.conntrack=$vs route_localnet=$rl (route_localnet before the proxy: $ROUTE_LOCALNET_BEFORE; this script never sets them)"
fi

# ---------------------------------------------------------------- traffic
collect tcp client "$WEB_IP" "$WEB_TCP" 12 2
ok=0; [ "$(errs_of)" = 0 ] && [ "$(pods_of)" = "pod1 pod2" ] && [ "$(peers_of)" = "$CLIENT_IP" ] && ok=1
pass_if clusterip-tcp-pod $ok "client -> $WEB_IP:$WEB_TCP: pods [$(pods_of)] peers [$(peers_of)] replies: $(replies)"

collect udp client "$WEB_IP" "$WEB_UDP" 2
ok=0; [ "$(errs_of)" = 0 ] && [[ "$(pods_of)" =~ ^(pod1|pod2|pod1\ pod2)$ ]] && [ "$(peers_of)" = "$CLIENT_IP" ] && ok=1
pass_if clusterip-udp-pod $ok "client -> udp $WEB_IP:$WEB_UDP: $(replies)"

collect tcp node "$WEB_IP" "$WEB_TCP" 2
ok=0; [ "$(errs_of)" = 0 ] && [[ "$(pods_of)" =~ ^(pod1|pod2|pod1\ pod2)$ ]] && ok=1
pass_if clusterip-tcp-node $ok "node -> $WEB_IP:$WEB_TCP: $(replies)"

collect udp node "$WEB_IP" "$WEB_UDP" 2
ok=0; [ "$(errs_of)" = 0 ] && [[ "$(pods_of)" =~ ^(pod1|pod2|pod1\ pod2)$ ]] && ok=1
pass_if clusterip-udp-node $ok "node -> udp $WEB_IP:$WEB_UDP: $(replies)"

masqueraded() { [ "$(errs_of)" = 0 ] && [[ "$(pods_of)" =~ ^(pod1|pod2|pod1\ pod2)$ ]] && [[ "$(peers_of)" =~ ^($POD_GATEWAY|$NODE_IP|$POD_GATEWAY\ $NODE_IP)$ ]]; }
collect tcp outside "$NODE_IP" "$WEB_NODE_TCP" 4 2
ok=0; masqueraded && ok=1
pass_if nodeport-tcp-outside $ok "outside $OUTSIDE_IP -> $NODE_IP:$WEB_NODE_TCP: peers [$(peers_of)] (node addresses $POD_GATEWAY $NODE_IP) replies: $(replies)"

collect udp outside "$NODE_IP" "$WEB_NODE_UDP" 2
ok=0; masqueraded && ok=1
pass_if nodeport-udp-outside $ok "outside $OUTSIDE_IP -> udp $NODE_IP:$WEB_NODE_UDP: peers [$(peers_of)] replies: $(replies)"

collect tcp outside "$NODE_IP" "$LOCAL_NODE_TCP" 6
ok=0; [ "$(errs_of)" = 0 ] && [ "$(pods_of)" = pod3 ] && [ "$(peers_of)" = "$OUTSIDE_IP" ] && ok=1
pass_if local-policy $ok "outside -> $NODE_IP:$LOCAL_NODE_TCP (endpoints pod3 here, pod2 on $OTHER_NODE): pods [$(pods_of)] peers [$(peers_of)] replies: $(replies)"

hc=$(inns outside timeout 10 curl -s -m 8 -w ' HTTP %{http_code}' "http://$NODE_IP:$LOCAL_HEALTH_CHECK/" 2>&1)
ok=0; [[ $hc == *'"localEndpoints": 1'*' HTTP 200' || $hc == *'"localEndpoints":1'*' HTTP 200' ]] && ok=1
pass_if local-health-check $ok "outside -> http://$NODE_IP:$LOCAL_HEALTH_CHECK/: ${hc//$'\n'/ }"

collect tcp client "$STICKY_IP" "$STICKY_TCP" 6
ok=0; [ "$(errs_of)" = 0 ] && [ "$(pods_of | wc -w)" = 1 ] && ok=1
pass_if session-affinity $ok "6 connections client -> $STICKY_IP:$STICKY_TCP (3 endpoints): pods [$(pods_of)]"

t=$(ms)
collect tcp client "$EMPTY_IP" "$EMPTY_TCP" 1
took=$(($(ms) - t))
ok=0; [[ ${R[0]} == "ERR refused@"* ]] && [ $took -lt 3000 ] && ok=1
pass_if no-endpoints $ok "client -> $EMPTY_IP:$EMPTY_TCP: ${R[0]} after $took ms"

# ---------------------------------------------------------------- an idle periodic resync changes nothing
# No change is pending: across the next periodic sync of both families (--ipvs-sync-period=10s)
# the kernel state must stay as it is and TCP and UDP to the ClusterIP must keep answering.
if ipvs_only resync-steady; then
  t=$(ms)
  kernel_state() { { ipvsadm -S -n; ip -o addr show dev kube-ipvs0; ipset save | grep -v '^create' | sort; } 2>&1 | md5sum | cut -c1-8; }
  synced() { grep -c "syncProxyRules complete.*ipFamily=\"$1\"" "$LOG"; }
  v4=$(synced IPv4) v6=$(synced IPv6) first=$(kernel_state) R2=()
  for ((i = 0; i < 60; i++)); do
    R2+=("$(tcp client "$WEB_IP" "$WEB_TCP")" "$(udp client "$WEB_IP" "$WEB_UDP")")
    [ "$(synced IPv4)" -gt "$v4" ] && [ "$(synced IPv6)" -gt "$v6" ] && break
    [ $(($(ms) - t)) -gt 25000 ] && break
  done
  R=("${R2[@]}") last=$(kernel_state)
  crossed=0; [ "$(synced IPv4)" -gt "$v4" ] && [ "$(synced IPv6)" -gt "$v6" ] && crossed=1
  ok=0; [ $crossed = 1 ] && [ "$(errs_of)" = 0 ] && [ "$first" = "$last" ] && ok=1
  pass_if resync-steady $ok "periodic syncs of both families crossed: $crossed in $(($(ms) - t)) ms; ${#R[@]} probes, $(errs_of) failed; kernel state (ipvsadm -S, kube-ipvs0, ipset entries) before $first after $last; replies: $(replies)"
fi

# ---------------------------------------------------------------- endpoint removal, graceful termination
t=$(ms)
coproc HOLD { exec ip netns exec "$TAG-client" socat -T 120 STDIO "TCP:$DRAIN_IP:$DRAIN_TCP,connect-timeout=5" 2>/dev/null; }
HOLD_IN=${HOLD[1]} HOLD_OUT=${HOLD[0]} HOLDER=$HOLD_PID
first=
IFS= read -t 15 -r first <&"$HOLD_OUT"
held=${first%% *}
if [[ ! $first =~ ^pod[0-9]+\ $CLIENT_IP$ ]]; then
  for c in drain-weight-zero drain-idle-removed drain-open-connection drain-new-connections; do
    check $c FAIL "the held connection to $DRAIN_IP:$DRAIN_TCP got '${first}' instead of '<pod> $CLIENT_IP'"
  done
else
  kv=DRAIN_KEEPS_$held keep=${!kv}
  idle=$(for p in $PODS; do [ "$p" != "$held" ] && [ "$p" != "$keep" ] && echo "$p"; done)
  hv=IP_$held iv=IP_$idle
  held_rs=${!hv}:$HOLD_TCP idle_rs=${!iv}:$HOLD_TCP
  put_manifest "$IN/drain-keep-$keep.yaml" drain.yaml
  changed=$(ms)
  if [ "$MODE" = ipvs ]; then
    drained() { [ "$(rs_weight "$DRAIN_IP" "$DRAIN_TCP" "$held_rs")" = 0 ]; }
    idle_gone() { [ "$(rs_weight "$DRAIN_IP" "$DRAIN_TCP" "$idle_rs")" = absent ]; }
    wait_for 60 0.5 drained; w0=$(($(ms) - changed))
    wait_for 10 0.5 idle_gone; w1=$(($(ms) - changed))
    listing=$(ipvsadm -L -n -t "$DRAIN_IP:$DRAIN_TCP" 2>&1 | awk '$1 == "->" { printf "%s w=%s act=%s inact=%s; ", $2, $4, $5, $6 }')
    ok=0; drained && ok=1
    pass_if drain-weight-zero $ok "held $held ($held_rs) weight $(rs_weight "$DRAIN_IP" "$DRAIN_TCP" "$held_rs") ${w0} ms after the manifest change; listing: $listing"
    ok=0; idle_gone && [ $((w1 - w0)) -le 5000 ] && ok=1
    pass_if drain-idle-removed $ok "idle $idle ($idle_rs) $(rs_weight "$DRAIN_IP" "$DRAIN_TCP" "$idle_rs") ${w1} ms after the change ($((w1 - w0)) ms after the weight went to 0); listing: $listing"
  else
    check drain-weight-zero SKIP "only meaningful with --proxy-mode=ipvs (this run: $MODE)"
    check drain-idle-removed SKIP "only meaningful with --proxy-mode=ipvs (this run: $MODE)"
    nat_forgot() { ! iptables-save -t nat | grep -qE -- "--to-destination (${!hv}|${!iv}):$HOLD_TCP"; }
    wait_for 60 0.5 nat_forgot
  fi
  echo ping >&"$HOLD_IN"
  echoed=
  IFS= read -t 10 -r echoed <&"$HOLD_OUT"
  ok=0; [ "$echoed" = "$held ping" ] && ok=1
  pass_if drain-open-connection $ok "after $held was removed, 'ping' on the held connection came back as '$echoed'"
  collect tcp client "$DRAIN_IP" "$DRAIN_TCP" 4
  ok=0; [ "$(errs_of)" = 0 ] && [ "$(pods_of)" = "$keep" ] && ok=1
  pass_if drain-new-connections $ok "4 new connections after removing $held and $idle: pods [$(pods_of)] (expected only $keep) replies: $(replies)"
fi
kill "$HOLDER" 2>/dev/null
timing drain "$t"

# ---------------------------------------------------------------- manifest changes: one service added, one deleted
t=$(ms)
put_manifest "$IN/late.yaml" late.yaml
rm -f "$M/gone.yaml"
late_answers() { [ "$(tcp client "$LATE_IP" "$LATE_TCP")" = "pod2 $CLIENT_IP" ]; }
ok=0; wait_for 60 0.5 late_answers && ok=1
pass_if manifest-new-service $ok "$LATE_IP:$LATE_TCP -> pod2 $(($(ms) - t)) ms after the manifest was written"
if [ "$MODE" = ipvs ]; then
  gone_state() {
    ! ipvsadm -S -n | grep -q -- "-t $GONE_IP:$GONE_TCP" && ! ip -4 -o addr show dev kube-ipvs0 | grep -q "inet $GONE_IP/" &&
      ! ipset list KUBE-CLUSTER-IP | grep -q "^$GONE_IP,"
  }
else
  gone_state() { ! iptables-save -t nat | grep -q -- "-d $GONE_IP/32"; }
fi
wait_for 60 0.5 gone_state; gs=$?
after=$(tcp client "$GONE_IP" "$GONE_TCP")
ok=0; [ $gs = 0 ] && [[ $after == ERR* ]] && ok=1
pass_if manifest-deleted-service $ok "state of $GONE_IP:$GONE_TCP $([ $gs = 0 ] && echo removed || echo 'still present') $(($(ms) - t)) ms after the deletion; a connection then: $after"
timing manifest-change "$t"

# ---------------------------------------------------------------- SIGTERM, --cleanup
t=$(ms)
kill -TERM "$PROXY"
for ((i = 0; i < 80; i++)); do kill -0 "$PROXY" 2>/dev/null || break; sleep 0.5; done
if kill -0 "$PROXY" 2>/dev/null; then
  kill -KILL "$PROXY"; wait "$PROXY" 2>/dev/null
  check sigterm FAIL "the proxy did not exit within 40 s of SIGTERM (killed)"
else
  wait "$PROXY"; rc=$?
  if [ "$MODE" = ipvs ]; then left=$(ipvsadm -S -n | grep -c '^-A'); else left=$(iptables-save -t nat | grep -c '^-A KUBE-SVC'); fi
  ok=0; [ $rc = 0 ] && [ "$left" -gt 0 ] && ok=1
  pass_if sigterm $ok "exit $rc $(($(ms) - t)) ms after SIGTERM; $left rules/virtual servers left in place"
fi
PROXY=
timing sigterm "$t"

t=$(ms)
timeout 150 "$KP" --cleanup -v=2 >"$W/cleanup.log" 2>&1
rc=$?
took=$(($(ms) - t))
problems=()
vs_left=$(ipvsadm -S -n 2>&1 | grep -c .)
[ "$vs_left" = 0 ] || problems+=("ipvsadm -S -n has $vs_left lines")
sets=$(ipset list -n 2>&1 | grep '^KUBE-' | tr '\n' ' ')
[ -z "$sets" ] || problems+=("ipsets: $sets")
if ip link show kube-ipvs0 >/dev/null 2>&1; then
  a=$(ip -o addr show dev kube-ipvs0 | grep -c inet)
  [ "$a" = 0 ] || problems+=("kube-ipvs0 still has $a addresses")
fi
for save in iptables-nft-save iptables-legacy-save; do
  k=$($save 2>/dev/null | grep -E '^:KUBE-|KUBE-' | sort -u | tr '\n' ' ' | cut -c1-400)
  [ -z "$k" ] || problems+=("$save: $k")
done
ok=0; [ $rc = 0 ] && [ ${#problems[@]} = 0 ] && ok=1
pass_if cleanup $ok "--cleanup exit $rc after $took ms; leftovers: ${problems[*]:-none}"
timing cleanup "$t"
