#!/bin/sh
# The house's layering rules, checked on every #include of the source tree (ctest "layering").
#
# Rooms (a path belongs to the longest prefix): core/, tasks/, net/ (net/src, net/include),
# net/registry/, net/cluster/ (calls over a provider set), net/hessian/ (Hessian 2.0 values:
# serialization beside the layers, not above net/), net/dubbo/ (Dubbo 2 RPC: above net/cluster
# and net/hessian), config/ (config/cli too), config/runtime/ (wheelbeat::Runtime, above config),
# samples/, tests/.
# A room's public part is its include/ (<wheelbeat/...>); everything else (src/, cli/, a
# sample's or a test's own files) is private.
#
#   private   a file includes another room's private header ("x.h" that resolves only to another
#             room's src/). Tests are white-box: tests/core, tests/tasks, tests/net,
#             tests/registry, tests/hessian and tests/config may include the private headers of
#             the room they test (tests/registry: net/registry's). One private header is shared
#             on purpose: config/cli/command_line.h (and command_line_cli11.h, CLI11 under it),
#             the command-line conventions of every program (its own target,
#             wheelbeat_command_line), open to samples/ and tests/ programs.
#   upward    a library room includes a public header of a room above it (core <- tasks <- net <-
#             net/registry <- net/cluster <- config <- config/runtime: <wheelbeat/net/...> in
#             tasks/, say).
#   hessian   net/hessian/ includes a wheelbeat header other than its own and core's public ones
#             (it stands on the standard library, fmt and core alone: no net/, no libuv).
#   dubbo     net/dubbo/ includes a wheelbeat header other than core's, tasks', net's, hessian's,
#             registry's, cluster's and its own public ones (config/ is above it); or a room
#             below it (core, tasks, net, net/registry, net/cluster, net/hessian) includes
#             <wheelbeat/dubbo/...>.
#   uv        <uv.h> outside net/ and net/registry/ (and their tests, tests/net and
#             tests/registry): libuv is the transport's, never in a public header's reach.
#   json      <nlohmann/...> outside config/ (and its tests, tests/config, and the benchmark
#             harness's JSON reports, tests/bench).
#
# Usage: layering_check.sh SOURCE_DIR. Prints one line per violation, "file:line: rule: what",
# and exits 1 if there is any; exits 2 if SOURCE_DIR holds no source file (a wrong path must not
# pass as a clean tree).
set -eu

root=${1:?usage: layering_check.sh SOURCE_DIR}
cd "$root"

list=$(mktemp)
trap 'rm -f "$list"' EXIT INT TERM
for room in core tasks net config samples tests; do
  [ -d "$room" ] || continue
  find "$room" -type f \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cc' \) -print
done | LC_ALL=C sort >"$list"

count=$(wc -l <"$list" | tr -d ' ')
if [ "$count" -eq 0 ]; then
  echo "layering: no C++ source under $root (expected core/, tasks/, net/, ...)" >&2
  exit 2
fi

