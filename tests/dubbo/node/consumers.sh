#!/usr/bin/env bash
# ctest dubbo_node_direct / dubbo_node_zookeeper / dubbo_node_load: Node.js consumers call
# `wheelbeat-dubbo echo-server`.
#   direct     dubbo2.js by host:port: the type matrix (matrix.js), each answer equal and of the
#              same Hessian type, and fail(String) rejecting with its message
#   zookeeper  the echo server registers in a real ZooKeeper; dubbo2.js and dubbo.ts discover it
#              there and run the same matrix
#   load       dubbo2.js sends CALLS echoString calls, 64 in flight, by host:port
# Every mode then stops the server and asserts its counters: every request answered, no decode
# error. Exit 77 (skipped) without node, node_modules or (zookeeper, greeter) java and
# ZooKeeper's jar.
#   greeter    BIN is wheelbeat_demo_node: a greeter provider (samples/rpc/greeter.h) registers in
#              a real ZooKeeper; dubbo2.js by host:port and dubbo.ts through ZooKeeper call
#              sayHello("Ada") (the exact greeting; dubbo2.js $echo too); the provider then counts exactly
#              those two greetings and stops cleanly on SIGTERM
#
#   consumers.sh BIN direct|zookeeper|load|greeter [CALLS]
. "$(dirname "$0")/common.sh"
bin=$1 mode=$2 calls=${3:-100000}

# run_consumer NAME SCRIPT ARGS...: runs a consumer (bounded: 300 s), prints its summary line and
# adds its ok count to $answered; fails the test on a non-zero exit.
answered=0
run_consumer() {
  local name=$1; shift
  timeout 300 node "$node_dir/$@" >"$work/$name.out" 2>"$work/$name.err"
  local status=$?
  echo "$name: $(tail -1 "$work/$name.out")"
  [ $status = 0 ] || fail "$name exited $status"
  local ok
  ok=$(sed -n 's/.*"ok":\([0-9]*\).*/\1/p' "$work/$name.out" | tail -1)
  answered=$((answered + ok))
}

# stop_server: SIGTERM, then its last line must show every request answered and 0 errors (a
# request the server could not decode is counted as an error).
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid"
  local status=$?
  [ $status = 0 ] || fail "echo-server exited $status"
  local counters
  counters=$(grep -o 'requests [0-9]*, values [0-9]*, exceptions [0-9]*, errors [0-9]*' \
    "$work/server.err")
  echo "echo-server: $counters"
  local requests values exceptions errors
  read -r requests values exceptions errors <<<"$(tr -dc '0-9 ' <<<"$counters" | tr -s ' ')"
  [ "$errors" = 0 ] || fail "echo-server counted $errors error(s)"
  [ "$requests" = "$expected_requests" ] ||
    fail "echo-server counted $requests requests, expected $expected_requests"
  [ $((values + exceptions)) = "$requests" ] || fail "echo-server: answers != requests"
  # A frame the server cannot decode closes its connection with a warning in its log.
  ! grep -E ' (WARN|ERROR) ' "$work/server.err" || fail "echo-server logged warnings or errors"
}

case $mode in
  direct)
    echo_server server "$bin"
    server_pid=$spawned
    run_consumer dubbo2 dubbo2_consumer.js --direct "127.0.0.1:$port"
    expected_requests=$answered
    stop_server
    ;;
  load)
    echo_server server "$bin"
    server_pid=$spawned
    run_consumer dubbo2_load dubbo2_consumer.js --direct "127.0.0.1:$port" --mode load \
      --calls "$calls" --inflight 64
    [ "$answered" = "$calls" ] || fail "$answered answers of $calls calls"
    expected_requests=$calls
    stop_server
    ;;
  zookeeper)
    zookeeper
    [ $? = 77 ] && { echo "java or ZooKeeper's jar missing: skipped"; exit 77; }
    registry="zookeeper://127.0.0.1:$zk_port"
    echo_server server "$bin" --registry "$registry"
    server_pid=$spawned
    # Registered once a consumer of the registry finds it (bounded: 20 s of one-shot calls).
    found() {
      "$bin" call org.wheelbeat.interop.Echo echoString --registry "$registry" \
        --types java.lang.String --args '["registered?"]' --timeout-ms 2000 >/dev/null 2>&1
    }
    within 20 found || fail "the echo server was not found through ZooKeeper"
    answered=0
    run_consumer dubbo2 dubbo2_consumer.js --zookeeper "127.0.0.1:$zk_port"
    run_consumer dubbo_ts dubbo_ts_consumer.js --zookeeper "127.0.0.1:$zk_port"
    # The successful probe call counts too; the failed ones never reached the server.
    expected_requests=$((answered + 1))
    stop_server
    ;;
  greeter)
    zookeeper
    [ $? = 77 ] && { echo "java or ZooKeeper's jar missing: skipped"; exit 77; }
    spawn provider "$bin" --role provider --name greeter-1 --registry-kind zookeeper \
      --registry-port "$zk_port" --config "$node_dir/../../../samples/demo/cluster.json"
    server_pid=$spawned
    status_line='s/.*STATUS role=provider state=registered port=\([0-9]*\) .*/\1/p'
    registered() { port=$(sed -n "$status_line" "$work/provider.out" | tail -1); [ -n "$port" ]; }
    within 20 registered || fail "the greeter provider did not register"
    greeting="Hello, Ada! (127.0.0.1:$port)"
    run_consumer greeter_dubbo2 greeter_consumer.js --direct "127.0.0.1:$port" --expect "$greeting"
    run_consumer greeter_dubbo_ts greeter_consumer.js --zookeeper "127.0.0.1:$zk_port" \
      --expect "$greeting"
    [ "$answered" = 3 ] || fail "$answered answers of 3 calls"
    # Its status line (every 500 ms) counts the greetings served: one per consumer.
    served() { tail -1 "$work/provider.out" | grep -q ' ok=2 '; }
    within 10 served || fail "the provider did not count 2 greetings"
    kill -TERM "$server_pid"
    wait "$server_pid"
    status=$?
    [ $status = 0 ] || fail "the greeter provider exited $status"
    grep -q 'state=stopped' "$work/provider.out" || fail "the greeter provider did not stop"
    ;;
  *) echo "usage: consumers.sh BIN direct|zookeeper|load|greeter [CALLS]"; exit 2 ;;
esac
echo "dubbo_node_$mode: passed"
