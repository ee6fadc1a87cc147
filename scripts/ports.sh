# Free loopback ports for private servers (sourced by scripts/servers.sh and scripts/spider.sh).
#
# Ports are taken below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768 to
# 60999 here), from which every outgoing connection on the machine takes its source port: a
# port chosen inside it can be taken by any connection between the choice and the server's
# start. Where that range starts too low to leave room below it, ports come from above it.
# A port is free when nothing listens on it and no socket of the machine uses it.

# The first and last port to choose from.
combkey_port_range() {
  local lo hi
  if ! read -r lo hi 2>/dev/null </proc/sys/net/ipv4/ip_local_port_range; then lo=32768; hi=60999; fi
  if [ "$lo" -gt 12000 ]; then echo "10000 $((lo - 1))"; else echo "$((hi + 1)) 65535"; fi
}

# A free loopback port, and `count` consecutive free ones from it (Galera's group ports),
# none of `taken` (a file of ports already handed out, one a word), if given.
_combkey_free_port() {
  local count=${1:-1} taken=${2:-} first last base p ok
  # For tests/servers-cleanup.sh only: hand out this port once without looking, as if it had
  # been free when chosen and taken since.
  if [ -n "${COMBKEY_TEST_TAKEN_PORT:-}" ] && [ -n "${COMBKEY_TEST_DIR:-}" ] && [ ! -e "$COMBKEY_TEST_DIR/.taken" ]; then
    : >"$COMBKEY_TEST_DIR/.taken"
    echo "$COMBKEY_TEST_TAKEN_PORT"
    return 0
  fi
  read -r first last < <(combkey_port_range)
  for _ in $(seq 1 200); do
    base=$(( first + (RANDOM * 32768 + RANDOM) % (last - first - count + 1) ))
    ok=1
    for ((p = base; p < base + count; p++)); do
      if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ok=0; break; fi
      if grep -q ":$(printf '%04X' "$p") " /proc/net/tcp /proc/net/tcp6 2>/dev/null; then ok=0; break; fi
      if [ -n "$taken" ] && grep -qw "$p" "$taken" 2>/dev/null; then ok=0; break; fi
    done
    if [ "$ok" = 1 ]; then echo "$base"; return 0; fi
  done
  echo "servers.sh: no free port found in $first..$last" >&2
  return 1
}

# Whether a server's log says its port was taken (then the caller starts it on another one).
_combkey_port_taken() { # log files...
  grep -qiE "address already in use|could not bind|bind on tcp/ip port" "$@" 2>/dev/null
}
