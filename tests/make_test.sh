#!/usr/bin/env bash
# make test: every configuration built and tested, in the order given; the next tree builds while
# this one's tests run. That build runs at idle CPU priority (SCHED_IDLE, or nice 19 where chrt
# cannot set it): it takes only the CPU no test wants, so the real-time tests see the machine as
# they would alone, and a test process always wins a core at once. Its output goes to
# <dir>/build.log, printed when it fails.
#
#   tests/make_test.sh rel:build asan:build-asan tsan:build-tsan fuzz:build-fuzz
#
# Every configuration is tested even if an earlier one has failing tests; a build that fails stops
# at once. Last line: one summary in ctest's own format, summed over the configurations, so CI
# counts every test that ran. Exit status: 0 when every test passed.
set -uo pipefail

make_cmd=${MAKE:-make}
names=()
dirs=()
for spec in "$@"; do
  names+=("${spec%%:*}")
  dirs+=("${spec#*:}")
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

for ((i = 0; i < count; i++)); do
  next=$((i + 1))
  pid=""
  if [ "$next" -lt "$count" ]; then
    mkdir -p "${dirs[next]}"
    log="${dirs[next]}/build.log"
    echo "== build-${names[next]}: building alongside ${names[i]}'s tests (idle priority; log: $log)"
    b0=$SECONDS
    idle "$make_cmd" --no-print-directory "build-${names[next]}" >"$log" 2>&1 &
    pid=$!
  fi
  t0=$SECONDS
  "$make_cmd" --no-print-directory "ctest-${names[i]}" || status=1
  test_secs[i]=$((SECONDS - t0))
  if [ -n "$pid" ]; then
    if ! wait "$pid"; then
      echo "== build-${names[next]} failed; the end of $log:"
      tail -n 60 "$log"
      exit 1
    fi
    build_secs[next]=$((SECONDS - b0))
    echo "== build-${names[next]}: built in $(mmss "${build_secs[next]}")"
  fi
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
  printf '%-11s %s  (build %s, tests %s)\n' "$d:" "$line" "$(mmss "${build_secs[i]}")" \
    "$(mmss "${test_secs[i]}")"
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
