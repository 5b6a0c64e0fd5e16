#!/usr/bin/env bash
# ctest net_bench_t1_exit: SIGTERM, then SIGINT, to a T1 run while provider 2 is SIGSTOPped (it
# stops at the window's start for 30 s) must leave no provider behind. Each pass runs the bench
# with a marker of its own on every provider's command line, waits for its "provider 2 stopped"
# line (stderr), checks that the 3 providers are there (pgrep -f MARKER: the bench and 3
# providers) and that one is stopped (state T), sends the signal, and then expects exit status
# 130 within 10 s and no process with the marker.
#   t1_exit_check.sh BENCH
set -uo pipefail
bench=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
# A failed pass leaves nothing running: the bench is killed by its id (its providers then get
# SIGKILL from the kernel: PR_SET_PDEATHSIG).
bench_pid=""
trap '[ -n "$bench_pid" ] && kill -KILL "$bench_pid" 2>/dev/null' EXIT

# The state letter of /proc/PID/stat (after the parenthesised name).
state_of() { sed -e 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }

run_pass() {
  local sig=$1
  local marker="t1-exit-$$-$RANDOM-$sig" line found=0 pids stopped=0 rc left
  coproc BENCH {
    exec "$bench" --scenario T1 --config round_robin --providers 3 --rate 100 --duration 60 \
      --warmup 0.2 --stop-start 0 --stop-for 30 --stop-every 40 --marker "$marker" 2>&1 >/dev/null
  }
  local pid=$BENCH_PID out
  bench_pid=$pid
  exec {out}<&"${BENCH[0]}"  # our own copy: bash closes the coproc's when the bench exits
  # Its progress lines until provider 2 is stopped (read -t bounds each wait).
  while IFS= read -r -t 30 line <&"$out"; do
    [[ $line == *"provider 2 stopped"* ]] && { found=1; break; }
  done
  [ $found -eq 1 ] || fail "$sig: no 'provider 2 stopped' line"
  pids=$(pgrep -f -- "$marker")
  [ "$(wc -w <<<"$pids")" -eq 4 ] || fail "$sig: $(wc -w <<<"$pids") processes with the marker (expected 4)"
  for p in $pids; do [ "$(state_of "$p")" = T ] && stopped=$((stopped + 1)); done
  [ $stopped -eq 1 ] || fail "$sig: $stopped stopped processes (expected 1: provider 2)"
  kill -"$sig" "$pid"
  # The rest of its output until it closes (EOF), then its status. A stopped provider that is
  # not continued ignores EOF: the bench would wait its 20 s grace before SIGKILL; 10 s is the
  # bound here.
  local t0=$SECONDS
  while IFS= read -r -t 15 line <&"$out"; do :; done
  [ $((SECONDS - t0)) -lt 10 ] || fail "$sig: the bench took $((SECONDS - t0)) s to exit"
  exec {out}<&-
  wait "$pid"
  rc=$?
  bench_pid=""
  [ $rc -eq 130 ] || fail "$sig: exit status $rc (expected 130)"
  left=$(pgrep -f -- "$marker")
  [ -z "$left" ] || { kill -KILL $left; fail "$sig: left behind: $left"; }
  echo "t1_exit_check: SIG$sig: no provider left"
}

run_pass TERM
run_pass INT
echo "t1_exit_check: OK"
