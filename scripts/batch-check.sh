#!/usr/bin/env bash
# The done-when checks of `sms-sdk batch`, against the emulator (not timed tests: they measure).
#
#   scripts/batch-check.sh [--rows N] [--large-rows N] [--skip-large] [--redis URL]
#
# 1. N rows (10,000) at --rate 500: the emulator's arrival times give the rate (within 5 % of 500),
#    and the run takes about N/500 s.
# 2. The same batch killed with SIGKILL about halfway, then run again: the emulator's request log
#    (GET /_emulator/messages) shows exactly one request per row.
# 3. Two batch processes sharing a Redis limit at 500/s (--rate-redis) send N/2 rows each: together
#    within 5 % of 500/s. Needs Redis: --redis URL, else SMS_SDK_TEST_REDIS_URL; skipped without.
# 4. 1,000,000 rows at a high rate: the batch process's resident memory sampled as it goes
#    (/proc/PID/status VmRSS) and its peak (VmHWM), to show it stays flat.
#
# It builds the command in release mode (cargo build), installs nothing, needs curl, jq and
# python3 (it stops and says so when one is missing), works in a temporary directory, and stops
# every process it started when it ends (or is interrupted). Exit 0 when every check passed.
set -euo pipefail

ROWS=10000
LARGE_ROWS=1000000
SKIP_LARGE=0
REDIS_URL="${SMS_SDK_TEST_REDIS_URL:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --rows) ROWS="$2"; shift 2 ;;
    --large-rows) LARGE_ROWS="$2"; shift 2 ;;
    --skip-large) SKIP_LARGE=1; shift ;;
    --redis) REDIS_URL="$2"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

for tool in curl jq python3 cargo; do
  command -v "$tool" >/dev/null || { echo "batch-check: $tool is required and not installed (nothing is installed for you)" >&2; exit 2; }
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d -t sms-sdk-batch-check.XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "batch-check: building sms-sdk (release)…"
(cd "$ROOT" && CARGO_INCREMENTAL=0 cargo build --quiet --release -p sms-sdk-cli)
BIN="$ROOT/target/release/sms-sdk"

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
EMULATOR="http://127.0.0.1:$PORT"
"$BIN" emulator --listen "127.0.0.1:$PORT" >"$WORK/emulator.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do curl -fsS "$EMULATOR/_emulator/keys" >/dev/null 2>&1 && break; sleep 0.1; done
KEYS="$(curl -fsS "$EMULATOR/_emulator/keys")"
export TWILIO_ACCOUNT_SID="$(jq -r .twilio.account_sid <<<"$KEYS")"
export TWILIO_AUTH_TOKEN="$(jq -r .twilio.auth_token <<<"$KEYS")"
export TWILIO_FROM="+15005550006"
export SMS_SDK_TWILIO_BASE_URL="$EMULATOR"
unset TELNYX_API_KEY PLIVO_AUTH_ID VONAGE_API_KEY VONAGE_APPLICATION_ID SMS_SDK_STORE

FAILED=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILED=1; }

# make_csv FILE N START: N rows with distinct recipients, numbered from START.
make_csv() {
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, n, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "w") as f:
    f.write("to,name\n")
    for i in range(start, start + n):
        f.write(f"+1415{i:07d},customer {i}\n")
EOF
}

# The emulator's requests as "count rate_per_s span_s" (rate from the first to the last arrival).
arrivals() {
  curl -fsS "$EMULATOR/_emulator/messages" | python3 -c '
import json, sys, datetime, re
def at(text):
    # RFC 3339 with up to nanoseconds: keep microseconds for fromisoformat.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("Z", "+00:00"))
    return datetime.datetime.fromisoformat(text).timestamp()
m = json.load(sys.stdin)
t = sorted(at(x["received_at"]) for x in m)
span = (t[-1] - t[0]) if len(t) > 1 else 0.0
rate = (len(t) - 1) / span if span > 0 else 0.0
print(len(t), f"{rate:.1f}", f"{span:.2f}")'
}

# within PCT VALUE TARGET: whether VALUE is within PCT % of TARGET.
within() { python3 -c "import sys; v,t,p=float('$2'),float('$3'),float('$1'); sys.exit(0 if abs(v-t)<=t*p/100 else 1)"; }

