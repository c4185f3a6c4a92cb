#!/usr/bin/env bash
# marketgate with nothing but curl: the 402 of a paid endpoint, its quote, and the free endpoints.
#
#   MARKETGATE_URL=http://localhost:4021 bash examples/curl.sh
#
# Start a server first (`npm run sandbox -- --no-demo` serves one on port 4021). CI runs this script
# against the offline sandbox stack (test/docs/examples.test.ts).
set -euo pipefail
URL="${MARKETGATE_URL:-http://localhost:4021}"
PAID="/api/v1/prices?symbols=btc,eth"

echo "== 1. A paid endpoint called without payment answers 402 Payment Required"
# Accept-Payment says this client also speaks MPP (an x402 client sends none, and its 402 has no WWW-Authenticate).
headers="$(curl -sS -o /dev/null -D - -H 'Accept-Payment: evm/charge, tempo/charge' "$URL$PAID")"
sed -n 1p <<<"$headers"
# PAYMENT-REQUIRED: the x402 v2 requirements (scheme, network, USDC asset, amount in atomic units, payTo), base64 JSON.
required="$(echo "$headers" | tr -d '\r' | grep -i '^payment-required:' | cut -d' ' -f2)"
echo "PAYMENT-REQUIRED, decoded:"
echo "$required" | base64 -d
echo
# WWW-Authenticate: the MPP challenge the client ranks first, offered beside x402.
echo "$headers" | tr -d '\r' | grep -i '^www-authenticate:' | cut -c1-120 || true

echo
echo "== 2. The quote: the same requirements, without calling (free)"
curl -fsS -G "$URL/api/v1/quote" --data-urlencode "path=$PAID" | cut -c1-400
echo
echo "   a POST is quoted with method=POST (add body=<JSON> to have the body checked too, webhook URL included):"
curl -fsS -G "$URL/api/v1/quote" --data-urlencode "path=/price-alert" --data-urlencode "method=POST" | cut -c1-200
echo

echo
echo "== 3. Free endpoints"
echo "GET /health:"
curl -fsS "$URL/health"
echo
echo "GET / (every endpoint with its price):"
curl -fsS "$URL/" | cut -c1-300
echo
echo "GET /api/v1/status:"
curl -fsS "$URL/api/v1/status" | cut -c1-300
echo
echo "GET /openapi.json:"
curl -fsS "$URL/openapi.json" | cut -c1-200
echo
echo "GET /.well-known/x402.json:"
curl -fsS "$URL/.well-known/x402.json" | cut -c1-200
echo
echo "GET /llms.txt:"
llms="$(curl -fsS "$URL/llms.txt")"
sed -n 1,5p <<<"$llms"
echo "GET /docs: $(curl -fsS -o /dev/null -w '%{http_code} %{content_type}' "$URL/docs")"
