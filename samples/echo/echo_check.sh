#!/usr/bin/env bash
# ctest sample_echo_tools: echo_server and echo_client talk on a free port, then both stop on
# SIGTERM with exit status 0. Usage: echo_check.sh <echo_server> <echo_client>
set -u
server_bin=$1 client_bin=$2
# Every line, the samples' and the library's: "2026-11-25T14:03:07.412Z INFO  text".
stamp='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z (DEBUG|INFO |WARN |ERROR) '
dir=$(mktemp -d)
trap 'kill -9 $spid $cpid 2>/dev/null; rm -rf "$dir"' EXIT

"$server_bin" --port 0 >"$dir/server.log" 2>&1 & spid=$!
for _ in $(seq 100); do  # the server prints its port once it listens
  port=$(sed -n 's/.*listening on [^ ]*:\([0-9]*\).*/\1/p' "$dir/server.log")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "${port:-}" ] || { echo "server did not start"; cat "$dir/server.log"; exit 1; }

"$client_bin" --host 127.0.0.1 --port "$port" >"$dir/client.log" 2>&1 & cpid=$!
for _ in $(seq 150); do  # up to 15 s (sanitizer builds) for two echoed requests
  [ "$(grep -cE "${stamp}response" "$dir/client.log")" -ge 2 ] && break
  sleep 0.1
done

kill -TERM $cpid; wait $cpid; crc=$?
kill -TERM $spid; wait $spid; src=$?
echo "--- client"; cat "$dir/client.log"; echo "--- server"; cat "$dir/server.log"
responses=$(grep -cE "${stamp}response" "$dir/client.log")
unstamped=$(cat "$dir/client.log" "$dir/server.log" | grep -cvE "$stamp")
echo "responses: $responses, lines without a timestamp and level: $unstamped," \
  "client exit $crc, server exit $src"
[ "$responses" -ge 2 ] && [ "$unstamped" -eq 0 ] && [ $crc -eq 0 ] && [ $src -eq 0 ]