# awk reads the file list first (every path, to resolve quoted includes), then each file.
# shellcheck disable=SC2046  # one argument per path: the tree's paths hold no whitespace
awk -v listfile="$list" '
function roomOf(path) {
  if (path ~ /^config\/runtime\//) return "runtime"
  if (path ~ /^net\/registry\//) return "registry"
  if (path ~ /^net\/cluster\//) return "cluster"
  if (path ~ /^net\/hessian\//) return "hessian"
  if (path ~ /^net\/dubbo\//) return "dubbo"
  if (path ~ /^net\//) return "net"
  if (path ~ /^(core|tasks|config|samples|tests)\//) { split(path, p, "/"); return p[1] }
  return ""
}
# The library room whose private headers a file may include: its own, or for a test the room it
# tests (tests/<room>/...).
function ownerOf(path,   p) {
  if (path !~ /^tests\//) return roomOf(path)
  split(path, p, "/")
  if (p[2] == "core" || p[2] == "tasks" || p[2] == "net" || p[2] == "registry" ||
      p[2] == "cluster" || p[2] == "hessian" || p[2] == "dubbo" || p[2] == "config" ||
      p[2] == "runtime")
    return p[2]
  return "tests"
}
function shown(room) {
  return room == "registry" ? "net/registry" : room == "cluster" ? "net/cluster" : \
         room == "hessian" ? "net/hessian" : room == "dubbo" ? "net/dubbo" : \
         room == "runtime" ? "config/runtime" : room
}
function isPublic(path) {
  return path ~ /^(core|tasks|net|config|config\/runtime)\/include\// ||
         path ~ /^net\/(registry|cluster|hessian|dubbo)\/include\//
}
function rank(room) {
  return room == "core" ? 1 : room == "tasks" ? 2 : room == "net" ? 3 : \
         room == "registry" ? 4 : room == "cluster" ? 5 : room == "config" ? 6 : \
         room == "runtime" ? 7 : 0
}
function dirOf(path) { sub(/\/[^\/]*$/, "", path); return path }
# a/b/../c -> a/c, ./ removed.
function normalize(path,   n, p, out, i, k) {
  n = split(path, p, "/"); k = 0
  for (i = 1; i <= n; i++) {
    if (p[i] == "." || p[i] == "") continue
    if (p[i] == ".." && k > 0) { k--; continue }
    out[++k] = p[i]
  }
  path = ""
  for (i = 1; i <= k; i++) path = path (i > 1 ? "/" : "") out[i]
  return path
}
function report(rule, what) {
  printf "%s:%d: %s: %s\n", FILENAME, FNR, rule, what
  bad++
}
# A quoted include: next to the including file first; else, as a compiler with the private
# directories of the rooms on its path would find it, the files of the tree ending in "/name":
# one of the room of the includer (or of the room a test tests) if there is one.
function checkQuoted(name,   here, own, path, found, other) {
  here = normalize(dirOf(FILENAME) "/" name)
  if (here in exists) { found = here }
  else {
    own = ownerOf(FILENAME)
    for (path in exists) {
      if (length(path) <= length(name) || substr(path, length(path) - length(name)) != "/" name)
        continue
      if (ownerOf(path) == own || roomOf(path) == roomOf(FILENAME)) return
      if (other == "" || path < other) other = path
    }
    found = other
  }
  if (found == "" || isPublic(found)) return
  if (found ~ /^config\/cli\/command_line(_cli11)?\.h$/ && roomOf(FILENAME) ~ /^(samples|tests)$/) return
  if (ownerOf(found) == ownerOf(FILENAME) || roomOf(found) == roomOf(FILENAME)) return
  if (roomOf(FILENAME) == "tests" && ownerOf(FILENAME) == roomOf(found)) return
  report("private", sprintf("\"%s\" is %s, private to %s/ (include another room only through " \
         "its public include/, <wheelbeat/...>)", name, found, shown(roomOf(found))))
}
function checkAngled(name,   room, test, target) {
  room = roomOf(FILENAME); test = ownerOf(FILENAME)
  if (name == "uv.h") {
    if (room == "net" || room == "registry" || test == "net" || test == "registry") return
    report("uv", "<uv.h> outside net/ and net/registry/ (libuv belongs to the transport: " \
           "use <wheelbeat/net/...>)")
    return
  }
  if (name ~ /^nlohmann\//) {
    if (room == "config" || test == "config" || FILENAME ~ /^tests\/bench\//) return
    report("json", sprintf("<%s> outside config/ (JSON belongs to the loader: use " \
           "<wheelbeat/config/config.h>)", name))
    return
  }
  if (room == "hessian" && name ~ /^wheelbeat\// &&
      name !~ /^wheelbeat\/(core\/|hessian\/|version\.h$)/) {
    report("hessian", sprintf("<%s>: net/hessian/ may include only its own and core'"'"'s " \
           "public headers (Hessian stands on the standard library, fmt and core)", name))
    return
  }
  if (room == "dubbo" && name ~ /^wheelbeat\// &&
      name !~ /^wheelbeat\/(core|tasks|net|hessian|registry|cluster|dubbo)\/|^wheelbeat\/version\.h$/) {
    report("dubbo", sprintf("<%s>: net/dubbo/ may include only core, tasks, net, net/hessian, " \
           "net/registry, net/cluster and its own public headers", name))
    return
  }
  if (name ~ /^wheelbeat\/dubbo\// && rank(room) > 0 && rank(room) < 6) {
    report("dubbo", sprintf("<%s>: %s/ is below net/dubbo/ (only net/dubbo/ and config/ " \
           "include it)", name, shown(room)))
    return
  }
  if (name !~ /^wheelbeat\/(core|tasks|net|registry|cluster|config|runtime)\//) return
  split(name, p, "/"); target = p[2]
  if (rank(room) > 0 && rank(target) > rank(room))
    report("upward", sprintf("<%s>: %s/ may not include %s/, a room above it " \
           "(core <- tasks <- net <- net/registry <- net/cluster <- config <- config/runtime)", \
           name, shown(room), \
           shown(target)))
}
FNR == 1 { files++ }
BEGIN {
  while ((getline path < listfile) > 0) exists[path] = 1
  close(listfile)
  bad = 0
}
/^[ \t]*#[ \t]*include[ \t]*"/ {
  s = $0; sub(/^[^"]*"/, "", s); sub(/".*$/, "", s)
  checkQuoted(s)
  next
}
/^[ \t]*#[ \t]*include[ \t]*</ {
  s = $0; sub(/^[^<]*</, "", s); sub(/>.*$/, "", s)
  checkAngled(s)
}
END {
  if (bad > 0) {
    printf "layering: %d violation(s) in %d files (rules: tests/layering/layering_check.sh)\n", \
           bad, files
    exit 1
  }
  printf "layering: %d files, every #include within the rules\n", files
}
' $(cat "$list")
