#!/usr/bin/env bash
# ctest sample_echo_prometheus (label metrics): the echo tools scraped by a real Prometheus.
#   1. echo_server and echo_client (heartbeat 200 ms) each serve --metrics on a loopback port
#   2. Debian's prometheus scrapes both every second (temporary storage, loopback port)
#   3. its HTTP API (/api/v1/query) gives the client's wheelbeat_tasks_heartbeats_sent_total: non-zero,
#      and between the client's own values read before and after that scrape
#   4. the client stops; the server's counters no longer move; after the next scrape Prometheus
#      holds exactly the server's own values (frames in, connections accepted)
#   5. `promtool check metrics` accepts both texts; a bad --metrics value is refused (exit 2)
# Every process is killed and the directory removed on every exit path. Exit 77 (skipped) when
# prometheus or promtool is missing. Usage: echo_prometheus_check.sh <echo_server> <echo_client>
set -u
server_bin=$1 client_bin=$2
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "prometheus or promtool missing (Debian: prometheus): skipped"; exit 77; }
command -v jq >/dev/null || { echo "jq missing: skipped"; exit 77; }

dir=$(mktemp -d)
spid='' cpid='' ppid_=''
cleanup() {
  for p in $cpid $spid $ppid_; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  for f in server client prometheus; do echo "--- $f"; tail -40 "$dir/$f.log" 2>/dev/null; done
  exit 1
}
. "$(dirname "$0")/check_common.sh" # within, free_port
scrape() { curl -sf --max-time 2 "http://127.0.0.1:$1/metrics"; }
# The value of a sample without labels in a scrape text ($1 port, $2 name).
own() { scrape "$1" | awk -v n="$2" '$1 == n { print $2 }'; }
promql() { # the value of an instant query, "" if none
  curl -sf --max-time 2 --get "http://127.0.0.1:$prom_port/api/v1/query" \
    --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
prom_time() { # the timestamp of the newest sample of $1 (seconds, fractional), "" if none
  curl -sf --max-time 2 --get "http://127.0.0.1:$prom_port/api/v1/query" \
    --data-urlencode "query=timestamp($1)" | jq -r '.data.result[0].value[1] // empty'
}

echo_port=$(free_port) && server_metrics=$(free_port) && client_metrics=$(free_port) &&
  prom_port=$(free_port) || fail "no free port"

# 5 first (cheap): a bad --metrics value names the flag.
out=$("$server_bin" --port 0 --metrics "9464" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q -- '--metrics' <<<"$out" || fail "bad --metrics: exit $rc: $out"

# 1. The echo tools.
cat >"$dir/echo.json" <<EOF
{ "log_level": "warn", "heartbeat": { "interval": "200ms" } }
EOF
"$server_bin" --port "$echo_port" --config "$dir/echo.json" \
  --metrics "127.0.0.1:$server_metrics" >"$dir/server.log" 2>&1 &
spid=$!
within 20 scrape "$server_metrics" >/dev/null || fail "the server's endpoint did not answer"
"$client_bin" --port "$echo_port" --config "$dir/echo.json" \
  --metrics "127.0.0.1:$client_metrics" >"$dir/client.log" 2>&1 &
cpid=$!
within 20 scrape "$client_metrics" >/dev/null || fail "the client's endpoint did not answer"

# 2. Prometheus.
cat >"$dir/prometheus.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s }
scrape_configs:
  - job_name: echo_server
    static_configs: [ { targets: [ "127.0.0.1:$server_metrics" ] } ]
  - job_name: echo_client
    static_configs: [ { targets: [ "127.0.0.1:$client_metrics" ] } ]
EOF
promtool check config "$dir/prometheus.yml" >/dev/null || fail "promtool rejects the config"
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn >"$dir/prometheus.log" 2>&1 &
ppid_=$!
both_up() { [ "$(promql 'count(up == 1)')" = 2 ]; }
within 60 both_up || fail "Prometheus did not scrape both targets within 60 s"
echo "Prometheus on 127.0.0.1:$prom_port scrapes both endpoints"

# 3. A moving counter: Prometheus' value lies between the client's values around its scrape.
hb='wheelbeat_tasks_heartbeats_sent_total'
sent() { v=$(own "$client_metrics" "$hb"); [ -n "$v" ] && [ "$v" -gt 0 ]; }
within 10 sent || fail "the client sent no heartbeat"
before=$(own "$client_metrics" "$hb")
t_before=$(date +%s.%N)
newer() { t=$(prom_time "$hb{job=\"echo_client\"}"); [ -n "$t" ] && awk -v a="$t" -v b="$t_before" 'BEGIN { exit !(a > b) }'; }
within 10 newer || fail "no scrape after $t_before"
seen=$(promql "$hb{job=\"echo_client\"}")
after=$(own "$client_metrics" "$hb")
echo "client $hb: own $before .. $after, Prometheus $seen"
[ "$before" -le "$seen" ] && [ "$seen" -le "$after" ] || fail "Prometheus' $seen outside [$before, $after]"

# 5. promtool reads both texts.
scrape "$server_metrics" >"$dir/server.prom" && scrape "$client_metrics" >"$dir/client.prom" ||
  fail "scrape failed"
promtool check metrics <"$dir/server.prom" || fail "promtool rejects the server's text"
promtool check metrics <"$dir/client.prom" || fail "promtool rejects the client's text"

# 4. The client goes; once the server saw it, its counters are still: Prometheus must hold them
# exactly after its next scrape.
kill -TERM $cpid; wait $cpid; crc=$?; cpid=''
[ $crc -eq 0 ] || fail "echo_client exit $crc"
closed() { [ "$(own "$server_metrics" 'wheelbeat_channels{state="connected"}')" = 0 ]; }
within 10 closed || fail "the server did not see the client go"
t_before=$(date +%s.%N)
for m in wheelbeat_channel_frames_in_total wheelbeat_channel_bytes_in_total \
  wheelbeat_server_accepted_total; do
  mine=$(own "$server_metrics" "$m")
  [ -n "$mine" ] && [ "$mine" -gt 0 ] || fail "server $m: '$mine'"
  fresh() { t=$(prom_time "$m{job=\"echo_server\"}"); [ -n "$t" ] && awk -v a="$t" -v b="$t_before" 'BEGIN { exit !(a > b) }'; }
  within 10 fresh || fail "no scrape of $m after $t_before"
  seen=$(promql "$m{job=\"echo_server\"}")
  echo "server $m: own $mine, Prometheus $seen"
  [ "$seen" = "$mine" ] || fail "$m: Prometheus $seen, server $mine"
done

kill -TERM $spid; wait $spid; src=$?; spid=''
[ $src -eq 0 ] || fail "echo_server exit $src"
echo "passed"
