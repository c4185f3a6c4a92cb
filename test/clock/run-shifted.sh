#!/usr/bin/env bash
# Runs the date-sensitive suites with the calendar moved ahead (test/clock/shift.js), once per shift in days:
#   bash test/clock/run-shifted.sh            # 60 and 400 days ahead (what CI runs)
#   bash test/clock/run-shifted.sh 30 -- test/dex   # other shifts or files: days, then `--`, then vitest filters
# A test or simulated value pinned to a calendar day fails here long before the calendar reaches it.
set -euo pipefail
cd "$(dirname "$0")/../.."

days=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do days+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
[ ${#days[@]} -gt 0 ] || days=(60 400)

# Tokens and DEX pools, alerts, funding schedules, retention windows, receipts and keys, leases, credits and sessions.
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  suites=(
    test/dex test/assets test/sim/dex-venues.test.ts
    test/alerts
    test/perp test/analytics/funding.test.ts test/sim/perp-venues.test.ts test/sim/deribit.test.ts
    test/ingestion/store-cvd.test.ts test/ingestion/store-liquidations.test.ts test/ingestion/store-db.test.ts
    test/ingestion/cvd-window-start.test.ts
    test/payments/receipts.test.ts test/payments/receipts-solana.test.ts test/payments/receipt-keys.test.ts
    test/payments/credits-ledger.test.ts test/http/credits.test.ts test/http/siwx-origin.test.ts
    test/state/lease.test.ts test/http/exactly-once.test.ts
  )
fi

for d in "${days[@]}"; do
  echo "== suites with the clock moved ${d} days ahead"
  MARKETGATE_TEST_CLOCK_SHIFT_DAYS="$d" NODE_OPTIONS="--import $(pwd)/test/clock/shift.js ${NODE_OPTIONS:-}" npx vitest run "${suites[@]}"
done
