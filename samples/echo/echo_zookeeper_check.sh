#!/usr/bin/env bash
# ctest sample_echo_zookeeper: the echo tools joined through a real ZooKeeper.
#   1. a standalone ZooKeeper (Debian's package) on a free loopback port, in a temporary directory
#   2. echo_server --registry zookeeper://... --service org.example.Echo --service-version 1.0.0
#   3. echo_client (same service and version) lists the provider and gets echoes from it through
#      its cluster client; a second client asking version 2.0.0 never gets one: every request
#      fails with no-endpoint (Dubbo's version match)
#   4. the server is SIGKILLed (no unregister): its ephemeral node goes with its session (4 s
#      asked); the client prints the empty list within the session + slack, and at exit reports 0
#      reconnects since the list emptied (the link to the provider that left was closed)
#   5. bad flag values are refused with the flag named (exit status 2)
# Every process is killed and the directory removed on every exit path. Exit 77 (skipped) when
# java or ZooKeeper's jar is missing. Usage: echo_zookeeper_check.sh <echo_server> <echo_client>
set -u
server_bin=$1 client_bin=$2
java=/usr/bin/java
zk_jar=/usr/share/java/zookeeper.jar
slf4j=/usr/share/java/slf4j-simple.jar
[ -x "$java" ] && [ -f "$zk_jar" ] || { echo "java or $zk_jar missing: skipped"; exit 77; }

dir=$(mktemp -d)
zkpid='' spid='' cpid='' c2pid=''
cleanup() {
  for p in $c2pid $cpid $spid $zkpid; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in server client client2 zookeeper; do echo "--- $f"; cat "$dir/$f.log" 2>/dev/null; done
  exit 1
}
. "$(dirname "$0")/check_common.sh" # within, free_port
now_ms() { date +%s%3N; }
srvr() { # ZooKeeper's "srvr" four-letter command
  exec 3<>"/dev/tcp/127.0.0.1/$zk_port" || return 1
  printf srvr >&3
  timeout 2 cat <&3
  exec 3<&-
}
serving() { srvr 2>/dev/null | grep -q '^Mode: '; }

# 1. ZooKeeper: tick 200 ms, sessions 2..10 s (as tests/registry/zookeeper/zk_server.h).
zk_port=$(free_port) || fail "no free loopback port"
mkdir -p "$dir/data"
cat >"$dir/zoo.cfg" <<EOF
tickTime=200
minSessionTimeout=2000
maxSessionTimeout=10000
dataDir=$dir/data
clientPort=$zk_port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
EOF
classpath=$zk_jar
[ -f "$slf4j" ] && classpath="$zk_jar:$slf4j"
"$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
  -cp "$classpath" org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
  >"$dir/zookeeper.log" 2>&1 </dev/null &
zkpid=$!
within 30 serving || fail "ZooKeeper did not serve on port $zk_port within 30 s"
registry="zookeeper://127.0.0.1:$zk_port"
echo "ZooKeeper serving on 127.0.0.1:$zk_port"

# Short session (4 s), heartbeat (500 ms), registry retries (500 ms): quick to see. Reconnects
# every 100 .. 200 ms: a link the directory failed to close would try ~10 times in the 2 s window.
cat >"$dir/echo.json" <<EOF
{ "log_level": "warn", "registry": { "session": "4s" },
  "heartbeat": { "interval": "500ms",
                 "reconnect": { "backoff": "exponential", "initial_delay": "100ms", "max_delay": "200ms" } },
  "failback": { "registry_retry": { "backoff": "fixed", "initial_delay": "500ms", "max_delay": "500ms" } } }
EOF

# 5 first (cheap): bad values name their flag.
out=$("$client_bin" --registry "etcd://127.0.0.1:1" --service org.example.Echo 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--registry' <<<"$out" || fail "bad --registry: exit $rc: $out"
out=$("$server_bin" --registry "$registry" --service "org/example" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--service' <<<"$out" || fail "bad --service: exit $rc: $out"
out=$("$client_bin" --registry "$registry" --service org.example.Echo --service-version "1 0" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--service-version' <<<"$out" || fail "bad --service-version: exit $rc: $out"

# 2. The provider.
"$server_bin" --port 0 --config "$dir/echo.json" --registry "$registry" \
  --service org.example.Echo --service-version 1.0.0 >"$dir/server.log" 2>&1 &
spid=$!
within 20 grep -q ' INFO  echo_server: registered dubbo://' "$dir/server.log" || fail "no registration"
url=$(sed -n 's/.* INFO  echo_server: registered \([^ ]*\).*/\1/p' "$dir/server.log")
echo "provider: $url"

# 3. The consumers.
"$client_bin" --config "$dir/echo.json" --registry "$registry" --service org.example.Echo \
  --service-version 1.0.0 >"$dir/client.log" 2>&1 &
cpid=$!
"$client_bin" --config "$dir/echo.json" --registry "$registry" --service org.example.Echo \
  --service-version 2.0.0 >"$dir/client2.log" 2>&1 &
c2pid=$!
responses() { grep -c ' INFO  response' "$dir/client.log"; }
echoed() { [ "$(responses)" -ge 2 ]; }
within 20 grep -qF "from $url in" "$dir/client.log" || fail "the client got no answer from $url"
grep -qF "providers: 1: $url" "$dir/client.log" || fail "the client did not list the provider"
within 15 echoed || fail "no echoes"

# 4. kill -9 the provider: no unregister, ZooKeeper's session expiry removes it.
kill -9 $spid
wait $spid 2>/dev/null
spid=''
t0=$(now_ms)
within 15 grep -q ' INFO  providers: 0$' "$dir/client.log" || fail "the provider's removal was not seen"
removal_ms=$(($(now_ms) - t0))
echo "removal seen after ${removal_ms} ms (session 4 s)"
[ $removal_ms -le 10000 ] || fail "removal took ${removal_ms} ms (> session 4 s + 6 s slack)"
sleep 2 # a window for reconnects that must not come (the client counts them, see its exit line)

kill -TERM $cpid; wait $cpid; crc=$?; cpid=''
kill -TERM $c2pid; wait $c2pid; c2rc=$?; c2pid=''
echo "--- client"; cat "$dir/client.log"; echo "--- client 2.0.0"; tail -3 "$dir/client2.log"
echo "--- server"; cat "$dir/server.log"
[ $crc -eq 0 ] && [ $c2rc -eq 0 ] || fail "client exit $crc, client 2.0.0 exit $c2rc"
grep -qF "echo_client: 0 reconnect(s) since the provider list emptied" "$dir/client.log" ||
  fail "reconnects after the provider left"
! grep -q ' INFO  response #' "$dir/client2.log" || fail "the 2.0.0 client called a 1.0.0 provider"
grep -q 'failed: no-endpoint' "$dir/client2.log" || fail "the 2.0.0 client reported nothing"
echo "passed: $(responses) responses, removal after ${removal_ms} ms, no reconnect after it"
