#!/usr/bin/env bash
# Packages the three published crates with verification, as `cargo publish` would check them:
# `cargo package --workspace` (tools/msrv-check is not published). Usage: scripts/package.sh
# (scripts/test.sh runs it). `--allow-dirty` is added only when the work tree has uncommitted
# changes; a clean checkout (CI) packages without it.
#
# Verification builds each `.crate` in the workspace's target directory, with the workspace's
# dev profile passed on the command line (the packaged manifests carry no profile), so it reuses
# what the tests built.
#
# A cargo pitfall this script works around: verification unpacks the crates it packaged into
# $CARGO_HOME/registry/src/-<hash>/NAME-VERSION/ (the hash names this target directory's
# temporary registry) and never refreshes an unpacked copy, so a later run would verify against
# the sources of an earlier one. The script removes the copies its target directory used before
# packaging (found in the dependency files of the last verification); when one it could not
# know of (a new target directory, a shared CARGO_HOME) turns out to differ from the new
# `.crate` file, it removes it and packages again.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"

allow_dirty=()
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "the work tree has uncommitted changes: packaging with --allow-dirty"
  allow_dirty=(--allow-dirty)
fi

# The unpacked copies of our crates that this target directory's verification builds read.
unpacked() {
  cat "$target"/debug/deps/*.d 2>/dev/null \
    | grep -Eo "[^ :]*/registry/src/-[0-9a-f]+/sms-sdk(-emulator|-cli)?-$version/" | sort -u || true
}

# The unpacked copies that differ from the `.crate` files just made.
stale() {
  local scratch dir name
  scratch="$(mktemp -d)"
  for dir in $(unpacked); do
    name="$(basename "$dir")"
    [ -f "$target/package/$name.crate" ] || continue
    tar -xzf "$target/package/$name.crate" -C "$scratch"
    diff -rq --exclude=.cargo-ok "$scratch/$name" "$dir" >/dev/null 2>&1 || echo "$dir"
  done
  rm -rf "$scratch"
}

package() {
  cargo package --workspace --exclude msrv-check "${allow_dirty[@]}" \
    --config 'profile.dev.package."*".debug = false'
}

for dir in $(unpacked); do rm -rf "$dir"; done
status=0
package || status=$?
old="$(stale)"
if [ -n "$old" ]; then
  printf 'verification read unpacked copies left by an earlier run; removing them and packaging again:\n%s\n' "$old"
  for dir in $old; do rm -rf "$dir"; done
  status=0
  package || status=$?
fi
exit "$status"
