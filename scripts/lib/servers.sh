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

# A free TCP port on loopback: a random one in 20000-31999 that nothing listens on. It stays
# below Linux's ephemeral range (32768-60999), where a client connection's local port can make
# the server's bind fail with "Address already in use" although nothing listens there.
free_port() {
  local port
  for _ in $(seq 1 100); do
    port=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))
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

# PostgreSQL and PgBouncer refuse to run as root: as root, these words run them as the
# `postgres` user (no words otherwise).
as_postgres=()
if [ "$(id -u)" = 0 ]; then as_postgres=(runuser -u postgres --); fi

# Runs a command as the `postgres` user when root.
run_pg() {
  "${as_postgres[@]}" "$@"
}

# Runs a command that starts a server: through the function named by $servers_record when the
# sourcing script sets it (bench.sh's `run`, which records the command for BENCHMARKS.md).
server_command() {
  if [ -n "${servers_record:-}" ]; then "$servers_record" "$@"; else "$@"; fi
}

# start_postgres DIR PORT [WORD...]: a throwaway PostgreSQL on 127.0.0.1:PORT, its data in
# DIR/pg, its socket in DIR/pg-socket and its log in DIR/pg.log; trust authentication for the
# `postgres` user, fsync off; $PG_OPTIONS, when set, adds server options (`-c ssl=on …`). The
# WORDs go before pg_ctl (bench.sh's taskset pinning).
start_postgres() {
  local dir="$1" port="$2"
  shift 2
  mkdir -p "$dir/pg" "$dir/pg-socket"
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir" "$dir/pg" "$dir/pg-socket"; fi
  server_command "${as_postgres[@]}" "$(pg_bin)/initdb" -D "$dir/pg" -A trust -U postgres >/dev/null || return 1
  server_command "$@" "${as_postgres[@]}" "$(pg_bin)/pg_ctl" -D "$dir/pg" -l "$dir/pg.log" -w \
    -o "-p $port -c listen_addresses=127.0.0.1 -k $dir/pg-socket -c fsync=off ${PG_OPTIONS:-}" start >/dev/null ||
    { echo "error: PostgreSQL did not start" >&2; cat "$dir/pg.log" >&2; return 1; }
}

# start_redis DIR PORT [WORD...]: a throwaway Redis on 127.0.0.1:PORT without persistence, its
# working directory DIR/redis, its pid file DIR/redis.pid and its log DIR/redis.log; waits until
# it listens; $REDIS_OPTIONS, when set, adds arguments (a TLS port, say). The WORDs go before
# redis-server (bench.sh's taskset pinning).
start_redis() {
  local dir="$1" port="$2"
  shift 2
  mkdir -p "$dir/redis"
  server_command "$@" redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir/redis" \
    --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" ${REDIS_OPTIONS:-} || return 1
  wait_listening "$port" || { echo "error: Redis did not start" >&2; cat "$dir/redis.log" >&2; return 1; }
}

# The DynamoDB-compatible test server: moto's server (an emulator of AWS's APIs, from PyPI),
# pinned, in a virtual environment cached across runs, run one request at a time by
# scripts/lib/moto_serial.py (moto's threaded server does not make a conditional write atomic).
# Prints the path of that program (it takes `-H HOST -p PORT`, as `moto_server` does).
MOTO_VERSION=5.2.6
install_moto() {
  local venv="${SMS_SDK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sms-sdk}/moto-$MOTO_VERSION"
  if [ ! -x "$venv/bin/moto_server" ]; then
    step "installing moto[server]==$MOTO_VERSION from PyPI (the DynamoDB emulator) into $venv" >&2
    command -v python3 >/dev/null || apt_install python3 >&2
    python3 -m venv "$venv" >&2 || { apt_install python3-venv >&2 && python3 -m venv "$venv" >&2; }
    "$venv/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2 ||
      { rm -rf "$venv"; echo "error: moto did not install" >&2; return 1; }
  fi
  local here
  here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
  { echo "#!$venv/bin/python"; cat "$here/moto_serial.py"; } >"$venv/bin/moto-serial"
  chmod +x "$venv/bin/moto-serial"
  echo "$venv/bin/moto-serial"
}

# start_moto DIR PORT PROGRAM [WORD...]: the moto server PROGRAM on 127.0.0.1:PORT, its pid file
# DIR/moto.pid and its log DIR/moto.log; waits until it listens. The WORDs go before it.
start_moto() {
  local dir="$1" port="$2" program="$3"
  shift 3
  mkdir -p "$dir"
  server_command "$@" "$program" -H 127.0.0.1 -p "$port" >"$dir/moto.log" 2>&1 &
  echo $! >"$dir/moto.pid"
  for _ in $(seq 1 4); do wait_listening "$port" && return 0; done
  echo "error: moto did not start" >&2
  cat "$dir/moto.log" >&2
  return 1
}

# Stops what start_postgres, start_redis and start_moto started in DIR (at once: the data is
# thrown away).
stop_servers() {
  # The pid is of the shell that runs it (through server_command): its children too.
  if [ -f "$1/moto.pid" ]; then
    pkill -P "$(cat "$1/moto.pid")" 2>/dev/null || true
    kill "$(cat "$1/moto.pid")" 2>/dev/null || true
  fi
  if [ -f "$1/redis.pid" ]; then kill "$(cat "$1/redis.pid")" 2>/dev/null || true; fi
  if [ -d "$1/pg" ]; then run_pg "$(pg_bin)/pg_ctl" -D "$1/pg" -m immediate stop >/dev/null 2>&1 || true; fi
}
