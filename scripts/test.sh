#!/usr/bin/env bash
# Runs every check and test of the workspace, as CI does. Usage: scripts/test.sh
#
# SMS_SDK_LONG=1 runs the long mode of the reliability suite (RELIABILITY.md): ten times the
# chaos sends and crash trials, and the long hostile-input runs.
#
# Besides formatting, lints, docs and the tests, it checks the declared MSRV (scripts/msrv.sh:
# the build with the 1.94.1 toolchain runs only where that toolchain is installed), packages the
# three crates with verification (scripts/package.sh: `cargo package --workspace`, with
# `--allow-dirty` only when the work tree has uncommitted changes), and builds and tests
# fixtures/downstream against the packaged crates (scripts/downstream.sh).
#
# The store tests need PostgreSQL, PgBouncer and Redis. This script installs them from Debian
# packages when they are missing. Some tests start servers of their own, to freeze or kill them or
# to configure them: the `tls_…` tests start TLS-only PostgreSQL (`hostssl` lines only) and
# TLS-only Redis (`--port 0 --tls-port`) servers with a throwaway CA made by `openssl`, and the
# `cluster_…` tests start 3-master Redis Clusters (`--cluster-enabled yes`, then `redis-cli
# --cluster create … --cluster-replicas 0`), in the library's and the command's tests. Unless
# SMS_SDK_TEST_POSTGRES_URL, SMS_SDK_TEST_PGBOUNCER_URL and SMS_SDK_TEST_REDIS_URL are already set,
# it starts throwaway servers on loopback in a temporary directory (PgBouncer in transaction pooling
# mode in front of the PostgreSQL server the tests use), points the tests at them, and stops them
# when it exits.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step shows the time since the start.
step() { printf '\n==> %s [%dm%02ds]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

# as_root, apt_install, free_port, pg_bin, run_pg, start_postgres, start_redis, stop_servers.
. scripts/lib/servers.sh

services_dir=""
stop_services() {
  [ -n "$services_dir" ] || return 0
  if [ -f "$services_dir/pgbouncer/pgbouncer.pid" ]; then
    kill "$(cat "$services_dir/pgbouncer/pgbouncer.pid")" 2>/dev/null || true
  fi
  stop_servers "$services_dir"
  rm -rf "$services_dir"
}
trap stop_services EXIT

install_servers() {
  [ -n "$(pg_bin)" ] || apt_install postgresql
  { command -v redis-server && command -v redis-cli; } >/dev/null || apt_install redis-server redis-tools
  pgbouncer_bin >/dev/null || apt_install pgbouncer
  # The TLS tests (tests/it/stores/tls.rs, redis_tls.rs, the command's stores.rs) make their
  # certificates with it.
  command -v openssl >/dev/null || apt_install openssl
  if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then useradd --system --no-create-home postgres; fi
}

# The completion tests (crates/sms-sdk-cli/tests/cli/completions.rs) run the scripts in zsh and fish.
install_shells() {
  command -v zsh >/dev/null || apt_install zsh
  command -v fish >/dev/null || apt_install fish
}

tests_postgres() {
  local port
  port="$(free_port)"
  start_postgres "$services_dir" "$port"
  export SMS_SDK_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres"
  echo "PostgreSQL on 127.0.0.1:$port"
}

# Debian puts pgbouncer in /usr/sbin, which a non-root PATH may lack.
pgbouncer_bin() {
  command -v pgbouncer || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; }
}

# PgBouncer in transaction pooling mode in front of $SMS_SDK_TEST_POSTGRES_URL (any database name,
# as the client's user; the test servers trust loopback).
start_pgbouncer() {
  local port pg_host pg_port pg_user dir="$services_dir/pgbouncer"
  port="$(free_port)"
  # postgres://[user@]host[:port]/database
  local url="${SMS_SDK_TEST_POSTGRES_URL#*://}"
  url="${url%%/*}"
  pg_user=postgres
  if [[ "$url" == *@* ]]; then pg_user="${url%%@*}"; pg_user="${pg_user%%:*}"; url="${url#*@}"; fi
  pg_host="${url%%:*}"
  pg_port=5432
  if [[ "$url" == *:* ]]; then pg_port="${url##*:}"; fi
  mkdir -p "$dir"
  printf '"%s" ""\n' "$pg_user" >"$dir/userlist.txt"
  printf '%s\n' "[databases]" "* = host=$pg_host port=$pg_port" "" "[pgbouncer]" \
    "listen_addr = 127.0.0.1" "listen_port = $port" "unix_socket_dir =" "auth_type = trust" \
    "auth_file = $dir/userlist.txt" "pool_mode = transaction" "max_client_conn = 500" \
    "default_pool_size = 20" "logfile = $dir/pgbouncer.log" "pidfile = $dir/pgbouncer.pid" \
    >"$dir/pgbouncer.ini"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; fi
  run_pg "$(pgbouncer_bin)" -d "$dir/pgbouncer.ini"
  wait_listening "$port" || { echo "error: PgBouncer did not start" >&2; cat "$dir/pgbouncer.log" >&2; return 1; }
  export SMS_SDK_TEST_PGBOUNCER_URL="postgres://$pg_user@127.0.0.1:$port/postgres"
  echo "$("$(pgbouncer_bin)" --version | head -n 1) (transaction pooling) on 127.0.0.1:$port"
}

