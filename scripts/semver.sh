#!/usr/bin/env bash
# Release check: does the public API of `sms-sdk` keep semver against a baseline?
# Usage: scripts/semver.sh [BASELINE_REV]
#
# The baseline is BASELINE_REV when given (a tag, branch or commit), else the newest release
# tag `v*` (`git tag --list 'v*' --sort=-v:refname`). Nothing is published yet, so the first
# baseline is a revision of this repository: before the first release tag, name the revision
# whose surface the release must keep (the previous release's commit; `HEAD` checks the
# script itself: no change, so it passes).
#
# It runs `cargo semver-checks check-release -p sms-sdk --baseline-rev REV --all-features`:
# both versions of the crate are documented as rustdoc JSON and compared, so a breaking change
# in any feature's API fails (exit 1) unless the version number says it may break (before 1.0,
# a minor bump). Needs cargo-semver-checks (`cargo install cargo-semver-checks --locked`).
# Not part of scripts/test.sh: it is a release step (README, "Releasing").
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo semver-checks --version >/dev/null 2>&1; then
  echo "error: cargo-semver-checks is not installed: cargo install cargo-semver-checks --locked" >&2
  exit 2
fi

baseline="${1:-$(git tag --list 'v*' --sort=-v:refname | head -n 1)}"
if [ -z "$baseline" ]; then
  echo "error: no release tag v* yet: name the baseline revision (scripts/semver.sh REV)" >&2
  exit 2
fi
rev="$(git rev-parse --verify --quiet "$baseline^{commit}")" || {
  echo "error: $baseline is not a revision of this repository" >&2
  exit 2
}

echo "sms-sdk: semver check against $baseline ($rev)"
cargo semver-checks check-release -p sms-sdk --baseline-rev "$rev" --all-features
