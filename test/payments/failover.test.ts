import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { FailoverFacilitatorClient, neverReached } from "../../src/payments/failover.js";

const refused = () => Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });
const timedOut = () => new Error("facilitator settle timed out after 15000ms");

function fake(name: string, calls: string[], behaviour: { settle?: () => Error; verify?: () => Error }): FacilitatorClient {
  return {
    getSupported: async () => ({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:8453" }], extensions: [], signers: {} }),
    verify: async () => {
      calls.push(`${name}.verify`);
      if (behaviour.verify) throw behaviour.verify();
      return { isValid: true, payer: "0xabc" };
    },
    settle: async () => {
      calls.push(`${name}.settle`);
      if (behaviour.settle) throw behaviour.settle();
      return { success: true, transaction: `0x${name}`, network: "eip155:8453" };
    },
  };
}

const p = {} as PaymentPayload;
const r = {} as PaymentRequirements;

describe("facilitator failover", () => {
  it("moves on when a facilitator cannot be reached", async () => {
    const calls: string[] = [];
    const f = new FailoverFacilitatorClient([
      { name: "a", client: fake("a", calls, { verify: refused, settle: refused }) },
      { name: "b", client: fake("b", calls, {}) },
    ]);
    expect((await f.verify(p, r)).isValid).toBe(true);
    expect((await f.settle(p, r)).transaction).toBe("0xb");
    expect(calls).toEqual(["a.verify", "b.verify", "a.settle", "b.settle"]);
  });

  it("never settles elsewhere after a failure that may have broadcast (timeout): the outcome is unknown", async () => {
    const calls: string[] = [];
    const f = new FailoverFacilitatorClient([
      { name: "a", client: fake("a", calls, { settle: timedOut }) },
      { name: "b", client: fake("b", calls, {}) },
    ]);
    await expect(f.settle(p, r)).rejects.toThrow(/timed out/);
    expect(calls).toEqual(["a.settle"]);
  });

  it("recognises errors raised before any request was sent", () => {
    expect(neverReached(refused())).toBe(true);
    expect(neverReached(Object.assign(new TypeError("fetch failed"), { cause: new Error("bad port") }))).toBe(true);
    expect(neverReached(timedOut())).toBe(false);
  });
});
