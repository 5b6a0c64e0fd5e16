#!/usr/bin/env bash
# The cluster client against gRPC C++ 1.51, measured in the same run:
#   tests/bench/t1_compare.sh RESULTS.jsonl
# reads the T0 / T1 lines of wheelbeat_net_bench (impl "wheelbeat") and wheelbeat_grpc_bench
# (impl "grpc"; the last line of each scenario, impl and config wins) and prints one JSON line per
# acceptance check of the cluster client's `full` settings:
#   {"compare":"grpc","scenario":"T1","check":"p99_us","wheelbeat":…,"against":"grpc best",
#    "baseline":…,"ratio":…,"target":0.5,"met":true}
# T1 (faults): failed share <= 0.01 % and <= gRPC best's; p99 <= 0.5 x gRPC best's and <= 2 x
# wheelbeat's own T0 p99; p99.9 <= 0.3 x gRPC best's; extra attempts <= 5 %; client CPU per call
# <= 0.1 x gRPC best's. T0 (no fault): 0 failed; extra attempts <= 1 %; p99 <= 1.2 x plain round
# robin's. A check whose lines are missing is left out. With T0's floor in the results (impl
# "raw_epoll": a consumer of plain sockets and no library), one more line puts the CPU figures
# beside it: {"compare":"floor","check":"client_cpu_us_per_call","floor":…,"wheelbeat_t0":…,
# "wheelbeat_t1":…,"grpc_t1":…,"floor_vs_grpc":…,"target_reachable":false} — the CPU target is
# out of reach on this machine when the floor alone is above 0.1 x gRPC's. Exit 2 on a usage
# error, 1 if jq is missing or fails.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 RESULTS.jsonl" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq not found (make deps installs it)" >&2; exit 1; }

jq -c -s '
  def pick($s; $impl; $cfg): map(select(.scenario == $s and .impl == $impl and .config == $cfg))
                             | last;
  def failedShare: if (.offered // 0) > 0 then .failed / .offered else null end;
  def sig4: if . == null or . == 0 then .
            else ((3 - (fabs | log10 | floor)) as $k | pow(10; $k) as $u | (. * $u | round) / $u)
            end;
  # A bound on a ratio to a baseline (target: the ratio allowed).
  def ratio($s; $check; $w; $against; $b; $target):
    select($w != null and $b != null)
    | (if $b != 0 then ($w / $b | sig4) else null end) as $r
    | {compare: "grpc", scenario: $s, check: $check, wheelbeat: $w, against: $against,
       baseline: $b, ratio: $r, target: $target,
       met: (if $r == null then ($w <= 0) else ($r <= $target) end)};
  # An absolute bound.
  def bound($s; $check; $w; $target):
    select($w != null)
    | {compare: "grpc", scenario: $s, check: $check, wheelbeat: $w, target: $target,
       met: ($w <= $target)};
  . as $all
  | ($all | pick("T1"; "wheelbeat"; "full")) as $w1
  | ($all | pick("T1"; "grpc"; "best")) as $g1
  | ($all | pick("T0"; "wheelbeat"; "full")) as $w0
  | ($all | pick("T0"; "wheelbeat"; "round_robin")) as $rr0
  | ($all | pick("T0"; "raw_epoll"; "raw")) as $raw0
  | [
      ($w1 | select(. != null) | bound("T1"; "failed_share"; failedShare; 0.0001)),
      ratio("T1"; "failed_share"; ($w1 // {} | failedShare); "grpc best";
            ($g1 // {} | failedShare); 1),
      ratio("T1"; "p99_us"; $w1.p99_us; "grpc best"; $g1.p99_us; 0.5),
      ratio("T1"; "p99_us"; $w1.p99_us; "wheelbeat T0 full"; $w0.p99_us; 2),
      ratio("T1"; "p999_us"; $w1.p999_us; "grpc best"; $g1.p999_us; 0.3),
      bound("T1"; "extra_attempts_ratio"; $w1.extra_attempts_ratio; 0.05),
      ratio("T1"; "client_cpu_us_per_call"; $w1.client_cpu_us_per_call; "grpc best";
            $g1.client_cpu_us_per_call; 0.1),
      bound("T0"; "failed"; $w0.failed; 0),
      bound("T0"; "extra_attempts_ratio"; $w0.extra_attempts_ratio; 0.01),
      ratio("T0"; "p99_us"; $w0.p99_us; "wheelbeat T0 round_robin"; $rr0.p99_us; 1.2),
      ($raw0 | select(. != null and $g1 != null)
       | .client_cpu_us_per_call as $f
       | {compare: "floor", check: "client_cpu_us_per_call", floor: $f,
          wheelbeat_t0: $w0.client_cpu_us_per_call, wheelbeat_t1: $w1.client_cpu_us_per_call,
          grpc_t1: $g1.client_cpu_us_per_call,
          floor_vs_grpc: (if $g1.client_cpu_us_per_call > 0
                          then ($f / $g1.client_cpu_us_per_call | sig4) else null end),
          target_reachable: ($f <= 0.1 * $g1.client_cpu_us_per_call)})
    ]
  | .[]
' "$1"
