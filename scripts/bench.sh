#!/usr/bin/env bash
# Measures sms-sdk against what the machine allows and rewrites BENCHMARKS.md.
# Usage: scripts/bench.sh [--quick] [serve | production]
#
# One run of this script measures everything against the same local responder, in release builds:
#   - criterion micro benchmarks (crates/sms-sdk/benches/micro.rs): webhook verification per
#     provider next to the bare HMAC / Ed25519 primitive (and their ratios measured in
#     interleaved rounds, benches/support/paired.rs), and segment estimation;
#   - allocation counts (sms-bench-allocs): per segment estimate, per verification, per send;
#   - the load suite (sms-bench-load suite): raw reqwest vs Client::send (32 in flight and
#     sequential, one tokio thread), with the memory, SQLite, PostgreSQL and Redis stores, each
#     store's reserve + finalize pair through the store API and by a minimal client (and pgbench
#     -M prepared), and peak memory with 10,000 sends in flight;
#   - the serve rows (sms-bench-load serve): the release `sms-sdk serve` pinned to core 0 receiving
#     distinct signed Twilio webhooks, verifying, deduplicating (SQLite store, PostgreSQL store)
#     and forwarding each to the responder, driven from core 1, next to the bare verify rate of
#     the same requests on core 0;
# then writes BENCHMARKS.md (the table, the machine, the commands run, what limits each figure).
#
# The client runs pinned to core 0; the responders, PostgreSQL and Redis to core 1 (taskset). For
# the serve rows, `sms-sdk serve` is the one on core 0 and its load generator runs on core 1.
# PostgreSQL and Redis are throwaway servers on loopback in a temporary directory, started as
# scripts/test.sh starts them (as root, PostgreSQL runs as the `postgres` user); both are
# installed from Debian packages when missing. The SQLite file lives on tmpfs (/dev/shm).
#
# --quick: one run of one second per row and short criterion runs, to try the harness (the
# figures are then too noisy to keep: do not commit that BENCHMARKS.md).
# serve: only the serve rows (about a minute once built); BENCHMARKS.md is left alone, their rows
# are printed (and kept in target/bench-serve.md, the runs in target/bench-serve.json) to be put
# in by hand.
# production: only the production group (about two minutes once built): keyed sends through
# PostgreSQL over TLS (verify-full) beside the same server in plain text, Redis over TLS beside the
# same server in plain text, a 3-master Redis Cluster, DynamoDB on moto's server (an emulator), and
# SQLite on an ordinary disk beside tmpfs
# and the keyed send without a store; printed (and kept in target/bench-production.md) to be put
# in by hand. The full run measures this group too. Certificates are made with openssl.
# SMS_BENCH_RUNS and SMS_BENCH_SECONDS override the runs per row (7) and seconds per run (2).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
export CARGO_INCREMENTAL=0

runs="${SMS_BENCH_RUNS:-7}"
seconds="${SMS_BENCH_SECONDS:-2}"
criterion_args=()
only_serve=""
only_production=""
for arg in "$@"; do
  case "$arg" in
    --quick)
      runs=1
      seconds=1
      criterion_args=(--warm-up-time 0.2 --measurement-time 0.5)
      ;;
    serve) only_serve=1 ;;
    production) only_production=1 ;;
    *) echo "usage: scripts/bench.sh [--quick] [serve | production]" >&2; exit 2 ;;
  esac
done

step() { printf '\n==> %s\n' "$*" >&2; }

# as_root, apt_install, free_port, pg_bin, run_pg, start_postgres, start_redis, stop_servers; the
# servers' start commands are recorded for BENCHMARKS.md (through `run`).
. scripts/lib/servers.sh
servers_record=run

work="$(mktemp -d /tmp/sms-bench.XXXXXX)"
chmod 755 "$work"
sqlite_dir="$(mktemp -d /dev/shm/sms-bench.XXXXXX 2>/dev/null || mktemp -d /tmp/sms-bench-sqlite.XXXXXX)"
# The production group's SQLite file: on the disk the build is on (not tmpfs).
mkdir -p "$root/target"
sqlite_disk_dir="$(mktemp -d "$root/target/sms-bench-disk.XXXXXX")"
commands="$work/commands.txt"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  stop_servers "$work"
  rm -rf "$work" "$sqlite_dir" "$sqlite_disk_dir"
}
trap cleanup EXIT

# Records a command, shell-quoted as run, for BENCHMARKS.md.
record() {
  printf '%q ' "$@" | sed 's/ $//' >>"$commands"
  echo >>"$commands"
}

