import { randomBytes } from "node:crypto";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { json } from "../helpers/json.js";
import { header, paymentRequired, signPayment } from "../helpers/pay.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";
import { until } from "../helpers/wait.js";

/** Concurrent retries of the one payment. */
const RETRIES = 6;
/** `POST /price-alert` costs 0.04 USD: 40,000 USDC atomic units. */
const PRICE_ATOMIC = 40_000n;
/** Never met: the alert never fires (no webhook traffic), and a public IP literal passes the check before payment without DNS. */
const ALERT = { symbol: "ETH", condition: "above", target_price: 1e9, webhook_url: "https://93.184.215.14/hook", expires_in_hours: 1 };

/**
 * Concurrent retries of one upfront (state-creating) payment create one alert and charge once: retries of
 * a payment whose settlement outcome was unknown (the first request got 502), and requests that share a
 * payment identifier. Real HTTP, the official x402 client's signatures, anvil, and the memory or the Redis
 * payment ledger.
 */
function concurrentRetries(name: string, ledgerEnv: () => Record<string, string>, skip: boolean) {
  describe.skipIf(skip)(`concurrent retries of one upfront payment (${name})`, () => {
    let stack: OfflineStack;
    /** While true, the facilitator broadcasts nothing and fails; the test lands the held transfers later. */
    let holding = false;
    const held: Array<() => Promise<unknown>> = [];

    beforeAll(async () => {
      stack = await startOfflineStack({
        env: { RATE_LIMIT_PER_MIN: "100000", RECONCILE_WINDOW_MS: "300", ALERT_EVAL_CRON: "0 0 0 1 1 *", ...ledgerEnv() },
        wrapFacilitator: (f): FacilitatorClient => ({
          verify: (p, r) => f.verify(p, r),
          getSupported: () => f.getSupported(),
          settle: async (p, r) => {
            if (!holding) return f.settle(p, r);
            // The facilitator's answer is lost; the transfer lands after the service stopped waiting.
            held.push(() => f.settle(p, r));
            throw new Error("facilitator settle timed out");
          },
        }),
      });
      if (stack.service.ctx.redis) await until("redis to connect", async () => stack.service.ctx.redis?.ready);
    });
    afterAll(() => stack?.close());
    const url = () => `${stack.url}/price-alert`;
    const post = (sig?: string) =>
      fetch(url(), { method: "POST", headers: { "content-type": "application/json", ...(sig ? { "payment-signature": sig } : {}) }, body: JSON.stringify(ALERT) });
    const alertsOf = async (address: string) => (await stack.service.ctx.alerts!.listActive("price", address.toLowerCase())).length;
    const required = () => paymentRequired(url(), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(ALERT) });

    it(`creates one alert and charges once for ${RETRIES} concurrent retries with the same payment`, async () => {
      const payer = stack.payers[7]!;
      const alerts = () => alertsOf(payer.address);
      const sig = header(await signPayment(await required(), payer.privateKey));
      const before = await stack.balanceOf(payer.address);

      holding = true;
      const first = await post(sig);
      holding = false;
      expect(first.status).toBe(502);
      expect(await alerts()).toBe(0);
      expect(held).toHaveLength(1);
      await Promise.all(held.splice(0).map((land) => land()));
      expect(await stack.balanceOf(payer.address)).toBe(before - PRICE_ATOMIC);

      const retries = await Promise.all(Array.from({ length: RETRIES }, () => post(sig)));
      const ok = retries.filter((r) => r.status === 200);
      // One runs the owed request; the others are refused while it is in use, or get its kept answer once it is done.
      expect(ok.length).toBeGreaterThanOrEqual(1);
      expect(retries.every((r) => r.status === 200 || r.status === 402)).toBe(true);
      const created = await json(ok[0]!);
      expect(created).toMatchObject({ alert_id: expect.stringMatching(/^alert_price_eth_/), manage_token: expect.any(String) });
      for (const other of ok.slice(1)) expect(await json(other)).toEqual(created);
      expect(decodePaymentResponseHeader(ok[0]!.headers.get("payment-response")!)).toMatchObject({ success: true, payer: payer.address });
      for (const refused of retries.filter((r) => r.status === 402)) {
        // In use while the winner reconciles and runs (or in the instant between its settlement and its answer being kept). Never a new charge.
        expect(["authorization_in_use", "invalid_exact_evm_nonce_already_used"]).toContain(decodePaymentRequiredHeader(refused.headers.get("payment-required")!).error);
      }
      expect(await alerts()).toBe(1);

      // Done: a later retry gets the same alert back and creates nothing; the payer paid once.
      expect(await json(await post(sig))).toEqual(created);
      expect(await alerts()).toBe(1);
      expect(await stack.balanceOf(payer.address)).toBe(before - PRICE_ATOMIC);
    });

    it(`creates one alert and charges once for ${RETRIES} concurrent payments sharing one payment identifier`, async () => {
      const payer = stack.payers[6]!;
      const pr = await required();
      const withId = { ...pr, extensions: appendPaymentIdentifierToExtensions(pr.extensions ?? {}, generatePaymentId("test_")) };
      const sigs = await Promise.all(Array.from({ length: RETRIES }, async () => header(await signPayment(withId, payer.privateKey))));
      const before = await stack.balanceOf(payer.address);
      const responses = await Promise.all(sigs.map((sig) => post(sig)));
      // One runs; the others are told it is in progress (409) or, once it is done, get its answer (200).
      expect(responses.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      const ids = new Set((await Promise.all(responses.filter((r) => r.status === 200).map((r) => json(r)))).map((b) => b.alert_id));
      expect(ids.size).toBe(1);
      expect(await alertsOf(payer.address)).toBe(1);
      expect(await stack.balanceOf(payer.address)).toBe(before - PRICE_ATOMIC);
    });
  });
}

concurrentRetries("memory ledger", () => ({}), false);

const prefix = `test:${randomBytes(4).toString("hex")}:`;
concurrentRetries("Redis ledger", () => ({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, STREAMS: "off" }), !redisAvailable);
afterAll(async () => {
  if (redisAvailable) await deleteRedisPrefix(prefix);
});
