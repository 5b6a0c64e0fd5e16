#!/bin/sh
# The layering check can fail (ctest "layering_self_check"): on a small tree built here with one
# include of each kind, layering_check.sh must name exactly the broken rules (file, line, rule),
# exit 1, and pass the allowed includes (tests of a room reaching its private headers, <uv.h> in
# net/ and its tests, nlohmann in config/); the same tree without the violations exits 0.
set -eu

check=$(dirname "$0")/layering_check.sh
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT INT TERM

put() {  # put FILE LINE...: writes the lines into FILE under the tree
  file=$tree/$1
  shift
  mkdir -p "$(dirname "$file")"
  printf '%s\n' "$@" >"$file"
}

# Allowed everywhere they appear.
put core/include/wheelbeat/core/clock.h '#pragma once'
put core/src/clock.cpp '#include <wheelbeat/core/clock.h>' '#include "clock_impl.h"'
put core/src/clock_impl.h '#pragma once'
put tasks/src/retry.cpp '#include <wheelbeat/core/clock.h>'
put net/include/wheelbeat/net/loop_handle.h '#pragma once'
put net/src/loop_internal.h '#include <uv.h>'
put net/registry/src/engine.cpp '#include <uv.h>' '#include <wheelbeat/net/loop_handle.h>'
put config/src/reader.h '#include <nlohmann/json.hpp>'
put config/cli/command_line.h '#pragma once'
put config/runtime/src/make.cpp '#include <wheelbeat/config/config.h>' '#include "core.h"'
put config/runtime/src/core.h '#pragma once'
put samples/echo.cpp '#include "command_line.h"'
put tests/net/loop_test.cpp '#include <uv.h>' '#include "loop_internal.h"'
put tests/config/json_test.cpp '#include <nlohmann/json.hpp>'

out=$(sh "$check" "$tree") || {
  echo "layering_self_check: the clean tree failed:" >&2
  echo "$out" >&2
  exit 1
}

# One violation of each rule.
put net/registry/src/session.h '#pragma once' '#include "loop_internal.h"'
put tasks/src/runner.cpp '' '' '  #  include <wheelbeat/net/loop_handle.h>'
put samples/poll.cpp '#include <uv.h>'
put core/src/dump.cpp '#include <string>' '#include <nlohmann/json.hpp>'
put tests/soak/soak.cpp '#include "clock_impl.h"'
put config/src/loader.cpp '#include <wheelbeat/runtime/runtime.h>'

expected=$(
  cat <<'EOF'
config/src/loader.cpp:1: upward: <wheelbeat/runtime/runtime.h>: config/ may not include config/runtime/, a room above it (core <- tasks <- net <- net/registry <- net/cluster <- config <- config/runtime)
core/src/dump.cpp:2: json: <nlohmann/json.hpp> outside config/ (JSON belongs to the loader: use <wheelbeat/config/config.h>)
net/registry/src/session.h:2: private: "loop_internal.h" is net/src/loop_internal.h, private to net/ (include another room only through its public include/, <wheelbeat/...>)
samples/poll.cpp:1: uv: <uv.h> outside net/ and net/registry/ (libuv belongs to the transport: use <wheelbeat/net/...>)
tasks/src/runner.cpp:3: upward: <wheelbeat/net/loop_handle.h>: tasks/ may not include net/, a room above it (core <- tasks <- net <- net/registry <- net/cluster <- config <- config/runtime)
tests/soak/soak.cpp:1: private: "clock_impl.h" is core/src/clock_impl.h, private to core/ (include another room only through its public include/, <wheelbeat/...>)
layering: 6 violation(s) in 20 files (rules: tests/layering/layering_check.sh)
EOF
)
status=0
out=$(sh "$check" "$tree") || status=$?
if [ "$status" -ne 1 ] || [ "$out" != "$expected" ]; then
  echo "layering_self_check: expected exit 1 and:" >&2
  echo "$expected" >&2
  echo "got exit $status and:" >&2
  echo "$out" >&2
  exit 1
fi
echo "layering_self_check: 6 violations found as expected, the clean tree passed"
