import { decodePaymentRequiredHeader, encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { fit402 } from "../../http/fit-402.js";
import { headerBytes } from "../../http/header-budget.js";

/** What a 402 needs to be paid (x402 and credits): never moved, whatever the budget. */
const required: PaymentRequired = {
  x402Version: 2,
  error: "Payment required",
  resource: {
    url: "https://api.example.com/price/ETH",
    description: "price",
    mimeType: "application/json",
    serviceName: "marketgate",
    tags: ["dex"],
    iconUrl: "https://api.example.com/favicon.svg",
  },
  accepts: [
    {
      scheme: "exact",
      network: "eip155:8453",
      amount: "10000",
      asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
      payTo: "0x0000000000000000000000000000000000000001",
      maxTimeoutSeconds: 120,
      extra: {},
    },
  ],
  extensions: {
    "payment-identifier": { info: { required: false } },
    "sign-in-with-x": { info: { nonce: "n" } },
    bazaar: { info: { input: { type: "http" } }, schema: { pad: "x".repeat(1500) } },
  },
};
const challenges = ['Payment id="a", method="evm", request="' + "e".repeat(400) + '"', 'Payment id="b", method="tempo", request="' + "t".repeat(400) + '"'];
const bytes = (r: ReturnType<typeof fit402>) =>
  headerBytes("PAYMENT-REQUIRED", encodePaymentRequiredHeader(r.header)) + (r.challenges.length ? headerBytes("WWW-Authenticate", r.challenges) : 0);

describe("fit402: a 402's two headers within a budget, the rest in its body", () => {
  it("changes nothing when everything fits", () => {
    const r = fit402(required, challenges, 100_000, true);
    expect(r).toEqual({ header: required, challenges, body: {} });
  });

  /** The fits of ever smaller budgets, each one byte under the previous fit: every step of the order, one by one. */
  const stages = (speaksMpp: boolean) => {
    const out = [fit402(required, challenges, 100_000, speaksMpp)];
    for (let i = 0; i < 6; i++) out.push(fit402(required, challenges, bytes(out.at(-1)!) - 1, speaksMpp));
    return out;
  };

  it("to a client that does not speak MPP: the second challenge, the service metadata, the Bazaar declaration, the first challenge, the description", () => {
    const [, second, metadata, bazaar, first, description] = stages(false);
    expect(second!.challenges).toEqual(challenges.slice(0, 1));
    expect(second!.body).toEqual({ mpp: { challenges: challenges.slice(1) } });
    expect(metadata!.header.resource).toEqual({ url: required.resource.url, description: "price", mimeType: "application/json" });
    expect(metadata!.body.resource).toEqual(required.resource);
    // Discovery goes after the metadata: a facilitator catalogues a route only from a 402 header that declares it.
    expect(metadata!.header.extensions?.bazaar).toEqual(required.extensions!.bazaar);
    expect(bazaar!.header.extensions?.bazaar).toBeUndefined();
    expect(bazaar!.body.extensions?.bazaar).toEqual(required.extensions!.bazaar);
    expect(first!.challenges).toEqual([]);
    expect(first!.body.mpp).toEqual({ challenges });
    expect(first!.header.resource.description).toBe("price");
    expect(description!.header.resource).toEqual({ url: required.resource.url, mimeType: "application/json" });
  });

  it("to an MPP client: its challenge goes last, after the description; what pays always stays", () => {
    const all = stages(true);
    const [, , metadata, bazaar, description, last] = all;
    expect(bazaar!.challenges).toEqual(challenges.slice(0, 1));
    expect(metadata!.challenges).toEqual(challenges.slice(0, 1));
    expect(description!.challenges).toEqual(challenges.slice(0, 1));
    expect(description!.header.resource).toEqual({ url: required.resource.url, mimeType: "application/json" });
    expect(last!.challenges).toEqual([]);
    for (const r of all) {
      expect(decodePaymentRequiredHeader(encodePaymentRequiredHeader(r.header)).accepts).toEqual(required.accepts);
      expect(Object.keys(r.header.extensions ?? {})).toEqual(expect.arrayContaining(["payment-identifier", "sign-in-with-x"]));
      expect(r.header.resource.url).toBe(required.resource.url);
    }
  });
});