clear_emulator() { curl -fsS -X DELETE "$EMULATOR/_emulator/messages" >/dev/null; }

# The command itself (not a shell function), so that `$!` of a background run is its process.
BATCH=("$BIN" batch --body-template 'Hello {name}')

# 1. The rate.
echo "== 1. $ROWS rows at --rate 500"
make_csv "$WORK/rate.csv" "$ROWS" 0
clear_emulator
start=$(date +%s.%N)
"${BATCH[@]}" --concurrency 32 --csv "$WORK/rate.csv" --key-prefix rate- --rate 500 --store "sqlite:$WORK/rate.db" --json >"$WORK/rate.json" 2>"$WORK/rate.err" || true
end=$(date +%s.%N)
wall=$(python3 -c "print(f'{$end - $start:.2f}')")
read -r count rate span < <(arrivals)
expected=$(python3 -c "print(f'{$ROWS / 500:.1f}')")
echo "   requests $count, rate at the emulator $rate/s over $span s, wall time $wall s (expected about $expected s)"
echo "   summary: $(cat "$WORK/rate.json")"
if [ "$count" = "$ROWS" ] && within 5 "$rate" 500 && within 5 "$wall" "$expected"; then pass "rate within 5 % of 500/s"; else fail "rate"; fi

# 2. SIGKILL halfway, then again.
echo "== 2. $ROWS rows, SIGKILL halfway, run again"
clear_emulator
"${BATCH[@]}" --concurrency 32 --csv "$WORK/rate.csv" --key-prefix kill- --rate 500 --store "sqlite:$WORK/kill.db" >/dev/null 2>"$WORK/kill1.err" &
victim=$!
PIDS+=("$victim")
half=$((ROWS / 2))
while :; do
  n=$(curl -fsS "$EMULATOR/_emulator/messages" | jq length)
  [ "$n" -ge "$half" ] && break
  kill -0 "$victim" 2>/dev/null || break
  sleep 0.2
done
kill -9 "$victim" 2>/dev/null || true
wait "$victim" 2>/dev/null || true
before=$(curl -fsS "$EMULATOR/_emulator/messages" | jq length)
set +e
"${BATCH[@]}" --concurrency 32 --csv "$WORK/rate.csv" --key-prefix kill- --rate 500 --store "sqlite:$WORK/kill.db" --json --report "$WORK/kill.jsonl" >"$WORK/kill2.json" 2>"$WORK/kill2.err"
second=$?
set -e
# Requests per row: "rows_with_0 rows_with_1 rows_with_more".
per_row() {
  curl -fsS "$EMULATOR/_emulator/messages" | python3 -c '
import json, sys, collections
c = collections.Counter(m["to"] for m in json.load(sys.stdin))
values = [c.get(f"+1415{i:07d}", 0) for i in range(int(sys.argv[1]))]
print(sum(v == 0 for v in values), sum(v == 1 for v in values), sum(v > 1 for v in values))' "$ROWS"
}
read -r zero one more < <(per_row)
echo "   killed after $before requests; second run exit $second: $(cat "$WORK/kill2.json")"
echo "   after the second run: rows with 0 requests: $zero, exactly 1: $one, more than 1: $more"
# The rows the second run reported unknown are those whose send was under way at the kill: the
# key was reserved, and the request may or may not have left. The operator settles each after
# looking it up (here in the emulator's log): sent (with its id) or not sent. Then a third run.
curl -fsS "$EMULATOR/_emulator/messages" >"$WORK/log.json"
python3 - "$WORK/kill.jsonl" "$WORK/log.json" >"$WORK/resolve.txt" <<'EOF_PY'
import json, sys
ids = {m["to"]: m["id"] for m in json.load(open(sys.argv[2]))}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["outcome"] != "unknown":
        continue
    to = f"+1415{r['row'] - 1:07d}"
    print(r["key"], ids.get(to) or "-")