tests_redis() {
  local port
  port="$(free_port)"
  start_redis "$services_dir" "$port"
  export SMS_SDK_TEST_REDIS_URL="redis://127.0.0.1:$port/0"
  echo "Redis on 127.0.0.1:$port"
}

# The DynamoDB store's tests: a moto server the tests share, and the program for the tests that
# start one of their own (to freeze it).
tests_dynamodb() {
  local port
  port="$(free_port)"
  start_moto "$services_dir" "$port" "$SMS_SDK_TEST_MOTO_SERVER"
  export SMS_SDK_TEST_DYNAMODB_URL="http://127.0.0.1:$port"
  echo "moto $MOTO_VERSION (a DynamoDB emulator) on 127.0.0.1:$port"
}

install_servers
install_shells
[ -n "${SMS_SDK_TEST_MOTO_SERVER:-}" ] || SMS_SDK_TEST_MOTO_SERVER="$(install_moto)"
export SMS_SDK_TEST_MOTO_SERVER
# The DynamoDB store finds credentials as AWS's tools do: the tests' are throwaway ones (moto
# takes any), so that no test ever signs with a developer's own; no instance metadata is asked.
export AWS_ACCESS_KEY_ID=sms-sdk-test AWS_SECRET_ACCESS_KEY=sms-sdk-test AWS_EC2_METADATA_DISABLED=true
unset AWS_SESSION_TOKEN AWS_PROFILE
if [ -z "${SMS_SDK_TEST_POSTGRES_URL:-}" ] || [ -z "${SMS_SDK_TEST_PGBOUNCER_URL:-}" ] ||
  [ -z "${SMS_SDK_TEST_REDIS_URL:-}" ] || [ -z "${SMS_SDK_TEST_DYNAMODB_URL:-}" ]; then
  step "starting throwaway PostgreSQL, PgBouncer, Redis and moto (DynamoDB) on loopback"
  services_dir="$(mktemp -d /tmp/sms-sdk-services.XXXXXX)"
  chmod 755 "$services_dir"
  [ -n "${SMS_SDK_TEST_POSTGRES_URL:-}" ] || tests_postgres
  [ -n "${SMS_SDK_TEST_PGBOUNCER_URL:-}" ] || start_pgbouncer
  [ -n "${SMS_SDK_TEST_REDIS_URL:-}" ] || tests_redis
  [ -n "${SMS_SDK_TEST_DYNAMODB_URL:-}" ] || tests_dynamodb
fi

step "cargo fmt --check"
cargo fmt --all -- --check
cargo fmt --manifest-path fixtures/downstream/Cargo.toml -- --check

# The same flags as scripts/msrv.sh's clippy, which cargo then answers from its cache.
step "cargo clippy (all targets, all features)"
cargo clippy --workspace --all-targets --all-features -- -D warnings -D clippy::incompatible_msrv

scripts/msrv.sh

step "cargo doc (warnings are errors: broken links, missing docs)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --quiet

step "no warnings with no feature, each feature alone, and the defaults (scripts/features.sh)"
scripts/features.sh

step "cargo test (no provider features)"
cargo test -p sms-sdk --no-default-features --features testing

# The emulator and the command build the library with every feature they use either way, so
# they run once, in the all-features pass.
step "cargo test (library, default features)"
cargo test -p sms-sdk

# The tests run as two processes at once, the command's and the emulator's integration tests
# beside all the others: most of their time is spent waiting on servers, timeouts and child
# processes, not on the cores. The build lists every integration test target, so a new one runs
# in the first group without being named here. Each group's output is printed whole when it ends;
# the doc tests run after them.
step "cargo test (all features): build"
test_logs="$(mktemp -d)"
cargo test --workspace --all-features --no-run 2>&1 | tee "$test_logs/build"
second=(cli arguments emulator)
first=()
for name in $(sed -n 's|^ *Executable tests/\([a-z_]*\)\(/main\)\{0,1\}\.rs .*|\1|p' "$test_logs/build" | sort -u); do
  [[ " ${second[*]} " == *" $name "* ]] || first+=(--test "$name")
done
for name in "${second[@]}"; do
  grep -qE "Executable tests/$name(/main)?\.rs " "$test_logs/build" ||
    { echo "error: the build listed no test target $name (scripts/test.sh names it)" >&2; exit 1; }
done
[ "${#first[@]}" -gt 0 ] || { echo "error: the build listed no other test target" >&2; exit 1; }
step "cargo test (all features): the library's tests beside the command's and the emulator's"
cargo test --workspace --all-features --lib --bins "${first[@]}" >"$test_logs/first" 2>&1 &
first_pid=$!
cargo test --workspace --all-features $(printf -- '--test %s ' "${second[@]}") >"$test_logs/second" 2>&1 &
second_pid=$!
first_status=0 second_status=0
wait "$first_pid" || first_status=$?
wait "$second_pid" || second_status=$?
cat "$test_logs/first" "$test_logs/second"
rm -rf "$test_logs"
if [ "$first_status" != 0 ] || [ "$second_status" != 0 ]; then
  echo "error: tests failed (exit $first_status and $second_status)" >&2
  exit 1
fi
cargo test --workspace --all-features --doc

step "cargo package (with verification)"
scripts/package.sh

step "downstream fixture against the packaged crates"
scripts/downstream.sh

step "done"
