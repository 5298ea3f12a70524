#!/usr/bin/env bash
# Builds and tests fixtures/downstream, a crate outside the workspace, against the PACKAGED
# sms-sdk and sms-sdk-emulator: the `.crate` files `cargo package --workspace` left in
# target/package/ are extracted under target/downstream/crates/, and the fixture's registry
# dependencies (`sms-sdk = "0.1.0"`, …) are patched to those copies on the command line. The
# script fails unless cargo resolved them to the extracted copies. Usage, after packaging:
#
#   cargo package --workspace [--allow-dirty] && scripts/downstream.sh
#
# The fixture builds in the workspace's target directory (CARGO_TARGET_DIR if set), where the
# package verification and the workspace's tests left the dependencies it shares with them.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
case "$target" in /*) ;; *) target="$root/$target" ;; esac
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"
fixture="$root/fixtures/downstream"
crates="$target/downstream/crates"

rm -rf "$crates"
mkdir -p "$crates"
patches=()
for name in sms-sdk sms-sdk-emulator; do
  file="$target/package/$name-$version.crate"
  if [ ! -f "$file" ]; then
    echo "error: $file is missing: run \`cargo package --workspace\` first" >&2
    exit 1
  fi
  tar -xzf "$file" -C "$crates"
  patches+=(--config "patch.crates-io.$name.path=\"$crates/$name-$version\"")
done

# The workspace's lock file, so the fixture gets the versions the workspace was tested with
# (cargo drops what the fixture does not use and adds what it needs).
cp Cargo.lock "$fixture/Cargo.lock"

# Proof that the packaged copies are what the fixture builds.
resolved="$(cargo tree --manifest-path "$fixture/Cargo.toml" "${patches[@]}" -e normal --depth 1 --prefix none)"
for name in sms-sdk sms-sdk-emulator; do
  if ! grep -qF "$name v$version ($crates/$name-$version)" <<<"$resolved"; then
    printf 'error: the fixture did not resolve %s to the packaged copy:\n%s\n' "$name" "$resolved" >&2
    exit 1
  fi
done

CARGO_TARGET_DIR="$target" cargo test --manifest-path "$fixture/Cargo.toml" "${patches[@]}"
