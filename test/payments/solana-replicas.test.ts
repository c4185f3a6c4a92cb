import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logger } from "../../src/lib/log.js";
import { RedisPaymentLedger } from "../../src/payments/ledger.js";
import type { PaymentRequest } from "../../src/payments/outcomes.js";
import { PaymentProcessor } from "../../src/payments/processor.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";
import { RedisHandle } from "../../src/state/redis.js";
import { TOOLS } from "../../tools/index.js";
import { redisAvailable, TEST_REDIS_URL } from "../helpers/redis-available.js";
import { deleteRedisPrefix } from "../helpers/redis-keys.js";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const PREFIX = `test:solreplicas:${randomBytes(4).toString("hex")}:`;

/**
 * Three "replicas": three payment processors over the service's own x402 catalogue (official resource
 * server, Solana facilitator on the local VM), each with its own Redis connection to one shared ledger.
 */
describe.skipIf(!redisAvailable)("a Solana payment is claimed once across replicas sharing the Redis ledger", () => {
  let stack: OfflineStack;
  let handles: RedisHandle[] = [];
  let replicas: PaymentProcessor[] = [];

  beforeAll(async () => {
    stack = await startOfflineStack({ solana: true });
    handles = [0, 1, 2].map(() => new RedisHandle({ url: TEST_REDIS_URL, prefix: PREFIX, log: logger }));
    for (const h of handles) h.start();
    await Promise.all(handles.map((h) => h.waitReady()));
    replicas = handles.map((h) => new PaymentProcessor(stack.service.payments!.catalog, new RedisPaymentLedger(h, 60_000)));
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.close()));
    await deleteRedisPrefix(PREFIX);
    await stack?.close();
  });

  it("of 12 concurrent uses of one signed transaction on 3 replicas exactly one runs; after settling, every replica refuses it", async () => {
    const tool = TOOLS.find((t) => t.name === "cex_market")!;
    const request = (fingerprint: string): PaymentRequest => ({
      tool,
      resource: { url: `${stack.url}/api/v1/market/x`, description: "t", mimeType: "application/json" },
      fingerprint,
      target: `GET ${stack.url}/api/v1/market/x`,
      priceUsd: tool.priceUsd,
    });
    const required = await replicas[0]!.paymentRequired(request("a"));
    const payer = stack.solana!.payers[5]!;
    const payment = await new x402Client().register(SOLANA, new ExactSvmScheme(payer.signer, { rpcUrl: stack.solana!.rpc.url })).createPaymentPayload(required);
    const before = await stack.solana!.balanceOf(payer.address);

    const checks = await Promise.all(Array.from({ length: 12 }, (_, i) => replicas[i % 3]!.check(request(`f${i}`), payment)));
    const verified = checks.filter((c) => c.kind === "verified");
    expect(verified).toHaveLength(1);
    for (const c of checks) if (c.kind === "payment_required") expect(c.required.error).toBe("authorization_in_use");
    const outcome = await (verified[0] as Extract<(typeof checks)[number], { kind: "verified" }>).payment.settle({ ok: true });
    expect(outcome).toMatchObject({ kind: "settled", receipt: { success: true, network: SOLANA, payer: payer.address } });
    expect(await stack.solana!.balanceOf(payer.address)).toBe(before - BigInt(required.accepts[1]!.amount));

    for (const r of replicas) {
      const again = await r.check(request("later"), payment);
      expect(again.kind === "payment_required" && again.required.error).toBe("duplicate_settlement");
    }
    expect(await stack.solana!.balanceOf(payer.address)).toBe(before - BigInt(required.accepts[1]!.amount));
  });
});
