#!/usr/bin/env bash
# ctest bench_netty_smoke: wheelbeat_netty_bench --quick prints a header and exactly one line per
# scenario S1-S7, each with the fields and sizes of its definition and sane values; with a quick
# wheelbeat_bench run, tests/bench/netty_compare.sh prints one comparison per scenario; the
# command line runs one scenario alone, prints --help and rejects bad values with exit 2.
#   netty_smoke.sh PATH/wheelbeat_netty_bench PATH/wheelbeat_bench
# Exit 77 (skipped) when the harness was not built (no javac or Netty jars) or java is missing.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WHEELBEAT_NETTY_BENCH WHEELBEAT_BENCH" >&2; exit 2; }
netty=$1
wheel=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$netty" ] || ! command -v java >/dev/null; then
  echo "SKIP: $netty not built or java not found (make deps: default-jdk-headless, libnetty-java)"
  exit 77
fi
command -v jq >/dev/null || { echo "FAIL: jq not found (make deps installs it)" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! "$netty" --quick > "$out/netty.jsonl" 2> "$out/netty.err"; then
  cat "$out/netty.err" >&2
  fail "--quick run"
fi
jq -e . "$out/netty.jsonl" > /dev/null || fail "a line is not JSON"
[ "$(wc -l < "$out/netty.jsonl")" -eq 8 ] || fail "$(wc -l < "$out/netty.jsonl") lines, expected 8"
head -n 1 "$out/netty.jsonl" | jq -e '.bench == "netty" and (.netty | startswith("4.1."))
  and (.jvm | length > 0) and (.definitions | type == "object")' > /dev/null || fail "header"

# One scenario's line: exactly once, impl netty, quick sizes, and `checks` (a jq condition) true.
expect() {  # expect SCENARIO N CHECKS
  local got
  got=$(jq -c --arg s "$1" 'select(.scenario == $s)' "$out/netty.jsonl")
  [ "$(printf '%s\n' "$got" | grep -c .)" -eq 1 ] || fail "$1: not exactly one line"
  printf '%s\n' "$got" | jq -e --argjson n "$2" \
    ".impl == \"netty\" and .n == \$n and .reps == 1 and .warmup == 0 and ($3)" > /dev/null \
    || fail "$1: $got"
}
num='type == "number"'
expect S1 20000 ".ns_per_op > 0 and (.gc_ms | $num) and (keys_unsorted[2] == \"ns_per_op\")"
expect S2 20000 ".ns_per_pair > 0 and (.gc_ms | $num)"
expect S3 20000 ".ns_per_op > 0 and (.gc_ms | $num)"
expect S4 20000 "(.rss_bytes_per_timeout | $num) and .heap_bytes_per_timeout > 0"
# Netty computes each deadline from its own clock read after ours: never early (min >= 0).
expect S5 2000 ".min_ms >= 0 and .min_ms <= .p50_ms and .p50_ms <= .p99_ms and .p99_ms <= .p999_ms
  and .p999_ms <= .max_ms"
expect S6 20000 ".cpu_pct >= 0 and .window_ms >= 200"
expect S7 20000 ".fired_per_s > 0 and .timer_cpu_ms > 0 and .fire_window_ms >= 0
  and ((.worker_cpu_ns_per_timeout * .n / 1e6 - .timer_cpu_ms) | fabs) < 0.01 * .timer_cpu_ms"

# The comparison: one line per scenario with both figures (S7's from wheelbeat's fallback if its
# line has no worker_cpu_ns_per_timeout) and a ratio that agrees with them.
"$wheel" --quick --impl wheelbeat > "$out/all.jsonl" 2> /dev/null || fail "wheelbeat_bench --quick"
cat "$out/netty.jsonl" >> "$out/all.jsonl"
"$here/../netty_compare.sh" "$out/all.jsonl" > "$out/compare.jsonl" || fail "netty_compare.sh"
[ "$(jq -r .scenario "$out/compare.jsonl" | tr '\n' ' ')" = "S1 S2 S3 S4 S5 S6 S7 " ] \
  || fail "comparison scenarios: $(jq -r .scenario "$out/compare.jsonl" | tr '\n' ' ')"
jq -e '.compare == "netty" and (.["wheelbeat_" + .metric] | type == "number")
  and (.["netty_" + .metric] | type == "number") and has("target") and has("met")
  and (if .["netty_" + .metric] == 0 then .ratio == null
       else ((.ratio - .["wheelbeat_" + .metric] / .["netty_" + .metric]) | fabs) <= 1e-3 * .ratio
       end)' "$out/compare.jsonl" > /dev/null \
  || fail "comparison lines: $(cat "$out/compare.jsonl")"

# The command line.
"$netty" --scenario=S2 --quick > "$out/s2.jsonl" 2> /dev/null || fail "--scenario=S2 --quick"
[ "$(jq -r '.scenario // "header"' "$out/s2.jsonl" | tr '\n' ' ')" = "header S2 " ] \
  || fail "S2 alone"
"$netty" --help | grep -q '^usage: wheelbeat_netty_bench' || fail "--help"
for bad in "--scenario S9" "--reps 0" "--warmup x" "--bogus"; do
  set +e
  # shellcheck disable=SC2086 # word splitting wanted: option and value
  "$netty" $bad > /dev/null 2> "$out/bad.err"
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "'$bad' exits $rc, expected 2"
  grep -qF -- "${bad%% *}" "$out/bad.err" || fail "'$bad': message does not name the option"
done
echo "bench_netty_smoke: OK"
