#!/usr/bin/env bash
# Checks that the library builds without a single warning (compiler or clippy) with no feature,
# with each feature alone, and with the defaults: a user may enable any one of them.
# Usage: scripts/features.sh (scripts/test.sh runs it; it only checks, it builds nothing to run).
set -euo pipefail
cd "$(dirname "$0")/.."

features="$(sed -n '/^\[features\]/,/^\[/p' crates/sms-sdk/Cargo.toml |
  sed -n 's/^\([a-z][a-z0-9_-]*\) = .*/\1/p' | grep -v '^default$')"
sets=("" $features)
for set in "${sets[@]}"; do
  printf '  sms-sdk --no-default-features %s\n' "${set:+--features $set}"
  cargo clippy -p sms-sdk --all-targets --no-default-features ${set:+--features "$set"} --quiet \
    -- -D warnings -D clippy::incompatible_msrv
done
echo "  sms-sdk (default features)"
cargo clippy -p sms-sdk --all-targets --quiet -- -D warnings -D clippy::incompatible_msrv
