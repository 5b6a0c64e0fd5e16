#!/usr/bin/env bash
# Writes the result tables of docs/performance.md from the JSON lines of one `make bench` run:
#   tests/bench/perf_tables.sh RESULTS.jsonl [DOC.md]        (DOC: docs/performance.md)
# Each table sits between two marker comments of DOC, `<!-- bench:NAME -->` and
# `<!-- /bench:NAME -->`, NAME one of run, wheel, H1, H2, R1, D1, T (T0 / T1's lines of every
# implementation: wheelbeat, the floor, gRPC), Tchecks (t1_compare.sh's lines); the text between them is
# replaced, everything else is left as it is. A scenario missing from the results gets a line
# saying so; a figure missing from a line is "-". The machine comes from the {"run": ...} lines
# when the results hold some (recorded runs, tests/bench/data/; several files may be concatenated),
# else from this host (make bench calls it right after the run, on the machine that ran it). Needs jq. Exit 2 on a usage error or a missing marker, 1 if jq is missing.
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

# One row per run the results record ({"run": {machine, source}} lines), else this host's.
table_run() {
  local runs
  runs=$(q 'select(.run != null) | .run | "| " + .machine + " | " + .source + " |"')
  if [ -z "$runs" ]; then
    runs="| $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(. /etc/os-release && echo "$PRETTY_NAME") | the JSON lines of \`make bench\` (build/bench/results.jsonl) |"
  fi
  echo "| machine | record |"
  echo "|---|---|"
  printf '%s\n' "$runs"
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
    | [(.conns | f) + \" × \" + (.depth | f), (.loops | f), .impl, (.bodies // \"raw\"),
       (.requests_per_s | f), (.server_cpu_us_per_request | f),
       (.server_cpu_per_request_vs_raw | f), (.p99_vs_raw | f),
       (.server_cpu_per_request_vs_1_loop | f), (.server_cpu_per_request_vs_raw_bodies | f)]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "R1 is not in these results."; return; fi
  echo "| conns × depth | loops | impl | bodies | requests/s | server CPU µs per request | server CPU vs floor | p99 vs floor | server CPU vs 1 loop | server CPU vs raw bodies |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
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

table_t() {
  local lines
  lines=$(q "$JQ_DEF def int: if . == null then \"-\" else (round | tostring) end;
    select((.scenario == \"T0\" or .scenario == \"T1\") and .impl != null and .offered != null)
    | [.scenario, ((if .impl == \"raw_epoll\" then \"floor (raw sockets)\" else .impl end) + \" \" + .config),
       ((.failed | f) + (if (.failed_by_error | length) > 0
         then \" (\" + ([.failed_by_error | to_entries[] | \"\\(.value) \\(.key)\"] | join(\", \")) + \")\"
         else \"\" end)),
       (.p50_us | int), (.p99_us | int), (.p999_us | int),
       (if .extra_attempts_ratio == null then \"-\" else ((.extra_attempts_ratio * 10000 | round) / 100 | tostring) + \" %\" end),
       (.client_cpu_us_per_call | if . == null then \"-\" else (. * 10 | round) / 10 | tostring end)
       + (if .pacing_cpu_us_per_call == null then \"\" else \" (\" + ((.pacing_cpu_us_per_call * 10 | round) / 10 | tostring) + \")\" end)]
    | \"| \" + join(\" | \") + \" |\"")
  if [ -z "$lines" ]; then echo "T0 / T1 are not in these results."; return; fi
  echo "| scenario | impl config | failed (by error) | p50 µs | p99 µs | p999 µs | extra attempts | client CPU µs per call (pacing) |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "$lines"
}

table_tchecks() {
  local lines floor
  lines=$(q "$JQ_DEF select(.compare == \"grpc\")
    | [.scenario, .check, (.wheelbeat | f), (.against // \"-\"), (.baseline | f), (.ratio | f),
       (.target | f), (if .met then \"yes\" else \"no\" end)]
    | \"| \" + join(\" | \") + \" |\"")
  floor=$(q "$JQ_DEF select(.compare == \"floor\")
    | \"The floor (T0, a consumer of raw sockets with the same pacing): \" + (.floor | f)
      + \" µs of CPU per call, \" + (.floor_vs_grpc | f) + \" × gRPC best's T1 (\" + (.grpc_t1 | f)
      + \" µs); wheelbeat full: \" + (.wheelbeat_t0 | f) + \" µs in T0, \" + (.wheelbeat_t1 | f)
      + \" µs in T1. \" + (if .target_reachable then \"A 0.1 × gRPC target is within the floor.\"
      else \"The floor alone is above 0.1 × gRPC's: that target is out of reach on this machine.\" end)")
  if [ -z "$lines" ]; then echo "The T0 / T1 checks against gRPC are not in these results."; return; fi
  echo "| scenario | check | wheelbeat full | against | baseline | ratio | target | met |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "$lines"
  if [ -n "$floor" ]; then echo; printf '%s\n' "$floor"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table_run > "$tmp/run"
table_wheel > "$tmp/wheel"
table_heartbeat H1 > "$tmp/H1"
table_heartbeat H2 > "$tmp/H2"
table_r1 > "$tmp/R1"
table_d1 > "$tmp/D1"
table_t > "$tmp/T"
table_tchecks > "$tmp/Tchecks"

for name in run wheel H1 H2 R1 D1 T Tchecks; do
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
