#!/usr/bin/env bash
# Packages the three published crates with verification, as `cargo publish` would check them:
# `cargo package --workspace` (tools/msrv-check and crates/sms-bench are not published). Usage:
# scripts/package.sh (scripts/test.sh runs it). `--allow-dirty` is added only when the work tree
# has uncommitted changes; a clean checkout (CI) packages without it.
#
# Verification builds each `.crate` in the workspace's target directory, with the workspace's
# dev profile passed on the command line (the packaged manifests carry no profile), so it reuses
# what the tests built.
#
# A cargo pitfall this script works around: verification unpacks the crates it packaged into
# $CARGO_HOME/registry/src/-<hash>/NAME-VERSION/ (the hash names this target directory's
# temporary registry) and never refreshes an unpacked copy, and cargo takes a library built
# from a registry as fresh as long as its version is the same. A later run would verify
# `sms-sdk-emulator` and `sms-sdk-cli` against the `sms-sdk` of an earlier one. So before
# packaging, the script removes the unpacked copies the last verification in this target
# directory read (its dependency files name them) and what was built from them; and when a
# copy it could not know of (a new target directory, a shared CARGO_HOME) turns out to differ
# from the new `.crate` file, it removes that copy and what was built from it, and packages
# again.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)"

allow_dirty=()
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "the work tree has uncommitted changes: packaging with --allow-dirty"
  allow_dirty=(--allow-dirty)
fi

# The dependency files of the libraries built from unpacked copies of our crates.
units() {
  grep -lE "/registry/src/-[0-9a-f]+/sms-sdk(-emulator|-cli)?-$version/" "$target"/debug/deps/*.d 2>/dev/null || true
}

# The unpacked copies of our crates in the registry directories this target directory's
# verification builds read (all of them: a failed verification never reaches the later crates).
unpacked() {
  local files registry name
  files="$(units)"
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086 # one path a line, no spaces in target paths
  for registry in $(cat $files | grep -Eo "[^ :]*/registry/src/-[0-9a-f]+/" | sort -u); do
    for name in sms-sdk sms-sdk-emulator sms-sdk-cli; do
      if [ -d "$registry$name-$version" ]; then echo "$registry$name-$version/"; fi
    done
  done
}

# Removes those copies, and the libraries built from them with their fingerprints, so that the
# next verification unpacks and builds the new `.crate` files.
purge() {
  local dirs file unit hash
  dirs="$(unpacked)"
  for file in $(units); do
    unit="$(basename "$file" .d)"
    hash="${unit##*-}"
    rm -rf "$target/debug/.fingerprint/"*"-$hash" "$target/debug/deps/lib$unit."* "$file"
  done
  for dir in $dirs; do rm -rf "$dir"; done
}

# The unpacked copies that differ from the `.crate` files just made.
stale() {
  local scratch dir name crate
  scratch="$(mktemp -d)"
  for dir in $(unpacked); do
    name="$(basename "$dir")"
    # What verification unpacks from (a failed verification leaves no target/package/*.crate).
    crate="$target/package/tmp-registry/$name.crate"
    [ -f "$crate" ] || crate="$target/package/$name.crate"
    [ -f "$crate" ] || continue
    tar -xzf "$crate" -C "$scratch"
    diff -rq --exclude=.cargo-ok "$scratch/$name" "$dir" >/dev/null 2>&1 || echo "$dir"
  done
  rm -rf "$scratch"
}

package() {
  cargo package --workspace --exclude msrv-check --exclude sms-bench "${allow_dirty[@]}" \
    --config 'profile.dev.package."*".debug = false'
}

purge
status=0
package || status=$?
old="$(stale)"
if [ -n "$old" ]; then
  printf 'verification read unpacked copies left by an earlier run; removing them and packaging again:\n%s\n' "$old"
  purge
  status=0
  package || status=$?
fi
exit "$status"
