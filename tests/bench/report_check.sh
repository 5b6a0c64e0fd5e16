#!/usr/bin/env bash
# ctest bench_report: tests/bench/report.sh on a recorded run (data/sample_results.jsonl: S5, H1
# and H2 lines of a real `make bench`, then the R1 lines of a real R1 run) writes both charts and
# a report whose tables hold exactly the recorded values; a run without S5 (or R1) says so; a
# wrong call exits 2. On a recorded run with Netty (data/sample_netty_results.jsonl:
# wheelbeat_bench, wheelbeat_netty_bench and the ratio lines of one run), netty_compare.sh
# reproduces the recorded ratio lines exactly, reads S7's worker_cpu_ns_per_timeout from
# wheelbeat's line when it is there, and the report holds the wheelbeat/Netty table; a run
# without Netty says so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$here/report.sh" "$here/data/sample_results.jsonl" "$out/full" 2>/dev/null
for svg in s5_lateness.svg heartbeat_cpu.svg; do
  grep -q '<svg' "$out/full/$svg" || fail "$svg is not an SVG"
done
md="$out/full/report.md"
grep -qxF '| wheelbeat | 0.07935 | 0.6379 | 1.175 | 1.848 | 3.262 |' "$md" || fail "S5 wheelbeat row"
grep -qxF '| heap | 0.000341 | 0.05135 | 0.8419 | 2.857 | 3.313 |' "$md" || fail "S5 heap row"
grep -qxF '| H1 | 29.872 | 28.755 | 1.04 |' "$md" || fail "H1 row"
grep -qxF '| H2 | 31.392 | 24.002 | 1.31 |' "$md" || fail "H2 row"
[ "$(grep -c '^!\[' "$md")" -eq 2 ] || fail "two charts linked"
grep -qxF '| 64 × 16 | 1 | wheelbeat | 387250.3 | 0.615 | 0.855 | 2261 | 7929.9 | 12189.7 | 1.591 | 1.09 |' \
  "$md" || fail "R1 wheelbeat row"
grep -qxF '| 1000 × 1 | 1 | raw-epoll | 31520.3 | 6.798 | 7.109 | 31195.1 | 58196 | 68157.4 | - | - |' \
  "$md" || fail "R1 floor row"

grep -v '"S5"' "$here/data/sample_results.jsonl" > "$out/no_s5.jsonl"
"$here/report.sh" "$out/no_s5.jsonl" "$out/partial" 2>/dev/null
grep -qF 'S5 is not in these results: no lateness chart.' "$out/partial/report.md" || fail "no S5"
grep -v '"R1"' "$here/data/sample_results.jsonl" > "$out/no_r1.jsonl"
"$here/report.sh" "$out/no_r1.jsonl" "$out/no_r1" 2>/dev/null
grep -qF 'R1 is not in these results: no request / response table.' "$out/no_r1/report.md" ||
  fail "no R1"
[ ! -e "$out/partial/s5_lateness.svg" ] || fail "an S5 chart without S5"

grep -qF "Netty's HashedWheelTimer is not in these results: no comparison." "$md" || fail "no Netty"

netty="$here/data/sample_netty_results.jsonl"
grep -v '"compare":"netty"' "$netty" > "$out/measured.jsonl"
"$here/netty_compare.sh" "$out/measured.jsonl" > "$out/ratios.jsonl"
grep -F '"compare":"netty"' "$netty" | cmp -s - "$out/ratios.jsonl" || fail "recorded ratios differ"
# A wheelbeat S7 line with worker_cpu_ns_per_timeout: that figure, not 1e9 / fired_per_s.
jq -c 'if .scenario == "S7" and .impl == "wheelbeat" then . + {worker_cpu_ns_per_timeout: 82.4}
       else . end' "$out/measured.jsonl" > "$out/with_worker.jsonl"
