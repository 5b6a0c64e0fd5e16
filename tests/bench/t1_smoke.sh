#!/usr/bin/env bash
# ctest net_bench_t1_smoke: T0 and T1 at a tiny size (3 providers, 200 calls/s, 0.5 s warm-up,
# 2 s window; provider 2 stopped once, 0.5 s into the window, for 1 s), round_robin and full,
# and the floor (raw: a consumer of plain sockets) in T0 only: five lines.
# Each line must have the issue's keys in order, and figures that agree with each other:
# offered = duration x rate = ok + failed, failed = the sum of failed_by_error, attempts = the
# providers' counts summed = the outcomes' attempts, >= offered; the two ratios as computed from
# them; ordered percentiles. T0 has no fault (no stop, no "overloaded" answer); T1 stopped
# provider 2 exactly once, and round_robin (failfast) returns provider 1's status 100 answers as
# "overloaded"; the floor answers every call with exactly one attempt. Needs jq (make deps); without it: exit 77 (skipped).
#   t1_smoke.sh BENCH
set -uo pipefail
bench=$1
command -v jq >/dev/null || { echo "t1_smoke.sh: jq not found: skipped" >&2; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$bench" --scenario T0,T1 --config round_robin,full,raw --providers 3 --rate 200 --duration 2 \
  --warmup 0.5 --stop-start 0.5 --stop-for 1 --stop-every 5 >"$out"
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: the bench exited $rc" >&2; exit 1; }
[ "$(wc -l <"$out")" -eq 5 ] || { echo "FAIL: $(wc -l <"$out") lines (expected 5)" >&2; exit 1; }
[ "$(jq -r 'select(.config == "raw") | .scenario' "$out")" = T0 ] ||
  { echo "FAIL: the floor ran outside T0, or not at all" >&2; cat "$out" >&2; exit 1; }

keys='["scenario","impl","config","providers","rate","duration_s","offered","ok","failed",
"failed_by_error","attempts","extra_attempts_ratio","error_rate","p50_us","p99_us","p999_us",
"max_us","achieved_rate","client_cpu_us_per_call","cpu_model"]'

# One problem per output line; none: all good.
problems=$(jq -r --argjson keys "$keys" '
  def near(a; b): ((a - b) | fabs) < 1e-5;
  def check(ok; what): if ok then empty else "\(.scenario) \(.config): \(what)" end;
  check(([keys_unsorted[0:($keys | length)]] == [$keys]); "keys \(keys_unsorted)"),
  check(.impl == (if .config == "raw" then "raw_epoll" else "wheelbeat" end) and .providers == 3 and .rate == 200 and .duration_s == 2;
        "run figures"),
  check(.offered == 400; "offered \(.offered) (expected 400)"),
  check(.ok + .failed == .offered; "ok \(.ok) + failed \(.failed) != offered"),
  check(([.failed_by_error[]] | add // 0) == .failed; "failed_by_error does not sum to failed"),
  check(.attempts == (.provider_attempts | add); "attempts != the providers summed"),
  check(.attempts == .attempts_client; "attempts \(.attempts) != attempts_client \(.attempts_client)"),
  check(.attempts >= .offered and .attempts >= .ok; "attempts \(.attempts) < offered or ok"),
  check(near(.extra_attempts_ratio; .attempts / .offered - 1); "extra_attempts_ratio"),
  check(near(.error_rate; .failed / .offered); "error_rate"),
  check(.p50_us > 0 and .p50_us <= .p99_us and .p99_us <= .p999_us and .p999_us <= .max_us;
        "percentiles not ordered"),
  check(.achieved_rate > 0 and .client_cpu_us_per_call > 0; "rate or CPU is 0"),
  check((.cpu_model | type) == "string" and (.cpu_model | length) > 0; "cpu_model"),
  check(.max_us < 1e6 * 2; "a call outlived its 500 ms deadline by far: \(.max_us) us"),
  (if .config == "raw" then
     check(.ok == .offered and .attempts == .offered; "the floor: ok \(.ok), attempts \(.attempts)")
   else empty end),
  (if .scenario == "T0" then
     check(.faults.stops == 0 and (.failed_by_error.overloaded // 0) == 0; "T0 had a fault")
   else
     check(.faults.stops == 1; "T1 stopped provider 2 \(.faults.stops) times (expected 1)"),
     (if .config == "round_robin" then
        check((.failed_by_error.overloaded // 0) > 0 and .attempts == .offered;
              "T1 round_robin: no overloaded failure, or an extra attempt")
      else empty end)
   end)
' "$out")
if [ -n "$problems" ]; then
  printf 'FAIL: %s\n' "$problems" >&2
  cat "$out" >&2
  exit 1
fi
[ "$(jq -r '"\(.scenario) \(.config)"' "$out" | tr '\n' ,)" = "T0 round_robin,T0 full,T0 raw,T1 round_robin,T1 full," ] \
  || { echo "FAIL: runs out of order" >&2; exit 1; }
echo "t1_smoke: OK"
