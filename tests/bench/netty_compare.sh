#!/usr/bin/env bash
# wheelbeat against Netty 4.1.48's HashedWheelTimer, measured in the same run:
#   tests/bench/netty_compare.sh RESULTS.jsonl
# reads the JSON lines of wheelbeat_bench and wheelbeat_netty_bench (the last line of each
# scenario and impl wins) and prints, for every scenario both measured, one JSON line
#   {"scenario":"S1","compare":"netty","metric":"ns_per_op","wheelbeat_ns_per_op":…,
#    "netty_ns_per_op":…,"ratio":…,"target":0.6,"met":true}
# ratio = wheelbeat / netty of the scenario's metric (all lower-is-better: 0.5 = half Netty's
# cost); met = ratio <= target, null where no target is set or a figure is missing or zero.
# S7's metric is worker_cpu_ns_per_timeout; a wheelbeat line without it (older wheelbeat_bench)
# falls back to 1e9 / fired_per_s, the same quantity (timer CPU / N). S7 also carries both
# fire_window_ms, S4 Netty's heap_bytes_per_timeout (the JVM caveat: see its header line).
# Exit 2 on a usage error, 1 if jq is missing or fails.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 RESULTS.jsonl" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq not found (make deps installs it)" >&2; exit 1; }

# The metric compared per scenario, and the bound on the ratio (null: reported, no target).
jq -c -s '
  def metrics: {S1: "ns_per_op", S2: "ns_per_pair", S3: "ns_per_op",
                S4: "rss_bytes_per_timeout", S5: "p99_ms", S6: "cpu_pct",
                S7: "worker_cpu_ns_per_timeout"};
  def targets: {S1: 0.6, S2: 0.6, S3: 0.6, S4: null, S5: null, S6: null, S7: 0.6};
  def sig4: if . == null or . == 0 then .
            else ((3 - (fabs | log10 | floor)) as $k | pow(10; $k) as $u | (. * $u | round) / $u)
            end;
  def value($m): if .[$m] == null and $m == "worker_cpu_ns_per_timeout" and (.fired_per_s // 0) > 0
                 then 1e9 / .fired_per_s else .[$m] end;
  def last_of($s; $impl): map(select(.scenario == $s and .impl == $impl)) | last;
  . as $lines
  | metrics | keys_unsorted[] as $s
  | ($lines | last_of($s; "wheelbeat")) as $w
  | ($lines | last_of($s; "netty")) as $n
  | select($w != null and $n != null)
  | metrics[$s] as $m
  | ($w | value($m)) as $wv
  | ($n | value($m)) as $nv
  | (if $wv != null and $nv != null and $nv != 0 then $wv / $nv | sig4 else null end) as $ratio
  | targets[$s] as $target
  | {scenario: $s, compare: "netty", metric: $m,
     ("wheelbeat_" + $m): ($wv | sig4), ("netty_" + $m): ($nv | sig4), ratio: $ratio,
     target: $target,
     met: (if $target != null and $ratio != null then $ratio <= $target else null end)}
    + (if $s == "S7" then {wheelbeat_fire_window_ms: $w.fire_window_ms,
                           netty_fire_window_ms: $n.fire_window_ms}
       elif $s == "S4" then {netty_heap_bytes_per_timeout: $n.heap_bytes_per_timeout}
       else {} end)
' "$1"
