import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { SIGN_IN_WITH_X, wrapFetchWithSIWx } from "@x402/extensions/sign-in-with-x";
import { privateKeyToAccount } from "viem/accounts";
import { siwxChallenge } from "../../src/payments/credits/siwx.js";
import { fetchVia } from "./host-fetch.js";

/** The name of the other site: another x402 service that signs its users in with SIWX (or a phishing page). */
export const OTHER_SITE = "other-x402-service.example";

/** A running stand-in for {@link OTHER_SITE} on loopback. */
export interface OtherSite {
  /** Its origin as its users see it: `http://other-x402-service.example`. */
  origin: string;
  /**
   * The victim (`privateKey`) signs in at `path` of the other site with the official `wrapFetchWithSIWx`:
   * the site answers 402 with its own SIWX challenge (its domain, its nonce), the client signs it and sends
   * the proof, which the site keeps. Returns that `SIGN-IN-WITH-X` header value.
   */
  proofFrom(privateKey: `0x${string}`, path?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts the other site: a 402 with a SIWX challenge for its own origin (what any x402 service using
 * SIWX sends), 200 to a request that carries a proof. Its users reach it through {@link fetchVia}, so the
 * URLs and the signed messages name `http://other-x402-service.example`.
 */
export async function startOtherSite(): Promise<OtherSite> {
  const origin = `http://${OTHER_SITE}`;
  const proofs: string[] = [];
  const server: Server = createServer((req, res) => {
    const proof = req.headers[SIGN_IN_WITH_X.toLowerCase()];
    if (typeof proof === "string") {
      proofs.push(proof);
      res.writeHead(200, { "content-type": "application/json" }).end('{"signed_in":true}');
      return;
    }
    const url = `${origin}${req.url ?? "/"}`;
    const required: PaymentRequired = {
      x402Version: 2,
      error: "sign in",
      resource: { url, description: "sign in", mimeType: "application/json" },
      accepts: [
        {
          scheme: "exact",
          network: "eip155:8453",
          amount: "10000",
          asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
          payTo: "0x000000000000000000000000000000000000dEaD",
          maxTimeoutSeconds: 60,
          extra: { name: "USD Coin", version: "2" },
        },
      ],
      extensions: { [SIGN_IN_WITH_X]: siwxChallenge(url, origin, ["eip155:8453"]) },
    };
    res.writeHead(402, { "content-type": "application/json", "PAYMENT-REQUIRED": encodePaymentRequiredHeader(required) }).end("{}");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    proofFrom: async (privateKey, path = "/login") => {
      const before = proofs.length;
      const res = await wrapFetchWithSIWx(fetchVia(local), privateKeyToAccount(privateKey))(`${origin}${path}`);
      if (res.status !== 200 || proofs.length !== before + 1) throw new Error(`the other site did not get a proof (status ${res.status})`);
      return proofs.at(-1)!;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
