#!/usr/bin/env bash
# bench_grpc_smoke: wheelbeat_grpc_bench at a tiny size, and its clean-up on every way out.
#   grpc_smoke.sh path/to/wheelbeat_grpc_bench
# 1. 3 providers, 200 calls/s, 0.5 s warm-up, 2 s window, T0 and T1 on round_robin and best: four
#    lines, in order, each with every key in order, offered = 400 = ok + failed, failed_by_error
#    summing to failed, attempts >= ok, the ratios consistent; T0 without a failure, T1's
#    round_robin with UNAVAILABLE ones (provider 1 fails 30 % of its calls); exit 0.
# 2. SIGTERM while provider 2 is SIGSTOPped: exit 143, no line, no provider left.
# 3. SIGKILL of the driver while provider 2 is SIGSTOPped: the kernel kills every provider.
# "No provider left": no process with the run's "--parent-pid PID" on its command line.
set -u
bench=$1
fail() { echo "bench_grpc_smoke: FAIL: $*" >&2; exit 1; }
command -v jq >/dev/null || fail "jq not found (make deps installs it)"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

providers_of() { pgrep -f -- "--parent-pid $1( |$)" || true; }

# Waits (at most $3 s) until file $1 has a line matching $2.
await_line() {
  local deadline=$((SECONDS + $3))
  until grep -qs -- "$2" "$1"; do
    [ $SECONDS -lt "$deadline" ] || fail "no '$2' within $3 s in $1: $(cat "$1")"
    sleep 0.1
  done
}

# Waits (at most 5 s) until no provider of driver $1 is left.
await_no_provider() {
  local deadline=$((SECONDS + 5))
  while [ -n "$(providers_of "$1")" ]; do
    [ $SECONDS -lt "$deadline" ] || fail "$2: providers left: $(ps -o pid,stat,args -p "$(providers_of "$1" | paste -sd,)")"
    sleep 0.1
  done
}

# --- 1. a normal run ---------------------------------------------------------------------------
"$bench" --duration 2 --warmup 0.5 --rate 200 --providers 3 --config round_robin,best \
  >"$dir/out" 2>"$dir/err" &
pid=$!
wait $pid 2>/dev/null
rc=$?
[ $rc -eq 0 ] || fail "run 1 exited $rc: $(cat "$dir/err")"
[ -z "$(providers_of $pid)" ] || fail "run 1: providers left after a normal end"
[ "$(wc -l <"$dir/out")" -eq 4 ] || fail "run 1: expected 4 lines, got: $(cat "$dir/out")"
keys='["scenario","impl","config","providers","rate","duration_s","offered","ok","failed","failed_by_error","attempts","extra_attempts_ratio","error_rate","p50_us","p99_us","p999_us","max_us","achieved_rate","client_cpu_us_per_call","cpu_model"]'
rows=("T0 round_robin" "T0 best" "T1 round_robin" "T1 best")
n=0
while IFS= read -r line; do
  read -r scenario config <<<"${rows[$n]}"
  n=$((n + 1))
  echo "$line" | jq -e --argjson keys "$keys" --arg s "$scenario" --arg c "$config" '
    ([keys_unsorted[]] == $keys) and .scenario == $s and .config == $c and .impl == "grpc"
    and .providers == 3 and .rate == 200 and .duration_s == 2 and .offered == 400
    and .ok + .failed == .offered and ([.failed_by_error[]] | add // 0) == .failed
    and .attempts >= .ok
    and ((.extra_attempts_ratio - (.attempts / .offered - 1)) | fabs) < 1e-5
    and ((.error_rate - .failed / .offered) | fabs) < 1e-5
    and .p50_us > 0 and .p50_us <= .p99_us and .p99_us <= .p999_us and .p999_us <= .max_us
    and .client_cpu_us_per_call > 0 and (.cpu_model | length) > 0
    and (if $s == "T0" then .failed == 0
         elif $c == "round_robin" then .failed_by_error.UNAVAILABLE > 0 else true end)' \
    >/dev/null || fail "line $n ($scenario $config) inconsistent: $line"
done <"$dir/out"

# --- 2. SIGTERM while provider 2 is stopped ----------------------------------------------------
"$bench" --scenario T1 --config round_robin --providers 3 --rate 100 --duration 60 --warmup 0 \
  --stop-start 0.3 --stop-for 20 --stop-every 30 >"$dir/out2" 2>"$dir/err2" &
pid=$!
await_line "$dir/err2" "provider 2 stopped" 20
[ "$(providers_of $pid | wc -l)" -eq 3 ] || fail "run 2: expected 3 providers: $(providers_of $pid)"
# The SIGSTOP was sent before the line was printed; every thread of the provider stops soon after.
deadline=$((SECONDS + 5))
until [ "$(ps -o stat= -p "$(providers_of $pid | paste -sd,)" | grep -c '^T')" -eq 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "run 2: expected 1 stopped provider: $(ps -o pid,stat,args -p "$(providers_of $pid | paste -sd,)")"
  sleep 0.1
done
kill -TERM $pid
wait $pid 2>/dev/null
rc=$?
[ $rc -eq 143 ] || fail "run 2: SIGTERM: exit $rc (expected 143): $(cat "$dir/err2")"
[ ! -s "$dir/out2" ] || fail "run 2: a line for an interrupted row: $(cat "$dir/out2")"
[ -z "$(providers_of $pid)" ] || fail "run 2: providers left after SIGTERM"

# --- 3. SIGKILL of the driver while provider 2 is stopped --------------------------------------
"$bench" --scenario T1 --config round_robin --providers 3 --rate 100 --duration 60 --warmup 0 \
  --stop-start 0.3 --stop-for 20 --stop-every 30 >"$dir/out3" 2>"$dir/err3" &
pid=$!
await_line "$dir/err3" "provider 2 stopped" 20
[ "$(providers_of $pid | wc -l)" -eq 3 ] || fail "run 3: expected 3 providers: $(providers_of $pid)"
kill -KILL $pid
wait $pid 2>/dev/null
await_no_provider $pid "run 3 (driver SIGKILLed)"

echo "bench_grpc_smoke: OK (4 lines checked; SIGTERM and SIGKILL left no provider)"