# Runs a command and records it.
run() {
  record "$@"
  "$@"
}

# Pinning: the client on core 0, everything it talks to on core 1.
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
  client=(taskset -c 0)
  server=(taskset -c 1)
  serve_cpu=(--serve-cpu 0)
  pinning="the client (criterion, sms-bench-allocs, sms-bench-load and its children, pgbench) on core 0; the responders, PostgreSQL and Redis on core 1 (taskset); for the serve rows, \`sms-sdk serve\` and the verify thread on core 0, the load generator (\`sms-bench-load serve\`) with the responder as the forward sink and PostgreSQL on core 1"
else
  client=()
  server=()
  serve_cpu=()
  pinning="none (fewer than 2 cores, or no taskset): the responder shares the client's core"
fi

load_start="$(uptime)"

step "installing PostgreSQL and Redis when missing"
[ -n "$(pg_bin)" ] || apt_install postgresql
[ -n "$only_serve" ] || command -v redis-server >/dev/null || apt_install redis-server
if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then useradd --system --no-create-home postgres; fi

step "building in release (sms-bench, the sms-sdk command, and the criterion benches of sms-sdk)"
run cargo build --release -p sms-bench
run cargo build --release -p sms-sdk-cli
[ -n "$only_serve$only_production" ] || run cargo bench -p sms-sdk --features testing --bench micro --no-run
bin="$root/target/release"
load_built="$(uptime)"

step "starting the responders, PostgreSQL and Redis on loopback (core 1)"
# 10,000 sends in flight need 10,000 sockets on each side.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
record ulimit -n "$(ulimit -n)"
start_responder() { # name, delay ms
  local port
  port="$(free_port)"
  local command=("${server[@]}" "$bin/sms-bench-responder" --listen "127.0.0.1:$port" --delay-ms "$2" --ready-file "$work/$1.addr")
  record "${command[@]}"
  sed -i '$ s/$/ \&/' "$commands"
  # taskset execs the responder: $! is the responder's pid (its CPU time is read from /proc).
  "${command[@]}" >"$work/$1.log" 2>&1 &
  pids+=("$!")
  echo "$!" >"$work/$1.pid"
  for _ in $(seq 1 100); do [ -s "$work/$1.addr" ] && break; sleep 0.05; done
  [ -s "$work/$1.addr" ] || { echo "error: the $1 responder did not start" >&2; cat "$work/$1.log" >&2; exit 1; }
}
start_responder responder 0
responder="http://$(cat "$work/responder.addr")"

# A CA and a certificate for localhost and 127.0.0.1 (the TLS rows), readable by PostgreSQL.
tls="$work/tls"
mkdir -p "$tls"
(
  cd "$tls"
  ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.crt -days 2 -subj /CN=sms-bench-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  openssl req "${ec[@]}" -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
  openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
    -out server.crt 2>/dev/null
  chmod 600 server.key
)
if [ "$(id -u)" = 0 ]; then chown -R postgres "$tls"; fi
chmod 755 "$tls"
chmod 644 "$tls/ca.crt" "$tls/server.crt"

pg_port="$(free_port)"
PG_OPTIONS="-c ssl=on -c ssl_cert_file=$tls/server.crt -c ssl_key_file=$tls/server.key" \
  start_postgres "$work" "$pg_port" "${server[@]}"
# The server offers TLS (for the production group's TLS row); every other row says plain text.
postgres="postgres://postgres@127.0.0.1:$pg_port/postgres?sslmode=disable"
postgres_tls="postgres://postgres@localhost:$pg_port/postgres?sslmode=verify-full&sslrootcert=$tls/ca.crt"

# The serve rows: `sms-sdk serve` on core 0 (the load program pins it with taskset), the load
# generator on core 1 with the responder (the forward sink) and PostgreSQL.
serve_rows() {
  step "serve: $runs runs of ${seconds}s per row (sms-sdk serve on core 0, its load on core 1)"
  run "${server[@]}" "$bin/sms-bench-load" serve --sms-sdk "$bin/sms-sdk" "${serve_cpu[@]}" \
    --sink "$responder" --sink-pid "$(cat "$work/responder.pid")" --sqlite-dir "$sqlite_dir" \
    --postgres "$postgres" --runs "$runs" --seconds "$seconds" --out "$work/serve.json"
}

