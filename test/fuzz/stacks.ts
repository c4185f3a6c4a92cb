import type { PaymentPayload } from "@x402/core/types";
import { startOfflineStack } from "../../src/sandbox/offline-stack.js";
import { TOOLS } from "../../tools/index.js";
import { requestPath } from "../../src/registry/tool.js";
import { startFreeStack } from "../helpers/free-stack.js";
import { paymentRequired, signPayment } from "../helpers/pay.js";
import { runFuzz, type FuzzReport } from "./run.js";

/** Limits high enough that the fuzz reaches validation, payment and handlers instead of 429s. */
const ENV = { RATE_LIMIT_PER_MIN: "1000000", FREE_RATE_LIMIT_PER_MIN: "1000000" };

/**
 * Fuzzes the production service twice, seeded: on the offline stack with payments on (anvil, the
 * in-process facilitator, behind a trusted loopback proxy; payment headers include mutations of a real
 * signed payload), and with payments off (no proxy trusted) so that hostile-but-valid inputs reach every
 * handler and the simulated venues. Both get hostile Host, X-Forwarded-Host and method values.
 * @returns one report per stack.
 */
export async function fuzzBothStacks(seed: number, paidCount: number, freeCount: number): Promise<{ paid: FuzzReport; free: FuzzReport }> {
  // Behind a trusted proxy (loopback): hostile X-Forwarded-Host / -Proto / -For values are read, not ignored.
  const paidStack = await startOfflineStack({ env: { ...ENV, TRUST_PROXY: "loopback" } });
  let paid: FuzzReport;
  try {
    const tool = TOOLS.find((t) => t.name === "prices") ?? TOOLS[0]!;
    const url = `${paidStack.url}${requestPath(tool)}`;
    const valid: PaymentPayload = await signPayment(await paymentRequired(url), paidStack.payers[8]!.privateKey);
    paid = await runFuzz({ baseUrl: paidStack.url, seed, count: paidCount, tools: TOOLS, valid });
  } finally {
    await paidStack.close();
  }
  const freeStack = await startFreeStack(ENV);
  try {
    const free = await runFuzz({ baseUrl: freeStack.url, seed: seed + 1, count: freeCount, tools: TOOLS });
    return { paid, free };
  } finally {
    await freeStack.close();
  }
}
