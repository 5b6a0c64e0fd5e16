#!/usr/bin/env bash
# Writes the result tables of docs/performance.md from the JSON lines of one `make bench` run:
#   tests/bench/perf_tables.sh RESULTS.jsonl [DOC.md]        (DOC: docs/performance.md)
# Each table sits between two marker comments of DOC, `<!-- bench:NAME -->` and
# `<!-- /bench:NAME -->`, NAME one of run, wheel, H1, H2, R1, D1; the text between them is
# replaced, everything else is left as it is. A scenario missing from the results gets a line
# saying so; a figure missing from a line is "-". The run's date and machine come from a
# {"run": ...} line when the results hold one (a recorded run, tests/bench/data/), else from this
# host and the results file's modification time (make bench calls it right after the run, on the
# machine that ran it). Needs jq. Exit 2 on a usage error or a missing marker, 1 if jq is missing.
set -euo pipefail

usage() { echo "usage: $0 RESULTS.jsonl [DOC.md]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
results=$1
here=$(cd "$(dirname "$0")" && pwd)
doc=${2:-$here/../../docs/performance.md}
[ -r "$results" ] || { echo "$0: cannot read $results" >&2; exit 2; }
[ -w "$doc" ] || { echo "$0: cannot write $doc" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq not found (make deps installs it)" >&2; exit 1; }

# jq over the results; a line that is not an object is skipped.
q() { jq -r "select(type == \"object\") | $1" "$results"; }
# A number as written, or "-" when absent.
JQ_DEF='def f: if . == null then "-" else tostring end;
        def ms: if . == null then "-" else (. / 1000 * 100 | round / 100 | tostring) end;
        def rounds: if . == null then "" else " (" + (map(tostring) | join(" / ")) + ")" end;'

table_run() {
  local run
  run=$(q "select(.run != null) | .run | [.date, .machine, .source] | @tsv" | head -1)
  if [ -n "$run" ]; then
    IFS=$'\t' read -r date machine source <<<"$run"
  else
    date=$(date -u -r "$results" +%Y-%m-%d)
    machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(. /etc/os-release && echo "$PRETTY_NAME")"
    source="the JSON lines of \`make bench\` (build/bench/results.jsonl)"
  fi
  echo "| run | machine | record |"
  echo "|---|---|---|"
  echo "| $date | $machine | $source |"
}

table_wheel() {
  local lines
  lines=$(q "$JQ_DEF select(.compare == \"netty\")
    | [.scenario, .metric, (.[\"wheelbeat_\" + .metric] | f), (.[\"netty_\" + .metric] | f),
       (.ratio | f), (.target | f), (if .met == null then \"-\" elif .met then \"yes\" else \"no\" end)]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "The wheel against Netty is not in these results."; return; fi
  echo "| scenario | metric | wheelbeat | Netty 4.1.48 | ratio | target (ratio) | met |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "$lines"
}

table_heartbeat() {  # H1 or H2
  local s=$1 lines
  lines=$(q "$JQ_DEF select(.scenario == \"$s\" and .impl != null)
    | [.impl, (.cpu_us_per_heartbeat | f), ((.cpu_per_heartbeat_vs_raw | f) + (.cpu_per_heartbeat_vs_raw_rounds | rounds)),
       ((.rtt_p50_us | ms) + \" / \" + (.rtt_p99_us | ms)), ((.conns_held // .conns) | f), (.false_idle_closes | f),
       ((.rss_bytes_per_conn_server | f) + \" / \" + (.rss_bytes_per_conn_client | f))]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "$s is not in these results."; return; fi
  echo "| impl | CPU µs per heartbeat | vs floor (rounds) | RTT p50 / p99 ms | connections | false closes | RSS B per conn, server / client |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "$lines"
}

table_r1() {
  local lines
  lines=$(q "$JQ_DEF select(.scenario == \"R1\" and .impl != null)
    | [(.conns | f) + \" × \" + (.depth | f), (.loops | f), .impl, (.requests_per_s | f),
       (.server_cpu_us_per_request | f), (.server_cpu_per_request_vs_raw | f), (.p99_vs_raw | f),
       (.server_cpu_per_request_vs_1_loop | f)]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "R1 is not in these results."; return; fi
  echo "| conns × depth | loops | impl | requests/s | server CPU µs per request | server CPU vs floor | p99 vs floor | server CPU vs 1 loop |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "$lines"
}

table_d1() {
  local lines
  lines=$(q "$JQ_DEF select(.scenario == \"D1\" and .detector != null)
    | [.detector + (if .phi_acceptable_pause_ms == null then \"\" else \" (pause \" + (.phi_acceptable_pause_ms | tostring) + \" ms)\" end),
       .case, (if .case == \"dead\" then (.detect_ms_p50 | f) + \" / \" + (.detect_ms_p90 | f) + \" / \" + (.detect_ms_max | f) else \"-\" end),
       (.false_closes | f), (.samples | f)]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "D1 is not in these results."; return; fi
  echo "| detector | case | detect p50 / p90 / max ms | false closes | samples |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "$lines"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table_run > "$tmp/run"
table_wheel > "$tmp/wheel"
table_heartbeat H1 > "$tmp/H1"
table_heartbeat H2 > "$tmp/H2"
table_r1 > "$tmp/R1"
table_d1 > "$tmp/D1"

for name in run wheel H1 H2 R1 D1; do
  grep -qxF "<!-- bench:$name -->" "$doc" && grep -qxF "<!-- /bench:$name -->" "$doc" \
    || { echo "$0: $doc has no <!-- bench:$name --> ... <!-- /bench:$name --> markers" >&2; exit 2; }
done
awk -v dir="$tmp" '
  match($0, /^<!-- bench:[A-Za-z0-9]+ -->$/) {
    print; name = substr($0, 12, length($0) - 15); file = dir "/" name
    while ((getline line < file) > 0) print line
    close(file); skip = 1; next
  }
  /^<!-- \/bench:[A-Za-z0-9]+ -->$/ { skip = 0 }
  !skip { print }' "$doc" > "$tmp/doc"
cat "$tmp/doc" > "$doc"
echo "perf tables: $doc from $results" >&2
