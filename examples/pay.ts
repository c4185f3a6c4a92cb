/**
 * A paid call with the typed client (`marketgate/client`, docs/client.md), which pays with the official x402
 * client (`@x402/fetch` + `@x402/evm`) underneath:
 *
 *   MARKETGATE_URL=http://localhost:4021 X402_PRIVATE_KEY=0x... npx tsx examples/pay.ts
 *
 * The client sends the request, reads the 402's price, checks it against its caps (here at most $0.01 a call and
 * $0.05 in all), signs an EIP-3009 USDC authorization for exactly that amount and sends the request again with
 * it; the answer comes back typed, with what it cost. With the sandbox (`npm run sandbox -- --no-demo`), use one of
 * the funded keys it prints. CI runs this file against the offline sandbox stack (test/docs/examples.test.ts).
 */
import { createClient } from "../src/client/index.js"; // installed: from "marketgate/client"

const url = process.env.MARKETGATE_URL ?? "http://localhost:4021";
const key = process.env.X402_PRIVATE_KEY;
if (!key) {
  console.error("set X402_PRIVATE_KEY to the payer's private key (the sandbox prints funded ones)");
  process.exit(2);
}

const client = createClient({ url, wallet: { evmPrivateKey: key as `0x${string}` }, maxUsdPerCall: "0.01", maxUsdPerSession: "0.05" });
const { data, cost, cacheHit, status, headers } = await client.tools.cex_prices({ symbols: "btc,eth" });
console.log(`HTTP ${status}, X-Data-Source: ${headers.get("x-data-source")}`);
console.log(JSON.stringify(data, null, 2));
// Base mainnet; the sandbox's local chain uses the same chain id (8453). A cache hit costs nothing.
if (cost.method === "x402") console.log(`paid by ${cost.payer} on ${cost.network}: transaction ${cost.transaction}`);
else console.log(`cost: ${cost.method}${cacheHit ? " (cache hit)" : ""}`);