EOF_PY
unknown_rows=$(wc -l <"$WORK/resolve.txt")
sleep 1
while read -r key id; do
  if [ "$id" = "-" ]; then
    "$BIN" idempotency resolve "$key" --not-sent --older-than 1 --store "sqlite:$WORK/kill.db" >/dev/null
  else
    "$BIN" idempotency resolve "$key" --sent --provider twilio --provider-id "$id" --older-than 1 --store "sqlite:$WORK/kill.db" >/dev/null
  fi
done <"$WORK/resolve.txt"
set +e
"${BATCH[@]}" --concurrency 32 --csv "$WORK/rate.csv" --key-prefix kill- --rate 500 --store "sqlite:$WORK/kill.db" --json >"$WORK/kill3.json" 2>"$WORK/kill3.err"
third=$?
set -e
read -r zero3 one3 more3 < <(per_row)
echo "   $unknown_rows unknown rows settled by hand (resolve --sent with the logged id, or --not-sent); third run exit $third: $(cat "$WORK/kill3.json")"
echo "   after the third run: rows with 0 requests: $zero3, exactly 1: $one3, more than 1: $more3"
if [ "$more" = 0 ] && [ "$zero" -le "$unknown_rows" ] && [ "$third" = 0 ] && [ "$one3" = "$ROWS" ]; then
  pass "no row sent twice; after settling the unknown rows, exactly one request per row"
else
  fail "one request per row"
fi

# 3. Two processes sharing a Redis limit.
echo "== 3. two batch processes sharing --rate-redis at 500/s"
if [ -z "$REDIS_URL" ]; then
  echo "   skipped: no Redis (--redis URL or SMS_SDK_TEST_REDIS_URL)"
else
  clear_emulator
  per=$((ROWS / 2))
  make_csv "$WORK/a.csv" "$per" 0
  make_csv "$WORK/b.csv" "$per" "$per"
  "${BATCH[@]}" --concurrency 32 --csv "$WORK/a.csv" --key-prefix shared-a- --rate 500 --rate-redis "$REDIS_URL" --store "sqlite:$WORK/a.db" --json >"$WORK/a.json" 2>"$WORK/a.err" &
  a=$!; PIDS+=("$a")
  "${BATCH[@]}" --concurrency 32 --csv "$WORK/b.csv" --key-prefix shared-b- --rate 500 --rate-redis "$REDIS_URL" --store "sqlite:$WORK/b.db" --json >"$WORK/b.json" 2>"$WORK/b.err" &
  b=$!; PIDS+=("$b")
  wait "$a" || true; wait "$b" || true
  read -r count rate span < <(arrivals)
  echo "   requests $count, together $rate/s over $span s"
  if [ "$count" = "$((per * 2))" ] && within 5 "$rate" 500; then pass "shared rate within 5 % of 500/s"; else fail "shared rate"; fi
fi

# 4. Memory over a million rows.
if [ "$SKIP_LARGE" = 1 ]; then
  echo "== 4. skipped (--skip-large)"
else
  echo "== 4. $LARGE_ROWS rows at a high rate: resident memory of the batch process"
  make_csv "$WORK/large.csv" "$LARGE_ROWS" 0
  clear_emulator
  "${BATCH[@]}" --csv "$WORK/large.csv" --key-prefix large- --rate 100000 --concurrency 64 --store "sqlite:$WORK/large.db" \
    --report "$WORK/large.jsonl" --json >"$WORK/large.json" 2>"$WORK/large.err" &
  big=$!; PIDS+=("$big")
  start=$(date +%s)
  echo "   elapsed_s rows_reported VmRSS_kB"
  while kill -0 "$big" 2>/dev/null; do
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$big/status" 2>/dev/null || echo "")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$big/status" 2>/dev/null || echo "")
    [ -n "$hwm" ] && last_hwm=$hwm
    done_rows=$(wc -l <"$WORK/large.jsonl" 2>/dev/null || echo 0)
    [ -n "$rss" ] && echo "   $(( $(date +%s) - start )) $done_rows $rss"
    sleep 10
  done
  wait "$big" || true
  echo "   summary: $(cat "$WORK/large.json")"
  echo "   peak RSS (VmHWM) ${last_hwm:-unknown} kB"
fi

exit "$FAILED"
