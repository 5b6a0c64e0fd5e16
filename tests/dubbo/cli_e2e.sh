#!/usr/bin/env bash
# ctest dubbo_cli_e2e: wheelbeat-dubbo echo-server and call over loopback. A typed matrix (each
# value comes back with its type, in the typed JSON form), a generic call, fail() exiting 1 with
# the exception on stdout, an unknown method exiting 3 naming it, bad usage exiting 2.
#
#   cli_e2e.sh BIN
set -u
bin=$1
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
failures=0

"$bin" echo-server --port 0 >"$work/server.out" 2>"$work/server.err" &
pid=$!
# The port, once printed (bounded: 200 x 50 ms).
port=""
for _ in $(seq 200); do
  port=$(sed -n 's/^wheelbeat-dubbo: listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/server.out")
  [ -n "$port" ] && break
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "FAIL: echo-server printed no port"; cat "$work/server.out" "$work/server.err"; exit 1
fi
target="dubbo://127.0.0.1:$port/org.wheelbeat.interop.Echo"

# check METHOD TYPES ARGS EXPECTED_STDOUT EXPECTED_STATUS [STDERR_PATTERN]
check() {
  local out err status
  out=$("$bin" call "$target" "$1" --types "$2" --args "$3" --timeout-ms 5000 2>"$work/err")
  status=$?
  err=$(cat "$work/err")
  if [ "$out" != "$4" ] || [ "$status" != "$5" ]; then
    echo "FAIL: $1 $3: stdout '$out' (expected '$4'), status $status (expected $5); stderr: $err"
    failures=$((failures + 1))
  elif [ $# -ge 6 ] && ! grep -q -- "$6" "$work/err"; then
    echo "FAIL: $1 $3: stderr '$err' lacks '$6'"
    failures=$((failures + 1))
  else
    echo "ok: $1 $3 -> $out ($status)"
  fi
}

check echoString java.lang.String '["héllo"]' '"héllo"' 0
check echoInt int '[5]' '5' 0
check echoInt int '[{"$int": "-7"}]' '-7' 0
check echoLong long '[{"$long": "5"}]' '{"$long":"5"}' 0
check echoLong long '[5000000000]' '{"$long":"5000000000"}' 0
check echoDouble double '[0.5]' '{"$double":"0.5"}' 0
check echoDouble double '[{"$double": "NaN"}]' '{"$double":"NaN"}' 0
check echoBoolean boolean '[true]' 'true' 0
check echoBytes 'byte[]' '[{"$bytes": "AAEC/w=="}]' '{"$bytes":"AAEC/w=="}' 0
check echoList java.util.List '[[1, "a", null]]' '[1,"a",null]' 0
check echoMap java.util.Map '[{"a": 1, "b": [true]}]' '{"a":1,"b":[true]}' 0
check echo java.lang.Object '[{"$date": 1700000000000}]' '{"$date":1700000000000}' 0
check echo java.lang.Object '[{"$class": "com.example.Point", "x": 1, "y": 2}]' \
  '{"$class":"com.example.Point","x":1,"y":2}' 0
check echo java.lang.Object '[{"$list": [1, 2], "$type": "[int"}]' '{"$list":[1,2],"$type":"[int"}' 0
check echo java.lang.Object '[{"$map": [[1, "one"]]}]' '{"$map":[[1,"one"]]}' 0
check echo java.lang.Object '[null]' 'null' 0
check sleep int '[20]' 'null' 0
check fail java.lang.String '["boom"]' '{"exception": "java.lang.RuntimeException", "message": "boom"}' 1
check nope java.lang.String '["x"]' '' 3 'Service not found:org.wheelbeat.interop.Echo, nope'
check echoInt int '[{"$int": "x"}]' '' 2 'typed JSON /0/\$int: "x"'

generic=$("$bin" call "$target" echoString --generic --types java.lang.String --args '["g"]')
if [ "$generic" != '"g"' ]; then echo "FAIL: generic call: '$generic'"; failures=$((failures + 1)); fi

kill -TERM $pid
wait $pid
status=$?
pid=""
if [ $status != 0 ]; then echo "FAIL: echo-server exited $status"; failures=$((failures + 1)); fi
# Every call above reached the server but the bad-usage one: 19, and the generic call; the
# unknown method is the one error.
if ! grep -q "requests 20, values 18, exceptions 1, errors 1" "$work/server.err"; then
  echo "FAIL: server counters: $(cat "$work/server.err")"; failures=$((failures + 1))
fi
[ $failures = 0 ] && echo "dubbo_cli_e2e: every check passed"
exit $((failures > 0))
