#!/usr/bin/env bash
# ctest cli_every_program: every program in the build's bin/ folder answers as a wheelbeat program
# does, before doing anything else:
#   --help        exit 0, stdout opens with "usage: NAME"
#   --version     exit 0, stdout exactly "NAME VERSION"
#   --bogus       exit 2, stderr names --bogus, stdout empty
#   --hepl        exit 2, stderr suggests --help (a near miss is named)
# "Before doing anything": each run starts in an empty folder with TMPDIR pointing into it, must
# leave both empty, and must end within 20 s (a program that went on to serve would not).
#
#   every_program.sh BIN_DIR VERSION NAME...
# NAMEs are the programs this build must have; every other executable found in BIN_DIR is checked
# too, so a new program cannot escape the rules. Prints one line per program.
set -u
bin_dir=$1 version=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

for name in "$@"; do
  [ -x "$bin_dir/$name" ] || fail "$name: not in $bin_dir"
done

# Runs NAME with ARGS in a fresh empty folder: status in $rc, output in $work/out and $work/err.
invoke() {
  local name=$1
  shift
  rm -rf "$work/cwd" && mkdir -p "$work/cwd/tmp"
  (cd "$work/cwd" && TMPDIR=$work/cwd/tmp timeout 20 "$bin_dir/$name" "$@" \
    >"$work/out" 2>"$work/err" </dev/null)
  rc=$?
  [ $rc -ne 124 ] || fail "$name $*: still running after 20 s"
  [ -z "$(ls -A "$work/cwd/tmp")" ] && [ "$(ls -A "$work/cwd")" = "tmp" ] ||
    fail "$name $*: left files behind: $(cd "$work/cwd" && find . -mindepth 1 | head -3)"
}

checked=0
for path in "$bin_dir"/*; do
  [ -f "$path" ] && [ -x "$path" ] || continue
  name=$(basename "$path")
  before=$failures
  invoke "$name" --help
  [ $rc -eq 0 ] || fail "$name --help: exit $rc (expected 0)"
  head -1 "$work/out" | grep -q "^usage: $name" || fail "$name --help: no 'usage: $name' first line"
  invoke "$name" --version
  [ $rc -eq 0 ] || fail "$name --version: exit $rc (expected 0)"
  [ "$(cat "$work/out")" = "$name $version" ] ||
    fail "$name --version printed '$(head -c 200 "$work/out")' (expected '$name $version')"
  invoke "$name" --bogus
  [ $rc -eq 2 ] || fail "$name --bogus: exit $rc (expected 2)"
  grep -q -- '--bogus' "$work/err" || fail "$name --bogus: stderr does not name --bogus"
  [ -s "$work/out" ] && fail "$name --bogus: wrote to stdout: $(head -c 200 "$work/out")"
  # The Netty harness (Java) has no near-miss suggestions.
  if [ "$name" != wheelbeat_netty_bench ]; then
    invoke "$name" --hepl
    [ $rc -eq 2 ] || fail "$name --hepl: exit $rc (expected 2)"
    grep -q -- 'did you mean --help?' "$work/err" || fail "$name --hepl: no 'did you mean --help?'"
  fi
  [ $failures -eq $before ] && echo "ok    $name" || echo "FAIL  $name"
  checked=$((checked + 1))
done
echo "$checked programs checked, $failures failure(s)"
[ $checked -ge $# ] && [ $failures -eq 0 ]
