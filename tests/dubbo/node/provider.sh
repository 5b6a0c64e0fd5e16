#!/usr/bin/env bash
# ctest dubbo_node_provider: `wheelbeat-dubbo call` against a dubbo.ts provider of
# org.wheelbeat.interop.Echo (dubbo_ts_provider.js): the type matrix through the typed echoes,
# echo(Object) and fail(String), each stdout compared with the expected typed JSON
# (cli_caller.js); then the provider must have counted exactly those requests. Exit 77 (skipped)
# without node or node_modules.
#
#   provider.sh BIN
. "$(dirname "$0")/common.sh"
bin=$1

spawn provider node "$node_dir/dubbo_ts_provider.js"
provider_pid=$spawned
line='s/^dubbo_ts_provider: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p'
listening() { port=$(sed -n "$line" "$work/provider.out" 2>/dev/null); [ -n "$port" ]; }
within 20 listening || fail "the dubbo.ts provider printed no port"

timeout 300 node "$node_dir/cli_caller.js" --bin "$bin" \
  --target "dubbo://127.0.0.1:$port/org.wheelbeat.interop.Echo" >"$work/caller.out" 2>"$work/caller.err"
status=$?
echo "cli_caller: $(tail -1 "$work/caller.out")"
[ $status = 0 ] || fail "cli_caller exited $status"
calls=$(sed -n 's/^{"calls":\([0-9]*\),.*/\1/p' "$work/caller.out")

kill -TERM "$provider_pid"
wait "$provider_pid"
counted() { grep -q "^dubbo_ts_provider: requests $calls, failures 1$" "$work/provider.err"; }
counted || fail "provider counters: $(cat "$work/provider.err") (expected requests $calls, failures 1: fail())"
echo "dubbo_node_provider: passed ($calls calls)"
