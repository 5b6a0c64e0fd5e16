#!/usr/bin/env bash
# ctest sample_echo_cluster: echo_client calls two echo_servers through the cluster client.
#   1. a wheelbeat registry node (wheelbeat_demo_node --role registry) on a free loopback port
#   2. two echo_servers register org.example.Echo there
#   3. echo_client --registry ... --balancer round_robin --count 40 --interval-ms 100: both
#      servers answer, then one is SIGKILLed mid-run
#   4. every one of the 40 requests is answered exactly once (failover), every answer after the
#      kill comes from the survivor, the cluster client counts 40 calls, 40 ok, 0 failed, 40 first
#      attempts, and the client exits 0
#   5. cluster flags are checked: a near miss is named with the allowed values (exit status 2)
# Every tool runs with the demo's cluster.json (heartbeat 500 ms: the registry node closes a
# session idle for 3 s). Every process is killed and the directory removed on every exit path.
# Usage: echo_cluster_check.sh <echo_server> <echo_client> <wheelbeat_demo_node> <cluster.json>
set -u
server_bin=$1 client_bin=$2 node_bin=$3 cluster_json=$4
dir=$(mktemp -d)
rpid='' apid='' bpid='' cpid=''
cleanup() {
  for p in $cpid $apid $bpid $rpid; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in registry server-a server-b client; do echo "--- $f"; cat "$dir/$f.log" 2>/dev/null; done
  exit 1
}
. "$(dirname "$0")/check_common.sh" # within, free_port

# 5 first (cheap): the cluster flags' values and their need of --registry.
out=$("$client_bin" --registry embedded://127.0.0.1:1 --service org.example.Echo --cluster-mode failovr 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--cluster-mode' <<<"$out" && grep -q 'failover, failfast' <<<"$out" ||
  fail "bad --cluster-mode: exit $rc: $out"
out=$("$client_bin" --registry embedded://127.0.0.1:1 --service org.example.Echo --balancer P2C 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--balancer' <<<"$out" && grep -q 'round_robin' <<<"$out" ||
  fail "bad --balancer: exit $rc: $out"
out=$("$client_bin" --registry embedded://127.0.0.1:1 --service org.example.Echo --hedge-ms 0 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--hedge-ms' <<<"$out" || fail "bad --hedge-ms: exit $rc: $out"
out=$("$client_bin" --port 20880 --retries 3 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--retries needs --registry' <<<"$out" || fail "--retries alone: exit $rc: $out"

# 1. The registry node.
port=$(free_port) || fail "no free loopback port"
"$node_bin" --role registry --name registry --config "$cluster_json" --registry-port "$port" \
  >"$dir/registry.log" 2>&1 &
rpid=$!
within 20 grep -q 'STATUS role=registry state=listening' "$dir/registry.log" ||
  fail "the registry node did not listen on port $port"
registry="embedded://127.0.0.1:$port"

# 2. Two providers.
start_server() { # name
  "$server_bin" --port 0 --config "$cluster_json" --registry "$registry" --service org.example.Echo \
    >"$dir/$1.log" 2>&1 &
}
start_server server-a; apid=$!
start_server server-b; bpid=$!
url_of() { sed -n 's/.* INFO  echo_server: registered \([^ ]*\).*/\1/p' "$dir/$1.log"; }
within 20 grep -q 'echo_server: registered' "$dir/server-a.log" || fail "server-a did not register"
within 20 grep -q 'echo_server: registered' "$dir/server-b.log" || fail "server-b did not register"
url_a=$(url_of server-a) url_b=$(url_of server-b)
echo "providers: $url_a and $url_b"

# 3. The client, once both are listed; server-a is killed after 10 answers from both.
"$client_bin" --config "$cluster_json" --registry "$registry" --service org.example.Echo --cluster-mode failover \
  --balancer round_robin --retries 2 --count 40 --interval-ms 100 >"$dir/client.log" 2>&1 &
cpid=$!
responses() { grep -c ' INFO  response #' "$dir/client.log"; }
both_answered() {
  [ "$(responses)" -ge 10 ] && grep -qF "from $url_a " "$dir/client.log" &&
    grep -qF "from $url_b " "$dir/client.log"
}
within 30 both_answered || fail "the client did not get 10 answers from both servers"
before_kill=$(responses)
kill -9 $apid
wait $apid 2>/dev/null
apid=''
echo "server-a killed after $before_kill answers"

# 4. The client stops by itself after its 40 answers.
finished() { ! kill -0 $cpid 2>/dev/null; }
within 60 finished || fail "the client did not finish its 40 requests within 60 s"
wait $cpid; crc=$?; cpid=''
kill -TERM $bpid; wait $bpid; brc=$?; bpid=''
echo "--- client"; cat "$dir/client.log"
[ $crc -eq 0 ] || fail "client exit $crc"
[ $brc -eq 0 ] || fail "server-b exit $brc"
answered=$(responses)
failed=$(grep -c 'failed:' "$dir/client.log")
[ "$answered" -eq 40 ] || fail "$answered answers (expected 40)"
[ "$failed" -eq 0 ] || fail "$failed failed requests (expected 0)"
for n in $(seq 40); do
  [ "$(grep -c " INFO  response #$n: " "$dir/client.log")" -eq 1 ] || fail "response #$n not exactly once"
done
# Request before_kill + 1 may have been answered by server-a before the kill; none after it.
late_a=$(sed -n 's/.* INFO  response #\([0-9]*\): .* from \([^ ]*\) in .*/\1 \2/p' "$dir/client.log" |
  awk -v k="$before_kill" -v a="$url_a" '$1 > k + 1 && $2 == a' | wc -l)
[ "$late_a" -eq 0 ] || fail "$late_a answers from the killed server-a"
last_list=$(grep ' INFO  providers: ' "$dir/client.log" | tail -1)
grep -qF "providers: 1: $url_b" <<<"$last_list" || fail "the last provider list: $last_list"
from_b=$(grep -cF "from $url_b " "$dir/client.log")
figures=$(grep 'echo_client: cluster:' "$dir/client.log")
grep -q 'calls=40 ok=40 failed=0 failsafe=0 attempts first/retry/hedge=40/' <<<"$figures" ||
  fail "the cluster client's figures: $figures"
retries=$(sed -n 's/.*first\/retry\/hedge=40\/\([0-9]*\)\/.*/\1/p' <<<"$figures")
echo "passed: 40 of 40 answered (server-b $from_b), 0 failed, $retries failover retr(y/ies), server-a killed after $before_kill answers"
