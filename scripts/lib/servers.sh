# Shared by scripts/test.sh and scripts/bench.sh (sourced, not run): installing and running the
# throwaway servers on loopback. The sourcing script defines `step` (how it prints a step).

# Runs a command as root: directly, through sudo, or not at all (saying why).
as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "error: installing $* needs root" >&2; return 1
  fi
}

# Installs Debian packages.
apt_install() {
  step "installing $* (Debian packages)"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Whether something listens on a loopback TCP port (bash's /dev/tcp: no other tool needed).
listening() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A free TCP port on loopback: a random one in 20000-59999 that nothing listens on.
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
    if ! listening "$port"; then echo "$port"; return 0; fi
  done
  echo "error: no free loopback port found" >&2
  return 1
}

# Waits up to 5 s for something to listen on a loopback port.
wait_listening() {
  for _ in $(seq 1 50); do
    listening "$1" && return 0
    sleep 0.1
  done
  return 1
}

# The newest installed PostgreSQL's bin directory.
pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# PostgreSQL and PgBouncer refuse to run as root: run them as the `postgres` user then.
run_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
