#!/usr/bin/env bash
# ctest cli_<program>: one program's command line, as a user meets it.
#
#   cli_check.sh BIN NAME VERSION BAD_STATUS [--flags "F..."] [--enum "FLAG VALUE ALLOWED..."]
#                [--run "ARGS"] [--expect REGEX] [--status N] [--until-signal] [--keep-logs]
#                [--no-defaults]
#
#   --help and -h        exit 0, stdout opens with "usage: NAME", names every flag of --flags,
#                        shows "(default:" (unless --no-defaults: a program whose every option
#                        is a switch) and an "Examples:" block with a NAME command line
#   --version            exit 0, stdout exactly "NAME VERSION"
#   --no-such-flag       exit BAD_STATUS, stderr names the flag, stdout empty
#   --enum               FLAG=VALUE (the = form), then FLAG VALUE: exit BAD_STATUS, stderr names
#                        FLAG, VALUE and every allowed value
#   --run                ARGS (with --flag=value forms) are accepted: the output matches --expect
#                        (stdout + stderr) and the exit status is --status (default 0); with
#                        --until-signal the program runs until it printed --expect, then gets
#                        SIGTERM. TMPDIR is a fresh folder, which must be empty afterwards, except
#                        with --keep-logs: then the program named the folder it kept there.
set -u
bin=$1 name=$2 version=$3 bad=$4
shift 4
flags="" enum="" run="" expect="" status=0 until_signal=0 keep=0 defaults=1
while [ $# -gt 0 ]; do
  case $1 in
    --flags) flags=$2; shift 2 ;;
    --enum) enum=$2; shift 2 ;;
    --run) run=$2; shift 2 ;;
    --expect) expect=$2; shift 2 ;;
    --status) status=$2; shift 2 ;;
    --until-signal) until_signal=1; shift ;;
    --keep-logs) keep=1; shift ;;
    --no-defaults) defaults=0; shift ;;
    *) echo "cli_check.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Runs the program with "$@": status in $rc, stdout in $work/out, stderr in $work/err.
invoke() {
  "$bin" "$@" >"$work/out" 2>"$work/err"
  rc=$?
}

for help in --help -h; do
  invoke "$help"
  [ $rc -eq 0 ] || fail "$help: exit $rc (expected 0)"
  head -1 "$work/out" | grep -q "^usage: $name" || fail "$help: no 'usage: $name' first line"
  [ $defaults -eq 0 ] || grep -q '(default: ' "$work/out" || fail "$help: no default shown"
  grep -q '^Examples:' "$work/out" || fail "$help: no Examples: block"
  sed -n '/^Examples:/,$p' "$work/out" | grep -q "^  $name " || fail "$help: no example line"
  for f in $flags --version; do
    grep -Eq -- "$f([^a-z-]|$)" "$work/out" || fail "$help: flag $f not shown"
  done
done
echo "--- $name --help"
cat "$work/out"

invoke --version
[ $rc -eq 0 ] || fail "--version: exit $rc (expected 0)"
[ "$(cat "$work/out")" = "$name $version" ] || fail "--version printed '$(cat "$work/out")'"

invoke --no-such-flag
[ $rc -eq "$bad" ] || fail "--no-such-flag: exit $rc (expected $bad)"
grep -q -- '--no-such-flag' "$work/err" || fail "--no-such-flag: not named on stderr"
[ -s "$work/out" ] && fail "--no-such-flag: stdout not empty"
echo "--- $name --no-such-flag"
cat "$work/err"

if [ -n "$enum" ]; then
  read -r flag value allowed <<<"$enum"
  for form in "$flag=$value" "$flag $value"; do
    # shellcheck disable=SC2086  # "FLAG VALUE" is two words
    invoke $form
    [ $rc -eq "$bad" ] || fail "$form: exit $rc (expected $bad)"
    for word in "$flag" "$value" $allowed; do
      grep -q -- "$word" "$work/err" || fail "$form: stderr does not name $word"
    done
  done
  echo "--- $name $flag $value"
  cat "$work/err"
fi

if [ -n "$run" ]; then
  mkdir "$work/tmp"
  if [ $until_signal -eq 1 ]; then
    # shellcheck disable=SC2086  # ARGS are words
    TMPDIR=$work/tmp "$bin" $run >"$work/out" 2>&1 &
    pid=$!
    for _ in $(seq 300); do  # up to 30 s (sanitizer builds)
      grep -Eq -- "$expect" "$work/out" && break
      sleep 0.1
    done
    kill -TERM $pid
    wait $pid
    rc=$?
    pid=""
  else
    # shellcheck disable=SC2086
    TMPDIR=$work/tmp "$bin" $run >"$work/out" 2>&1
    rc=$?
  fi
  echo "--- $name $run"
  tail -20 "$work/out"
  [ $rc -eq "$status" ] || fail "$run: exit $rc (expected $status)"
  grep -Eq -- "$expect" "$work/out" || fail "$run: output does not match $expect"
  left=$(ls -A "$work/tmp")
  if [ $keep -eq 1 ]; then
    grep -q "^logs kept in $work/tmp/$left (--keep-logs)" "$work/out" ||
      fail "--keep-logs: the kept folder ($left) is not named"
    ls "$work/tmp/$left"/*.log >/dev/null 2>&1 || fail "--keep-logs: no log in $left"
  else
    [ -z "$left" ] || fail "$run: left behind in TMPDIR: $left"
  fi
fi

echo "$name: $failures failure(s)"
[ $failures -eq 0 ]
