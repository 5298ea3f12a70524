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

# A free TCP port on loopback.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The newest installed PostgreSQL's bin directory.
pg_bin() {
  ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

# PostgreSQL and PgBouncer refuse to run as root: run them as the `postgres` user then.
run_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
