/**
 * A paid call with the official x402 client (`@x402/fetch` + `@x402/evm`):
 *
 *   MARKETGATE_URL=http://localhost:4021 X402_PRIVATE_KEY=0x... npx tsx examples/pay.ts
 *
 * The client sends the request, reads the 402's requirements, signs an EIP-3009 USDC authorization for
 * exactly that amount and sends the request again with it; the answer carries the receipt in
 * PAYMENT-RESPONSE. With the sandbox (`npm run sandbox -- --no-demo`), use one of the funded keys it prints.
 * CI runs this file against the offline sandbox stack (test/docs/examples.test.ts).
 */
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

const url = process.env.MARKETGATE_URL ?? "http://localhost:4021";
const key = process.env.X402_PRIVATE_KEY;
if (!key) {
  console.error("set X402_PRIVATE_KEY to the payer's private key (the sandbox prints funded ones)");
  process.exit(2);
}

const account = privateKeyToAccount(key as `0x${string}`);
// Base mainnet; the sandbox's local chain uses the same chain id (8453).
const client = new x402Client().register("eip155:8453", new ExactEvmScheme(account));
const payFetch = wrapFetchWithPayment(fetch, client);

const res = await payFetch(`${url}/api/v1/prices?symbols=btc,eth`);
console.log(`HTTP ${res.status}, X-Data-Source: ${res.headers.get("x-data-source")}`);
console.log(JSON.stringify(await res.json(), null, 2));

const receipt = res.headers.get("payment-response");
if (receipt) {
  const settled = decodePaymentResponseHeader(receipt);
  console.log(`paid by ${account.address} on ${settled.network}: transaction ${settled.transaction}`);
}
if (!res.ok) process.exit(1);
