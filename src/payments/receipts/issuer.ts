import { sign as cryptoSign } from "node:crypto";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import {
  createJWSOfferReceiptIssuer,
  createOfferReceiptExtension,
  OFFER_RECEIPT,
  type JWSSigner,
  type OfferReceiptIssuer,
  type SignedReceipt,
} from "@x402/extensions/offer-receipt";
import {
  coveredComponents,
  RECEIPT_CARRIERS,
  RECEIPT_HEADER,
  SIGNATURE_LABEL,
  signContent,
  type ContentSignatureHeaders,
  type ReceiptCarrier,
  type SignedRequestLine,
} from "./content-signature.js";
import type { PublishedKey, ReceiptKeys } from "./keys.js";

/*
 * Signed offers and receipts (the `offer-receipt` extension of @x402/extensions: JWS, alg EdDSA, signed by
 * the service's receipt key) and the content signature of each paid answer (content-signature.ts). The call
 * pipeline (src/core/call-pipeline.ts) calls {@link ReceiptIssuer.offers} on each 402 and
 * {@link ReceiptIssuer.seal} on each paid answer, whatever the transport and payment method; the stream
 * sessions call {@link ReceiptIssuer.receipt} for each paid minute. docs/receipts.md says what they prove.
 */

/** Who paid, on which network, by which transaction: what a receipt states (the extension's payload fields). */
export interface ReceiptFacts {
  /** The payer's address (x402 / MPP: the settlement's payer; credits: the signed-in wallet). */
  payer: string;
  /** CAIP-2 network of the payment (credits: the service's x402 `NETWORK`; a balance has no network of its own). */
  network: string;
  /** The settlement's transaction hash; absent for credits (no transaction per call). */
  transaction?: string;
}

/** A paid answer's signed receipt and content signature, ready for any transport. */
export interface Sealed {
  /** The request line the signature covers (`@method`, `@target-uri`: the receipt's `resourceUrl`). */
  request: SignedRequestLine;
  receipt: SignedReceipt;
  /** The one header that carries the receipt, as sent, which the content signature covers (see {@link ReceiptIssuer.seal}). */
  carrier: ReceiptCarrier;
  /** The answer's bytes as sent (HTTP body; MCP: the text content), which the digest covers. */
  body: string;
  /** `Content-Digest`, `Signature-Input`, `Signature`. */
  headers: ContentSignatureHeaders;
}

/** The `receipts` section of `/.well-known/x402.json`: how receipts are signed and with which keys. */
export interface ReceiptsDocument {
  extension: typeof OFFER_RECEIPT;
  format: "jws";
  alg: "EdDSA";
  /** Where a paid answer carries its receipt: the first of these it has (one per answer, see `RECEIPT_CARRIERS`). */
  receipt_headers: readonly string[];
  /** `covered_components`: the last is the header the receipt travels in. */
  content_signature: { standard: string; digest: string; label: string; alg: "ed25519"; covered_components: readonly string[] };
  keys: PublishedKey[];
  docs: string;
}

/** Base64 of a value's JSON (the encoding of the x402 headers). */
export function encodeJsonHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64");
}

/** The {@link RECEIPT_HEADER} carrier of `receipt`: base64 of its JSON (as `PAYMENT-RESPONSE` encodes its own). */
export function receiptHeaderCarrier(receipt: SignedReceipt): ReceiptCarrier {
  return { name: RECEIPT_HEADER, value: encodeJsonHeader(receipt) };
}

/** `settle` with the signed receipt under `extensions["offer-receipt"].info.receipt` (where the extension's `extractReceiptFromResponse` reads it). */
export function withReceipt(settle: SettleResponse, receipt: SignedReceipt): SettleResponse {
  return { ...settle, extensions: { ...settle.extensions, [OFFER_RECEIPT]: { info: { receipt } } } };
}

/** Issues signed offers, receipts and content signatures with one {@link ReceiptKeys}. */
export class ReceiptIssuer {
  private readonly issuer: OfferReceiptIssuer;
  private readonly offerExtension: ReturnType<typeof createOfferReceiptExtension>;

  constructor(readonly keys: ReceiptKeys) {
    const { privateKey } = keys;
    const signer: JWSSigner = {
      kid: keys.current.kid,
      format: "jws",
      algorithm: "EdDSA",
      sign: async (payload) => cryptoSign(null, payload, privateKey).toString("base64url"),
    };
    this.issuer = createJWSOfferReceiptIssuer(keys.current.kid, signer);
    this.offerExtension = createOfferReceiptExtension(this.issuer);
  }

  /**
   * `required` with a signed offer per `accepts` entry under `extensions["offer-receipt"].info.offers`, as the
   * extension's own `enrichPaymentRequiredResponse` builds them (validity: each entry's `maxTimeoutSeconds`).
   */
  async offers(required: PaymentRequired): Promise<PaymentRequired> {
    const ext = await this.offerExtension.enrichPaymentRequiredResponse!(
      {},
      { requirements: required.accepts, resourceInfo: required.resource, error: required.error, paymentRequiredResponse: required },
    );
    return ext ? { ...required, extensions: { ...required.extensions, [OFFER_RECEIPT]: ext } } : required;
  }

  /** A signed receipt for `resourceUrl`. */
  receipt(resourceUrl: string, facts: ReceiptFacts): Promise<SignedReceipt> {
    return this.issuer.issueReceipt(resourceUrl, facts.payer, facts.network, facts.transaction || undefined);
  }

  /**
   * The receipt and content signature of one paid answer: the receipt for `request.targetUri`, the
   * digest of `body` and the signature over the request line, the digest and the header that carries the
   * receipt, which `carrier` chooses for the transport and payment (default {@link receiptHeaderCarrier}).
   */
  async seal(request: SignedRequestLine, facts: ReceiptFacts, body: string, carrier: (r: SignedReceipt) => ReceiptCarrier = receiptHeaderCarrier): Promise<Sealed> {
    const receipt = await this.receipt(request.targetUri, facts);
    const carried = carrier(receipt);
    const headers = await signContent({ privateKey: this.keys.privateKey, keyid: this.keys.current.keyid }, request, body, carried);
    return { request, receipt, carrier: carried, body, headers };
  }

  /** The `receipts` section of `/.well-known/x402.json` at `now` (ms). */
  document(now = Date.now()): ReceiptsDocument {
    return {
      extension: OFFER_RECEIPT,
      format: "jws",
      alg: "EdDSA",
      receipt_headers: RECEIPT_CARRIERS,
      content_signature: {
        standard: "RFC 9421",
        digest: "RFC 9530 sha-256",
        label: SIGNATURE_LABEL,
        alg: "ed25519",
        covered_components: [...coveredComponents(RECEIPT_HEADER).slice(0, -1), "<receipt header>"],
      },
      keys: this.keys.published(now),
      docs: "docs/receipts.md",
    };
  }
}
