#!/usr/bin/env bash
# Prints how many crates `sms-sdk` pulls in per feature set: the "crates" column of the features
# table in crates/sms-sdk/README.md. Usage: scripts/crate-counts.sh
#
# A count is the number of distinct packages (name and version) in
# `cargo tree -p sms-sdk -e normal` for the feature set, on the host platform
# (x86_64-unknown-linux-gnu for the README's figures), sms-sdk itself not counted: the crates
# compiled into the library and the proc macros that expand in it, with their own
# dependencies. Build-script dependencies (cc and the like) and dev-dependencies are not
# counted.
set -euo pipefail
cd "$(dirname "$0")/.."

count() {
  cargo tree -p sms-sdk -e normal --prefix none --format '{p}' "$@" \
    | sed 's/ (\*)$//; s/ (proc-macro)$//' | grep -v '^sms-sdk v' | sort -u | wc -l
}

printf '%-26s %s\n' "feature set" crates
printf '%-26s %s\n' "no default features" "$(count --no-default-features)"
printf '%-26s %s\n' "default" "$(count)"
for feature in twilio telnyx plivo vonage sinch aws infobip bandwidth; do
  printf '%-26s %s\n' "$feature alone" "$(count --no-default-features --features "$feature")"
done
for feature in sqlite postgres redis dynamodb tower axum metrics testing; do
  printf '%-26s %s\n' "default + $feature" "$(count --features "$feature")"
done
printf '%-26s %s\n' "all features" "$(count --all-features)"
