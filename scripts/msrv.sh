#!/usr/bin/env bash
# Checks the declared MSRV (`rust-version` in Cargo.toml, 1.94.1). Usage: scripts/msrv.sh
# (scripts/test.sh runs it).
#
# 1. The full build with the MSRV toolchain, `cargo +1.94.1 check --workspace --all-features
#    --all-targets` (in target/msrv, apart from the stable build). When the toolchain is not
#    installed, the script installs it with rustup (minimal profile); only where that is
#    impossible (no rustup, no network) is the build skipped with a note, and the next two
#    checks stand in for it.
# 2. Every package in the lock file (all features, every platform, dev and build dependencies)
#    declares a rust-version no newer than ours, or none (tools/msrv-check reads
#    `cargo metadata`).
# 3. Clippy with `clippy::incompatible_msrv` denied: no std API newer than the MSRV. Clippy
#    reads the MSRV from rust-version. The flags are those of scripts/test.sh's clippy step, so
#    after that step this one is answered from cargo's cache.
set -euo pipefail
cd "$(dirname "$0")/.."

msrv="$(sed -n '/^\[workspace.package\]/,/^\[/s/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)"
step() { printf '\n==> %s\n' "$*"; }

step "MSRV $msrv: full build with the $msrv toolchain"
# An installed `1.94.1-…` toolchain (or `X.Y-…`, `X.Y.N-…` for an MSRV of two numbers).
toolchain="$(rustup toolchain list 2>/dev/null | awk '{print $1}' | grep -E "^${msrv//./\\.}(\.[0-9]+)?-" | head -n 1 || true)"
if [ -z "$toolchain" ] && command -v rustup >/dev/null &&
  timeout 180 rustup toolchain install "$msrv" --profile minimal; then
  toolchain="$msrv"
fi
if [ -n "$toolchain" ]; then
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/msrv" cargo "+$toolchain" check --workspace --all-features --all-targets
else
  echo "skipped: the $msrv toolchain is not installed (rustup toolchain install $msrv); checks 2 and 3 still run"
fi

step "MSRV $msrv: rust-version of every package in the lock file"
cargo run --quiet --locked -p msrv-check

step "MSRV $msrv: clippy with incompatible_msrv denied"
cargo clippy --workspace --all-targets --all-features -- -D warnings -D clippy::incompatible_msrv
