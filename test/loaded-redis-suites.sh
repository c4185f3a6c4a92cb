#!/usr/bin/env bash
# Runs the Redis and replica suites N times (default 5) beside two busy CPU-bound processes, as a loaded
# 2-core machine would run them; prints each run's failures and totals. Needs a Redis on 127.0.0.1:6379.
# usage: bash test/loaded-redis-suites.sh [N]
set -uo pipefail
cd "$(dirname "$0")/.."
files=(test/replicas test/ingestion/replication.test.ts test/ingestion/replication-outage.test.ts test/ingestion/replicas.test.ts
  test/ingestion/paid-relay.test.ts test/alerts/redis-store.test.ts test/alerts/durability.test.ts test/state/lease.test.ts
  test/http/rate-limit.test.ts test/http/ready.test.ts test/http/credits-refund.test.ts test/http/credits-request-id.test.ts
  test/http/upfront-retries.test.ts test/payments/credits-ledger.test.ts test/payments/payment-ledger.test.ts
  test/payments/solana-replicas.test.ts test/payments/kept-answers.test.ts test/http/held-answers.test.ts)
busy=()
for _ in 1 2; do (timeout 3600 sh -c 'while :; do :; done') & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null' EXIT
failed=0
for r in $(seq 1 "${1:-5}"); do
  log=$(mktemp)
  CI=true npx vitest run "${files[@]}" --reporter=verbose >"$log" 2>&1 || failed=$((failed + 1))
  echo "run $r: $(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^ +Tests ' | tr -s ' ')"
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^ +×' | head -20
  rm -f "$log"
done
echo "runs failed: $failed"
exit $((failed > 0))
