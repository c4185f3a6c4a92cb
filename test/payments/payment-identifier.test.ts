/**
 * The x402 `payment-identifier` of a payment, as the processor reads it: the official validation of the
 * id, without compiling the schema the client echoes from our 402 (a new Ajv per request cost about
 * 18 ms of CPU on every paid call, on a schema the caller chooses).
 */
import type { PaymentPayload } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, generatePaymentId, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { paymentIdentifierOf } from "../../src/payments/processor.js";

/** A payload carrying `extensions` (only the extensions matter here). */
const payload = (extensions?: Record<string, unknown>): PaymentPayload =>
  ({ x402Version: 2, accepted: {}, payload: {}, ...(extensions ? { extensions } : {}) }) as unknown as PaymentPayload;

/** The extensions a client echoes from our 402, with `id` set the way the official client sets it. */
const echoed = (id?: string) => appendPaymentIdentifierToExtensions({ [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) }, id);

describe("paymentIdentifierOf", () => {
  it("reads the id of the extension the client echoed, and nothing when there is none", () => {
    const id = generatePaymentId();
    expect(paymentIdentifierOf(payload(echoed(id)))).toEqual({ id });
    expect(paymentIdentifierOf(payload({ [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) }))).toEqual({});
    expect(paymentIdentifierOf(payload())).toEqual({});
  });

  it("refuses ids outside 16 to 128 characters of [A-Za-z0-9_-] and malformed extensions", () => {
    for (const info of [
      { required: false, id: "short" },
      { required: false, id: "x".repeat(129) },
      { required: false, id: "has spaces in it, 16+" },
      { required: false, id: 42 },
      { id: generatePaymentId() },
    ]) {
      expect(paymentIdentifierOf(payload({ [PAYMENT_IDENTIFIER]: { info } }))).toMatchObject({ error: expect.stringMatching(/^invalid_payment_identifier: /) });
    }
    expect(paymentIdentifierOf(payload({ [PAYMENT_IDENTIFIER]: "pay_0123456789abcdef" }))).toMatchObject({ error: expect.stringMatching(/^invalid_payment_identifier: /) });
  });

  it("never compiles the schema the client sent (it is ours, echoed; a caller may send any)", () => {
    const id = generatePaymentId();
    const hostile = { ...(echoed(id)[PAYMENT_IDENTIFIER] as object), schema: { type: 12, $ref: "https://attacker.example/schema.json" } };
    expect(paymentIdentifierOf(payload({ [PAYMENT_IDENTIFIER]: hostile }))).toEqual({ id });
    const started = performance.now();
    for (let i = 0; i < 200; i++) paymentIdentifierOf(payload(echoed(id)));
    // Compiling the echoed schema took milliseconds per call; reading the id takes microseconds.
    expect(performance.now() - started).toBeLessThan(200);
  });
});
