# What the echo check scripts share; sourced (`. check_common.sh`), not run.

# Polls `cmd` every 100 ms for up to $1 seconds.
within() {
  local limit=$1; shift
  local end=$((SECONDS + limit))
  until "$@"; do
    [ $SECONDS -ge $end ] && return 1
    sleep 0.1
  done
}

free_port() { # a loopback port nobody listens on, below the ephemeral range
  local p
  for _ in $(seq 50); do
    p=$((20000 + RANDOM % 12768))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  return 1
}
