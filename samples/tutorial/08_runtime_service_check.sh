#!/usr/bin/env bash
# ctest sample_08_runtime_service (labels sample, metrics): tutorial 08 — README's "A service in
# a dozen lines" — run as a service.
#   1. started in the configs folder (it reads service.json there): its echo call succeeds (the
#      retry policy covers the attempts made while the client connects); the runtime logs the
#      port of /metrics
#   2. its /metrics is accepted by `promtool check metrics` and holds the application's counter
#      (echo_requests_total 1: the one echo the server answered) beside wheelbeat's own metrics
#      (the connection accepted, both of its ends connected)
#   3. SIGTERM: it stops everything and exits 0; the port no longer answers
# Exit 77 (skipped) when promtool is missing. Usage: 08_runtime_service_check.sh <tutorial> <configs>
set -u
bin=$1 configs=$2
command -v promtool >/dev/null ||
  { echo "promtool missing (Debian: prometheus): skipped"; exit 77; }
. "$(dirname "$0")/../echo/check_common.sh" # within

dir=$(mktemp -d)
pid=''
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  echo "--- output"
  cat "$dir/out.log"
  exit 1
}

# 1. The service, in the folder of its service.json.
(cd "$configs" && exec "$bin") >"$dir/out.log" 2>&1 &
pid=$!
within 20 grep -q '^echo: ' "$dir/out.log" || fail "no echo outcome within 20 s"
grep -q '^echo: ok$' "$dir/out.log" || fail "the echo call did not succeed"
port=$(sed -n 's|.* INFO  wheelbeat: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$dir/out.log")
[ -n "$port" ] || fail "no 'metrics on http://127.0.0.1:PORT/metrics' log line"

# 2. Its metrics, as Prometheus reads them.
curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >"$dir/metrics.txt" ||
  fail "GET /metrics on port $port failed"
promtool check metrics <"$dir/metrics.txt" >"$dir/promtool.log" 2>&1 ||
  fail "promtool check metrics: $(cat "$dir/promtool.log")"
value() { awk -v n="$1" '$1 == n { print $2 }' "$dir/metrics.txt"; }
[ "$(value echo_requests_total)" = 1 ] ||
  fail "echo_requests_total: '$(value echo_requests_total)' (expected 1)"
[ "$(value wheelbeat_server_accepted_total)" = 1 ] ||
  fail "wheelbeat_server_accepted_total: '$(value wheelbeat_server_accepted_total)' (expected 1)"
connected='wheelbeat_channels{state="connected"}'
[ "$(value "$connected")" = 2 ] || fail "$connected: '$(value "$connected")' (expected 2: both ends)"
grep -q '^# TYPE echo_requests_total counter$' "$dir/metrics.txt" || fail "no TYPE line for the counter"

# 3. SIGTERM: an ordered stop and exit 0.
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=''
[ $rc -eq 0 ] || fail "exit $rc after SIGTERM (expected 0)"
curl -sf --max-time 2 "http://127.0.0.1:$port/metrics" >/dev/null &&
  fail "/metrics still answers after the exit"
echo "sample_08_runtime_service: echo ok, /metrics accepted by promtool, echo_requests_total 1, exit 0"
