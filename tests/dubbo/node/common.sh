# What the Node interop drivers share; sourced (`. common.sh`), not run. Sets `node_dir` and
# `work` (a temporary directory), installs the EXIT trap that kills every process started through
# `spawn` and removes `work`, and exits 77 (ctest: skipped) when node or node_modules is missing.
set -u
node_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v node >/dev/null || { echo "node not found (Debian: nodejs): skipped"; exit 77; }
[ -d "$node_dir/node_modules/dubbo2.js" ] && [ -d "$node_dir/node_modules/dubbo.ts" ] || {
  echo "$node_dir/node_modules missing (make node-deps, or npm ci --prefix tests/dubbo/node): skipped"
  exit 77
}
# within SECONDS CMD... and free_port: polling and a free loopback port below 32768.
. "$node_dir/../../../samples/echo/check_common.sh"

work=$(mktemp -d)
pids=""
cleanup() {
  for p in $pids; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# spawn NAME CMD...: runs CMD in the background, stdout in $work/NAME.out, stderr in
# $work/NAME.err; its pid in $spawned.
spawn() {
  local name=$1; shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null &
  spawned=$!
  pids="$pids $spawned"
}

dump() {
  for f in "$work"/*.out "$work"/*.err; do echo "--- $f"; tail -20 "$f"; done
}
fail() { echo "FAIL: $*"; dump; exit 1; }

# echo_server NAME BIN [ARGS...]: starts `BIN echo-server --port 0 ARGS` and sets $port once it
# printed "listening on" (bounded: 20 s).
echo_server() {
  local name=$1 bin=$2; shift 2
  spawn "$name" "$bin" echo-server --port 0 "$@"
  local line="s/^wheelbeat-dubbo: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p"
  port=""
  listening() { port=$(sed -n "$line" "$work/$name.out" 2>/dev/null); [ -n "$port" ]; }
  within 20 listening || fail "$name printed no port"
}

# zookeeper: a standalone ZooKeeper (Debian's package) on a free loopback port, as
# samples/echo/echo_zookeeper_check.sh and tests/registry/zookeeper/zk_server.h start it; sets
# $zk_port once it serves (bounded: 30 s). Returns 77 when java or its jar is missing.
zookeeper() {
  local java=/usr/bin/java jar=/usr/share/java/zookeeper.jar slf4j=/usr/share/java/slf4j-simple.jar
  [ -x "$java" ] && [ -f "$jar" ] || return 77
  zk_port=$(free_port) || fail "no free loopback port"
  mkdir -p "$work/zk"
  printf '%s\n' tickTime=200 minSessionTimeout=2000 maxSessionTimeout=10000 "dataDir=$work/zk" \
    "clientPort=$zk_port" clientPortAddress=127.0.0.1 admin.enableServer=false \
    4lw.commands.whitelist=srvr >"$work/zoo.cfg"
  local cp=$jar
  [ -f "$slf4j" ] && cp="$jar:$slf4j"
  spawn zookeeper "$java" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$cp" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg"
  serving() {
    (exec 3<>"/dev/tcp/127.0.0.1/$zk_port" && printf srvr >&3 && timeout 2 cat <&3) 2>/dev/null |
      grep -q '^Mode: '
  }
  within 30 serving || fail "ZooKeeper did not serve on 127.0.0.1:$zk_port within 30 s"
}
