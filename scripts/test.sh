#!/usr/bin/env bash
# Runs every check and test of the workspace, as CI does. Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, all features)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "cargo check --no-default-features"
cargo check -p sms-sdk --no-default-features

step "cargo test (no provider features)"
cargo test -p sms-sdk --no-default-features --features testing

step "cargo test (default features)"
cargo test --workspace

step "cargo test (all features)"
cargo test --workspace --all-features