# The production group's servers: a Redis that also listens for TLS, and a 3-master cluster.
production_servers() {
  redis_port="$(free_port)"
  redis_tls_port="$(free_port)"
  REDIS_OPTIONS="--tls-port $redis_tls_port --tls-cert-file $tls/server.crt --tls-key-file $tls/server.key \
    --tls-ca-cert-file $tls/ca.crt --tls-auth-clients no" start_redis "$work" "$redis_port" "${server[@]}"
  redis="redis://127.0.0.1:$redis_port/0"
  redis_tls="rediss://localhost:$redis_tls_port/0?sslrootcert=$tls/ca.crt"
  local nodes=() port
  for i in 1 2 3; do
    port="$(free_port)"
    mkdir -p "$work/cluster-$i"
    server_command "${server[@]}" redis-server --bind 127.0.0.1 --port "$port" --cluster-enabled yes \
      --cluster-config-file "$work/cluster-$i/nodes.conf" --cluster-port "$(free_port)" --save '' \
      --appendonly no --dir "$work/cluster-$i" --daemonize yes --pidfile "$work/cluster-$i/redis.pid" \
      --logfile "$work/cluster-$i/redis.log"
    wait_listening "$port" || { echo "error: a cluster node did not start" >&2; exit 1; }
    nodes+=("127.0.0.1:$port")
  done
  run redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
  for _ in $(seq 1 100); do
    redis-cli -p "${nodes[0]##*:}" cluster info | grep -q cluster_state:ok && break
    sleep 0.1
  done
  redis_cluster="redis-cluster://${nodes[0]}?node=${nodes[1]}&node=${nodes[2]}"
  # DynamoDB: moto's server (an emulator, from PyPI), with throwaway credentials.
  local moto moto_port
  moto="$(install_moto)"
  moto_port="$(free_port)"
  start_moto "$work" "$moto_port" "$moto" "${server[@]}"
  export AWS_ACCESS_KEY_ID=sms-sdk-bench AWS_SECRET_ACCESS_KEY=sms-sdk-bench AWS_EC2_METADATA_DISABLED=true
  dynamodb="dynamodb://sms-sdk-bench-$(date +%s)?region=us-east-1&endpoint=http://127.0.0.1:$moto_port"
}
stop_cluster() {
  for i in 1 2 3; do
    [ -f "$work/cluster-$i/redis.pid" ] && kill "$(cat "$work/cluster-$i/redis.pid")" 2>/dev/null || true
  done
}
trap 'stop_cluster; cleanup' EXIT

