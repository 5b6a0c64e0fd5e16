#!/usr/bin/env bash
# ctest sample_echo_line_buffered: echo_server's stdout is a pipe (a FIFO here), and its first line
# still arrives while the server runs (not when it exits and its stdio buffer is flushed), already
# in the samples' line format. Usage: echo_pipe_check.sh <echo_server>
set -u
server_bin=$1
dir=$(mktemp -d)
spid=
trap '[ -n "$spid" ] && kill -9 $spid 2>/dev/null; rm -rf "$dir"' EXIT
mkfifo "$dir/out"
"$server_bin" --port 0 >"$dir/out" 2>"$dir/err" & spid=$!
exec 3<"$dir/out"
# Generous for sanitizer builds; a block-buffered stdout would hold the line until exit.
if ! IFS= read -r -t 20 line <&3; then
  echo "no line from echo_server within 20 s"; cat "$dir/err"; exit 1
fi
echo "first line: $line"
kill -0 $spid 2>/dev/null || { echo "echo_server exited before its line was read"; exit 1; }
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z INFO  echo_server: listening on '
grep -qE "$stamp" <<<"$line" || { echo "unexpected line format"; exit 1; }
kill -TERM $spid
cat <&3 >/dev/null  # drain until the server closes its end, so it never blocks on a full pipe
wait $spid; rc=$?
spid=
echo "echo_server exit $rc"
[ $rc -eq 0 ]