"$here/netty_compare.sh" "$out/with_worker.jsonl" | grep '"S7"' \
  | jq -e '.wheelbeat_worker_cpu_ns_per_timeout == 82.4 and .netty_worker_cpu_ns_per_timeout == 164.8
           and .ratio == 0.5 and .met == true and .target == 0.6' > /dev/null || fail "S7 worker field"
"$here/report.sh" "$netty" "$out/netty" 2>/dev/null
grep -qxF '| S1 | ns_per_op | 134.9 | 61.77 | 2.184 | 0.6 | no |' "$out/netty/report.md" || fail "S1 vs Netty"
grep -qxF '| S6 | cpu_pct | 0.00028 | 31.3 | 8.946e-06 | - | - |' "$out/netty/report.md" || fail "S6 vs Netty"
grep -qxF '| S7 | worker_cpu_ns_per_timeout | 98.79 | 164.8 | 0.5994 | 0.6 | yes |' \
  "$out/netty/report.md" || fail "S7 vs Netty"
grep -q '^| netty | 0.01232 | 1.142 | 6.931 | 9.293 | 9.918 |$' "$out/netty/report.md" || fail "S5 netty row"

# perf_tables.sh: docs/performance.md's tables from recorded runs, written between their markers
# of a copy of the page (the rest of the page unchanged); a page without a marker exits 2.
page="$out/performance.md"
cp "$here/../../docs/performance.md" "$page"
"$here/perf_tables.sh" "$netty" "$page" 2>/dev/null
grep -qxF '| S1 | ns_per_op | 134.9 | 61.77 | 2.184 | 0.6 | no |' "$page" || fail "perf: S1 row"
grep -qxF 'H1 is not in these results.' "$page" || fail "perf: no H1"
"$here/perf_tables.sh" "$here/data/sample_results.jsonl" "$page" 2>/dev/null
grep -qxF '| wheelbeat | 29.872 | 1.039 | 4.26 / 4.65 | 200 | 0 | 4382.7 / 5652.5 |' "$page" || fail "perf: H1 row"
grep -qxF '| 64 × 16 | 1 | wheelbeat | raw | 387250.3 | 0.615 | 1.591 | 1.09 | - | - |' "$page" || fail "perf: R1 row"
grep -qxF 'The wheel against Netty is not in these results.' "$page" || fail "perf: no Netty"
[ "$(grep -c '^| S1 | ns_per_op |' "$page")" -eq 0 ] || fail "perf: old rows left"
# (a generated table's own prose, e.g. the floor's sentence, and blank lines do not count)
diff <(grep -v '^|' "$page" | grep -v -e 'not in these results' -e '^The floor (T0' -e '^$') \
     <(grep -v '^|' "$here/../../docs/performance.md" |
       grep -v -e 'not in these results' -e '^The floor (T0' -e '^$') > /dev/null \
  || fail "perf: text outside the markers changed"
# The cluster scenarios: every implementation's line (the floor's too) and the checks.
"$here/perf_tables.sh" "$here/data/cluster_and_r1.jsonl" "$page" 2>/dev/null
grep -qxF '| T1 | wheelbeat full | 0 | 124 | 338 | 2720 | 0.33 % | 53.3 (21.1) |' "$page" || fail "perf: T1 row"
grep -qxF '| T0 | floor (raw sockets) raw | 0 | 114 | 294 | 1869 | 0 % | 43.3 (27.8) |' "$page" \
  || fail "perf: floor row"
grep -qxF '| T1 | p99_us | 338.2 | wheelbeat T0 full | 281 | 1.204 | 2 | yes |' "$page" || fail "perf: T check"
grep -q '^The floor (T0.*out of reach on this machine\.$' "$page" || fail "perf: the floor's sentence"
grep -v 'bench:D1 -->' "$page" > "$out/no_marker.md"
set +e
"$here/perf_tables.sh" "$netty" "$out/no_marker.md" 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "perf: a missing marker exits $rc, expected 2"

set +e
"$here/report.sh" only-one-argument 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "usage error exits $rc, expected 2"
echo "bench_report: OK"
