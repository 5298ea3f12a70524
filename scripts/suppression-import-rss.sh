#!/usr/bin/env bash
# Measures the peak memory (maximum resident set size) of `sms-sdk suppression import`:
# the import streams, so its peak must stay flat however long the file is. Not a timed test.
# Usage: scripts/suppression-import-rss.sh [ROWS] [--debug]
#
# Generates ROWS (default 1,000,000) distinct numbers as CSV (`recipient,scope,at,reason`), imports
# them into a fresh SQLite file with the built command under GNU time, then does the same with
# ROWS/100 rows, and prints both peaks: flat means the two are about the same. Then it checks one
# imported number (`suppression check`, one lookup on the primary key) and counts the rows in the
# file. Builds the release command unless --debug (the debug build is slower, its memory the
# same shape). Everything lives in a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_INCREMENTAL=0

# ROWS and --debug, in either order.
rows=1000000
profile=release
for arg in "$@"; do
  case "$arg" in
    --debug) profile=debug ;;
    '' | *[!0-9]*)
      echo "usage: scripts/suppression-import-rss.sh [ROWS] [--debug]" >&2
      exit 2
      ;;
    *) rows="$arg" ;;
  esac
done

if [[ ! -x /usr/bin/time ]]; then
  echo "GNU time (/usr/bin/time) is needed: apt-get install time" >&2
  exit 1
fi

if [[ "$profile" == release ]]; then
  cargo build --release -p sms-sdk-cli --bin sms-sdk >&2
else
  cargo build -p sms-sdk-cli --bin sms-sdk >&2
fi
bin="target/$profile/sms-sdk"

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# ROWS numbers: +1 and 12 digits, all distinct.
generate() {
  awk -v n="$1" 'BEGIN {
    print "recipient,scope,at,reason"
    for (i = 0; i < n; i++) printf "+1555%09d,account,2026-01-01T00:00:00Z,import\n", i
  }' > "$2"
}

# Prints the peak RSS in KiB of importing $1 rows into a new SQLite file.
measure() {
  local count="$1" csv="$dir/rows-$1.csv" db="$dir/state-$1.db"
  generate "$count" "$csv"
  /usr/bin/time -f '%M %e' -o "$dir/time-$count" \
    "$bin" suppression import "$csv" --store "sqlite:$db" > "$dir/out-$count"
  cat "$dir/out-$count" >&2
  read -r peak seconds < "$dir/time-$count"
  echo "$count rows: peak RSS ${peak} KiB (${seconds} s wall, shared machine: not a benchmark)" >&2
  echo "$peak"
}

small=$(( rows / 100 > 0 ? rows / 100 : 1 ))
peak_small="$(measure "$small")"
peak_large="$(measure "$rows")"

last="$(printf '+1555%09d' $(( rows - 1 )))"
# `suppression check` exits 1 when the number is suppressed, 0 when not, and otherwise on an error
# (7: the store): only 1 passes.
checked=0
"$bin" suppression check "$last" --store "sqlite:$dir/state-$rows.db" > /dev/null || checked=$?
if [[ "$checked" -eq 0 ]]; then
  echo "error: $last is not suppressed after the import" >&2
  exit 1
elif [[ "$checked" -ne 1 ]]; then
  echo "error: suppression check of $last failed (exit $checked)" >&2
  exit 1
fi
count="$("$bin" suppression export --store "sqlite:$dir/state-$rows.db" | tail -n +2 | wc -l)"
if [[ "$count" -ne "$rows" ]]; then
  echo "error: the export has $count rows, not $rows" >&2
  exit 1
fi

echo "peak RSS: ${peak_small} KiB for ${small} rows, ${peak_large} KiB for ${rows} rows ($profile build)"
echo "exported ${count} rows; the last number checks as suppressed"
