#!/usr/bin/env bash
# make test: every configuration built and tested, in the order given; the next tree builds while
# this one's tests run. That build runs at idle CPU priority (SCHED_IDLE, or nice 19 where chrt
# cannot set it): it takes only the CPU no test wants, so the real-time tests see the machine as
# they would alone, and a test process always wins a core at once. Its output goes to
# <dir>/build.log, printed when it fails. A configuration marked ":alongside" also runs its tests
# there, at idle priority (the fuzz stage: its targets run for a fixed time and measure nothing),
# their output in <dir>/ctest.log.
#
#   tests/make_test.sh rel:build asan:build-asan tsan:build-tsan fuzz:build-fuzz:alongside
#
# Every configuration is tested even if an earlier one has failing tests; a build that fails stops
# at once. Last line: one summary in ctest's own format, summed over the configurations, so CI
# counts every test that ran. Exit status: 0 when every test passed.
set -uo pipefail

make_cmd=${MAKE:-make}
names=()
dirs=()
alongside=()
for spec in "$@"; do
  IFS=: read -r name dir mode <<<"$spec"
  names+=("$name")
  dirs+=("$dir")
  alongside+=("$([ "${mode:-}" = alongside ] && echo 1 || echo 0)")
done
count=${#names[@]}
if [ "$count" -eq 0 ]; then
  echo "usage: $0 <config>:<build dir>..." >&2
  exit 2
fi

idle() {
  if chrt --idle 0 true 2>/dev/null; then
    chrt --idle 0 "$@"
  else
    nice -n 19 "$@"
  fi
}

mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

build_secs=()
test_secs=()
status=0
t0=$SECONDS
"$make_cmd" --no-print-directory "build-${names[0]}" || exit 1
build_secs[0]=$((SECONDS - t0))

# The next configuration's build (and, marked alongside, its tests) in the background.
start_next() {
  local n=$1 log="${dirs[$1]}/build.log"
  mkdir -p "${dirs[n]}"
  if [ "${alongside[n]}" = 1 ]; then
    echo "== ${names[n]}: building and testing alongside ${names[n - 1]}'s tests (idle priority)"
    idle bash -c "'$make_cmd' --no-print-directory build-${names[n]} >'$log' 2>&1 || exit 90
                  '$make_cmd' --no-print-directory ctest-${names[n]} >/dev/null 2>&1 || exit 91" &
  else
    echo "== build-${names[n]}: building alongside ${names[n - 1]}'s tests (idle priority; log: $log)"
    idle "$make_cmd" --no-print-directory "build-${names[n]}" >"$log" 2>&1 &
  fi
  pid=$!
}

i=0
while [ "$i" -lt "$count" ]; do
  next=$((i + 1))
  pid=""
  b0=$SECONDS
  [ "$next" -lt "$count" ] && start_next "$next"
  t0=$SECONDS
  "$make_cmd" --no-print-directory "ctest-${names[i]}" || status=1
  test_secs[i]=$((SECONDS - t0))
  if [ -n "$pid" ]; then
    rc=0
    wait "$pid" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 91 ]; then
      echo "== build-${names[next]} failed; the end of ${dirs[next]}/build.log:"
      tail -n 60 "${dirs[next]}/build.log"
      exit 1
    fi
    build_secs[next]=$((SECONDS - b0))
    if [ "${alongside[next]}" = 1 ]; then
      test_secs[next]=0  # counted in its build's time: they ran one after the other
      [ "$rc" -eq 0 ] || { status=1; cat "${dirs[next]}/ctest.log"; }
      echo "== ${names[next]}: built and tested in $(mmss "${build_secs[next]}")"
      i=$((next + 1))
      continue
    fi
    echo "== build-${names[next]}: built in $(mmss "${build_secs[next]}")"
  fi
  i=$next
done

echo
echo "== make test: all configurations (a tree's build ran alongside the previous tree's tests) =="
total=0
failed=0
for ((i = 0; i < count; i++)); do
  d=${dirs[i]}
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests failed out of [0-9]+$' "$d/ctest.log" |
    tail -n 1)
  if [ -z "$line" ]; then
    echo "$d: no ctest summary (see above)"
    status=1
    continue
  fi
  if [ "${alongside[i]}" = 1 ]; then
    printf '%-11s %s  (build and tests %s)\n' "$d:" "$line" "$(mmss "${build_secs[i]}")"
  else
    printf '%-11s %s  (build %s, tests %s)\n' "$d:" "$line" "$(mmss "${build_secs[i]}")" \
      "$(mmss "${test_secs[i]}")"
  fi
  n=${line##* out of }
  f=${line#*passed, }
  f=${f%% tests failed*}
  total=$((total + n))
  failed=$((failed + f))
done
echo "wall time: $(mmss "$SECONDS")"
[ "$failed" -eq 0 ] || status=1
awk -v t="$total" -v f="$failed" 'BEGIN { p = t ? int((t - f) * 100 / t + 0.5) : 0;
  if (f > 0 && p > 99) p = 99; printf "\n%d%% tests passed, %d tests failed out of %d\n", p, f, t }'
exit "$status"
