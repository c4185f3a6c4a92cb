import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { json } from "../helpers/json.js";
import { paidTestTools } from "../helpers/paid-test-tools.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";
import { siwxHeader } from "../helpers/siwx.js";

/**
 * A SIWX `requestId` makes credit-paid retries idempotent: concurrent calls that carry one requestId (each
 * with its own fresh proof) run the handler once and debit once, on the embedded ledgers and on Redis,
 * where the claim of the identifier must be atomic (a read then a write let several run).
 */
const kinds = [
  { name: "embedded ledgers", redis: false },
  { name: "Redis ledgers", redis: true },
];

describe.each(kinds.filter((k) => redisAvailable || !k.redis))("credit-paid calls with one SIWX requestId ($name)", ({ redis }) => {
  const { state, counter } = paidTestTools();
  let stack: OfflineStack;
  const dataDir = mkdtempSync(join(tmpdir(), "mg-request-id-"));
  const prefix = `test:request-id:${randomBytes(4).toString("hex")}:`;
  const payer = () => stack.payers[1]!;
  const withCredits = (url: string, over = {}) => siwxHeader(payer().privateKey, url, over).then((h) => fetch(url, { headers: { "SIGN-IN-WITH-X": h } }));

  beforeAll(async () => {
    const env = { RATE_LIMIT_PER_MIN: "100000", ...(redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix } : { DATA_DIR: dataDir }) };
    stack = await startOfflineStack({ tools: [...TOOLS, counter], env });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(payer().privateKey))));
    const res = await pay(`${stack.url}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: "0.2" }) });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (redis) await deleteRedisPrefix(prefix);
  });

  it("six concurrent proofs with one requestId: one run, one debit; the others are told it is in progress or get its answer", async () => {
    const runsBefore = state.runs;
    const url = `${stack.url}/test/counter/request-id`;
    const results = await Promise.all(Array.from({ length: 6 }, () => withCredits(url, { requestId: "one-request" })));
    const statuses = results.map((r) => r.status);
    expect(
      statuses.every((s) => s === 200 || s === 409),
      JSON.stringify(statuses),
    ).toBe(true);
    expect(state.runs - runsBefore).toBe(1);
    expect(await json(await withCredits(`${stack.url}/api/v1/credits`))).toMatchObject({ spent_usd: "0.02", balance_usd: "0.18" });
    // A later retry with a new proof and the same requestId gets the stored answer, not a new run.
    const retry = await withCredits(url, { requestId: "one-request" });
    expect(retry.status).toBe(200);
    expect(state.runs - runsBefore).toBe(1);
  });
});
