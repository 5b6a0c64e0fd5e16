#!/usr/bin/env bash
# Turns the JSON lines of one `make bench` run into a Markdown report with SVG charts:
#   tests/bench/report.sh RESULTS.jsonl OUT_DIR
# writes OUT_DIR/report.md, OUT_DIR/s5_lateness.svg (S5: lateness percentiles, wheelbeat, the
# heap baseline and Netty when measured, log scale) and OUT_DIR/heartbeat_cpu.svg (H1 / H2: CPU
# per heartbeat, wheelbeat against the raw-epoll floor measured in the same run), and a table of
# R1 (request / response: throughput, CPU per request and latency, wheelbeat against the raw-epoll
# floor of the same case). A chart or table whose scenario is missing from the results is left
# out (and the report says so). The wheelbeat/Netty ratio lines (tests/bench/netty_compare.sh)
# become a table of their own. Needs jq and gnuplot (Debian: jq,
# gnuplot-nox). Exit 2 on a usage error, 1 if a tool is missing or fails.
set -euo pipefail

usage() { echo "usage: $0 RESULTS.jsonl OUT_DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
results=$1
out=$2
[ -r "$results" ] || { echo "$0: cannot read $results" >&2; exit 2; }
for tool in jq gnuplot; do
  command -v "$tool" >/dev/null || { echo "$0: $tool not found (make deps installs it)" >&2; exit 1; }
done
mkdir -p "$out"

# Lines of one scenario with an impl, as TSV of the requested fields (in order).
rows() {  # rows SCENARIO FIELD...
  local scenario=$1; shift
  local fields
  fields=$(printf '.%s,' "$@"); fields=${fields%,}
  jq -r --arg s "$scenario" "select(.scenario == \$s and .impl != null) | [.impl, $fields] | @tsv" \
    "$results"
}

s5=$(rows S5 min_ms p50_ms p99_ms p999_ms max_ms)
# wheelbeat against Netty, same run: scenario, metric, both figures, ratio, target, met.
netty=$(jq -r 'select(.compare == "netty")
  | [.scenario, .metric, .["wheelbeat_" + .metric], .["netty_" + .metric], (.ratio // "-"),
     (.target // "-"), (if .met == null then "-" elif .met then "yes" else "no" end)] | @tsv' \
  "$results")
r1=$(rows R1 conns depth loops requests_per_s server_cpu_us_per_request client_cpu_us_per_request \
  p50_us p99_us p999_us server_cpu_per_request_vs_raw p99_vs_raw)
hb=$( (rows H1 cpu_us_per_heartbeat | sed 's/^/H1\t/'; rows H2 cpu_us_per_heartbeat | sed 's/^/H2\t/') )

charts=()
if [ -n "$s5" ]; then
  # Transposed: one row per percentile, one column per impl (in the results' order).
  printf '%s\n' "$s5" | awk -F'\t' '{name[NR] = $1; for (i = 2; i <= 6; ++i) v[NR, i] = $i; n = NR}
    END {split("min p50 p99 p99.9 max", label, " ");
         for (i = 2; i <= 6; ++i) {line = label[i - 1]; for (r = 1; r <= n; ++r) line = line "\t" v[r, i];
                                   print line}}' > "$out/s5.tsv"
  impls=$(printf '%s\n' "$s5" | cut -f1)
  plot="" col=2
  for impl in $impls; do
    plot+="${plot:+, }\"$out/s5.tsv\" using $col:xtic(1) title \"$impl\""
    col=$((col + 1))
  done
  gnuplot <<EOF
set terminal svg size 720,400 dynamic font "sans,12"
set output "$out/s5_lateness.svg"
set title "S5: timeout lateness, fire time - (schedule time + delay), log scale"
set logscale y
set ylabel "ms"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
plot $plot
EOF
  charts+=("s5_lateness.svg")
fi

if [ -n "$hb" ]; then
  # One row per scenario: H1 / H2, wheelbeat, raw-epoll floor, wheelbeat-loopwheel ("-": absent).
  printf '%s\n' "$hb" | awk -F'\t' '{v[$1, $2] = $3; s[$1] = 1}
    END {for (k in s) {lw = v[k, "wheelbeat-loopwheel"];
                       printf "%s\t%s\t%s\t%s\n", k, v[k, "wheelbeat"], v[k, "raw-epoll"], lw == "" ? "-" : lw}}' \
    | sort > "$out/heartbeat.tsv"
  loopwheel=$(cut -f4 "$out/heartbeat.tsv" | grep -v '^-$' || true)
  lwplot=""
  [ -z "$loopwheel" ] || lwplot=', "" using 4 title "wheelbeat-loopwheel"'
  gnuplot <<EOF
set terminal svg size 720,400 dynamic font "sans,12"
set output "$out/heartbeat_cpu.svg"
set title "CPU per heartbeat, server + client (µs): wheelbeat and the raw-epoll floor, same run"
set ylabel "µs per heartbeat"
set yrange [0:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
set datafile missing "-"
plot "$out/heartbeat.tsv" using 2:xtic(1) title "wheelbeat", "" using 3 title "raw-epoll floor"$lwplot
EOF
  charts+=("heartbeat_cpu.svg")
fi

{
  echo "# make bench report"
  echo
  echo "From \`$results\` ($(wc -l < "$results") JSON lines), $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores."
  echo
  if [ -n "$s5" ]; then
    echo "## S5: lateness"
    echo
    echo "| impl | min ms | p50 ms | p99 ms | p99.9 ms | max ms |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "$s5" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6}'
    echo
    echo "![S5 lateness](s5_lateness.svg)"
    echo
  else
    echo "S5 is not in these results: no lateness chart."
    echo
  fi
  if [ -n "$netty" ]; then
    echo "## Against Netty 4.1.48's HashedWheelTimer, same run"
    echo
    echo "ratio = wheelbeat / Netty (lower is better for every metric); met: ratio <= target."
    echo
    echo "| scenario | metric | wheelbeat | Netty | ratio | target | met |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "$netty" | awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7}'
    echo
  else
    echo "Netty's HashedWheelTimer is not in these results: no comparison."
    echo
  fi
  if [ -n "$hb" ]; then
    echo "## H1 / H2: CPU per heartbeat against the floor"
    echo
    echo "| scenario | wheelbeat µs | raw-epoll floor µs | ratio |"
    echo "|---|---|---|---|"
    awk -F'\t' '{r = ($3 > 0) ? sprintf("%.2f", $2 / $3) : "-";
                 printf "| %s | %s | %s | %s |\n", $1, $2, $3, r}' "$out/heartbeat.tsv"
    echo
    if [ -n "$loopwheel" ]; then
      echo "Each process's wheel advanced by its loop (\`net::LoopWheel\`, no wheel thread):"
      echo
      echo "| scenario | wheelbeat-loopwheel µs | raw-epoll floor µs | ratio |"
      echo "|---|---|---|---|"
      awk -F'\t' '$4 != "-" {r = ($3 > 0) ? sprintf("%.2f", $4 / $3) : "-";
                   printf "| %s | %s | %s | %s |\n", $1, $4, $3, r}' "$out/heartbeat.tsv"
      echo
    fi
    echo "![CPU per heartbeat](heartbeat_cpu.svg)"
  else
    echo "H1 / H2 are not in these results: no heartbeat chart."
  fi
  echo
  if [ -n "$r1" ]; then
    echo "## R1: request / response, 64-byte bodies (floor: raw-epoll, same case, same run)"
    echo
    echo "| conns × depth | loops | impl | requests/s | server µs/req | client µs/req | p50 µs | p99 µs | p99.9 µs | server CPU vs floor | p99 vs floor |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    printf '%s\n' "$r1" | awk -F'\t' '{printf "| %s × %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
      $2, $3, $4, $1, $5, $6, $7, $8, $9, $10, ($11 == "" ? "-" : $11), ($12 == "" ? "-" : $12)}'
  else
    echo "R1 is not in these results: no request / response table."
  fi
} > "$out/report.md"

echo "report: $out/report.md (${#charts[@]} chart(s): ${charts[*]:-none})" >&2