production_args=()
if [ -n "$only_production" ]; then
  production_servers
  step "production group: $runs runs of ${seconds}s per row"
  run "${client[@]}" "$bin/sms-bench-load" suite --only production --responder "$responder" \
    --responder-pid "$(cat "$work/responder.pid")" --sqlite-dir "$sqlite_dir" --sqlite-disk-dir "$sqlite_disk_dir" \
    --postgres "$postgres" --postgres-tls "$postgres_tls" --redis "$redis" --redis-tls "$redis_tls" \
    --redis-cluster "$redis_cluster" --dynamodb "$dynamodb" --runs "$runs" --seconds "$seconds" \
    --out "$work/production.json"
  commit="$(git rev-parse --short=12 HEAD)"
  {
    echo "Measured separately by \`scripts/bench.sh production\` on commit \`$commit\`$(
      [ -z "$(git status --porcelain --untracked-files=no -- . ':!BENCHMARKS.md')" ] || echo ' (with uncommitted changes)'
    ), $(date -u '+%Y-%m-%d %H:%M UTC'); load (\`uptime\`) at the start: \`$load_start\`, at the end: \`$(uptime)\`;"
    echo "the SQLite files: $sqlite_disk_dir ($(df --output=fstype "$sqlite_disk_dir" | tail -n 1)) and $sqlite_dir ($(df --output=fstype "$sqlite_dir" | tail -n 1))."
    echo
    "$bin/sms-bench-load" production-report --results "$work/production.json"
    echo
    echo "The commands:"
    echo
    sed 's/^/    /' "$commands"
  } >"$root/target/bench-production.md"
  cat "$root/target/bench-production.md"
  step "done: the production rows are in target/bench-production.md (BENCHMARKS.md is unchanged)"
  exit 0
fi

if [ -n "$only_serve" ]; then
  serve_rows
  commit="$(git rev-parse --short=12 HEAD)"
  {
    echo "Measured separately by \`scripts/bench.sh serve\` on commit \`$commit\`$(
      [ -z "$(git status --porcelain --untracked-files=no -- . ':!BENCHMARKS.md')" ] || echo ' (with uncommitted changes)'
    ), $(date -u '+%Y-%m-%d %H:%M UTC'); load (\`uptime\`) at the start: \`$load_start\`, at the end: \`$(uptime)\`."
    echo
    "$bin/sms-bench-load" serve-report --serve "$work/serve.json"
    echo
    echo "The commands:"
    echo
    sed 's/^/    /' "$commands"
  } >"$root/target/bench-serve.md"
  cp "$work/serve.json" "$root/target/bench-serve.json"
  cat "$root/target/bench-serve.md"
  step "done: the serve rows are in target/bench-serve.md, their runs in target/bench-serve.json (BENCHMARKS.md is unchanged)"
  exit 0
fi

start_responder slow 1000
slow="http://$(cat "$work/slow.addr")"

production_servers

pgbench_args=()
if command -v pgbench >/dev/null; then pgbench_args=(--pgbench "$(command -v pgbench)"); fi

step "criterion micro benchmarks (webhook verification vs primitives, segments)"
rm -rf "$root/target/criterion/webhook" "$root/target/criterion/segments"
run env SMS_BENCH_PAIRED="$work/paired.json" "${client[@]}" \
  cargo bench -p sms-sdk --features testing --bench micro -- "${criterion_args[@]}" \
  >"$work/criterion.log" 2>&1 || { cat "$work/criterion.log" >&2; exit 1; }
grep -E '^(webhook|segments)/|time:|thrpt:' "$work/criterion.log" >&2 || true

step "allocation counts"
run "${client[@]}" "$bin/sms-bench-allocs" --target "$responder" --out "$work/allocs.json" >/dev/null

step "load suite: $runs runs of ${seconds}s per row"
run "${client[@]}" "$bin/sms-bench-load" suite --responder "$responder" \
  --responder-pid "$(cat "$work/responder.pid")" --slow-responder "$slow" \
  --postgres "$postgres" --redis "$redis" --sqlite-dir "$sqlite_dir" "${pgbench_args[@]}" \
  --sqlite-disk-dir "$sqlite_disk_dir" --postgres-tls "$postgres_tls" --redis-tls "$redis_tls" \
  --redis-cluster "$redis_cluster" --dynamodb "$dynamodb" \
  --runs "$runs" --seconds "$seconds" --out "$work/results.json"
serve_rows
load_end="$(uptime)"

step "writing BENCHMARKS.md"
commit="$(git rev-parse --short=12 HEAD)"
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no -- . ':!BENCHMARKS.md')" ]; then
  dirty=" (with uncommitted changes)"
fi
cpu_model="$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)"
{
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- Commit measured: \`$commit\`$dirty on branch \`$(git rev-parse --abbrev-ref HEAD)\`"
  echo "- CPU: $(nproc) cores (\`nproc\`), $cpu_model; $(lscpu | sed -n 's/^Thread(s) per core: */threads per core: /p'); $(lscpu | sed -n 's/^Hypervisor vendor: */hypervisor: /p')"
  echo "- Caches: $(lscpu | grep -E '^L[123]' | sed 's/  */ /g' | paste -sd ';' -)"
  echo "- Memory: $(free -g | awk '/^Mem:/ {print $2}') GiB"
  echo "- Kernel: $(uname -srm)"
  echo "- Rust: $(rustc -V), $(cargo -V)"
  echo "- PostgreSQL: $("$(pg_bin)/postgres" --version) (fsync off, loopback TCP); pgbench: $(pgbench --version 2>/dev/null || echo 'not installed')"
  echo "- Redis: $(redis-server --version | cut -d ' ' -f 1-3) (no persistence, loopback TCP)"
  echo "- SQLite file: $sqlite_dir ($(df --output=fstype "$sqlite_dir" | tail -n 1)); the production group's on-disk file: $sqlite_disk_dir ($(df --output=fstype "$sqlite_disk_dir" | tail -n 1))"
  echo "- Pinning: $pinning"
  echo "- Load (\`uptime\`) at the start: \`$load_start\`"
  echo "- Load after the build: \`$load_built\`"
  echo "- Load at the end: \`$load_end\`"
  echo "- Runs per load row: $runs of $seconds s; criterion: 100 samples per function"
} >"$work/machine.md"
run "$bin/sms-bench-load" report --results "$work/results.json" --criterion "$root/target/criterion" \
  --allocs "$work/allocs.json" --paired "$work/paired.json" --serve "$work/serve.json" --machine "$work/machine.md" --commands "$commands" \
  --commit "$commit$dirty" --out "$root/BENCHMARKS.md"
step "done: BENCHMARKS.md"
