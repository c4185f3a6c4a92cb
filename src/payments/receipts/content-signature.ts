import { createHash, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from "node:crypto";
import { httpbis, type Request as SignedRequest, type Response as SignedResponse } from "http-message-signatures";
import { parseDictionary, serializeDictionary } from "structured-headers";

/*
 * What a paid answer's bytes are bound to: `Content-Digest` (RFC 9530, sha-256 of the body as sent) and an
 * HTTP Message Signature (RFC 9421, `Signature-Input` / `Signature`, label `receipt`, alg ed25519) over the
 * request's `@method` and `@target-uri` and the response's `content-digest` and the header that carries the
 * signed receipt ({@link RECEIPT_CARRIERS}), with `created` and `keyid`, and no `expires` (a receipt is evidence
 * kept for later). Signing and verifying are the `http-message-signatures` library's (the signature base is
 * its, per RFC 9421 §2.5).
 */

/** The response header carrying the signed receipt (base64 JSON of the `SignedReceipt`) of an answer paid without an x402 settlement. */
export const RECEIPT_HEADER = "x402-receipt";
/**
 * The headers a paid answer carries its signed receipt in, exactly one per answer: the x402 settlement header
 * the client's protocol reads (`payment-response`, v1 `x-payment-response`; the receipt is at
 * `extensions["offer-receipt"].info.receipt`, where the extension's `extractReceiptFromResponse` reads it), else
 * {@link RECEIPT_HEADER} (credits, MPP `tempo`, MCP's `_meta`).
 */
export const RECEIPT_CARRIERS = ["payment-response", "x-payment-response", RECEIPT_HEADER] as const;
/** One of {@link RECEIPT_CARRIERS}. */
export type ReceiptCarrierName = (typeof RECEIPT_CARRIERS)[number];
/** The header that carries a paid answer's receipt, and its value as sent. */
export interface ReceiptCarrier {
  name: ReceiptCarrierName;
  value: string;
}
/** The signature's label in `Signature-Input` / `Signature`. */
export const SIGNATURE_LABEL = "receipt";
/** The covered components, in order (`;req`: of the request the response answers, RFC 9421 §2.4), the receipt's header last. */
export function coveredComponents(carrier: ReceiptCarrierName): string[] {
  return ["@method;req", "@target-uri;req", "content-digest", carrier];
}

/** `Content-Digest` of `body` (RFC 9530 §2): `sha-256=:<base64>:`. */
export function contentDigest(body: string | Uint8Array): string {
  return `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;
}

/**
 * Whether `header` (a `Content-Digest` field value) holds the sha-256 digest of `body`. Other algorithms are
 * ignored; a header without sha-256, or one that is not a structured dictionary, does not match.
 */
export function contentDigestMatches(header: string, body: string | Uint8Array): boolean {
  let dict: ReturnType<typeof parseDictionary>;
  try {
    dict = parseDictionary(header);
  } catch {
    return false;
  }
  const member = dict.get("sha-256");
  if (!member || !(member[0] instanceof ArrayBuffer)) return false;
  return Buffer.from(member[0]).equals(createHash("sha256").update(body).digest());
}

/** What a signed answer adds to its headers. */
export interface ContentSignatureHeaders {
  "Content-Digest": string;
  "Signature-Input": string;
  Signature: string;
}

/** The request a paid answer answers, as far as its signature covers it. */
export interface SignedRequestLine {
  /** `@method`: GET, POST, DELETE (MCP: POST). */
  method: string;
  /** `@target-uri`: the absolute public URL of the request (the receipt's `resourceUrl`). */
  targetUri: string;
}

/**
 * Signs a paid answer: the `Content-Digest` of `body` and the signature over {@link coveredComponents} of `carrier`.
 * @param carrier the header (one of {@link RECEIPT_CARRIERS}) and value with which the answer carries its receipt.
 */
export async function signContent(
  key: { privateKey: KeyObject; keyid: string },
  request: SignedRequestLine,
  body: string | Uint8Array,
  carrier: ReceiptCarrier,
  now = Date.now(),
): Promise<ContentSignatureHeaders> {
  const digest = contentDigest(body);
  const response: SignedResponse = { status: 200, headers: { "content-digest": digest, [carrier.name]: carrier.value } };
  const req: SignedRequest = { method: request.method, url: request.targetUri, headers: {} };
  const signed = await httpbis.signMessage(
    {
      key: { id: key.keyid, alg: "ed25519", sign: async (data) => cryptoSign(null, data, key.privateKey) },
      name: SIGNATURE_LABEL,
      fields: coveredComponents(carrier.name),
      params: ["created", "keyid", "alg"],
      paramValues: { created: new Date(now) },
    },
    response,
    req,
  );
  return { "Content-Digest": digest, "Signature-Input": String(signed.headers["Signature-Input"]), Signature: String(signed.headers["Signature"]) };
}

/** Why a content signature did not verify; undefined when it did. */
export type ContentSignatureFailure = string | undefined;

/**
 * The receipt header the `receipt` signature of a `Signature-Input` value covers (the one of {@link RECEIPT_CARRIERS}
 * among its components), or undefined when it names none or cannot be read.
 */
export function signedCarrier(signatureInput: string | undefined): ReceiptCarrierName | undefined {
  if (!signatureInput) return undefined;
  try {
    const member = parseDictionary(signatureInput).get(SIGNATURE_LABEL);
    const components = Array.isArray(member?.[0]) ? member[0].map(([item]) => item) : [];
    return RECEIPT_CARRIERS.find((c) => components.includes(c));
  } catch {
    return undefined;
  }
}

/**
 * Verifies a paid answer's content signature: the `Content-Digest` matches `body`, and the `receipt`
 * signature over {@link coveredComponents} of `carrier` verifies under the key `keys` returns for its `keyid`.
 * @param headers the answer's headers (lower-case names).
 * @param carrier the header the answer's receipt was read from: the signature must cover it.
 * @returns undefined when both hold, else why not.
 */
export async function verifyContent(
  headers: Readonly<Record<string, string>>,
  body: string | Uint8Array,
  request: SignedRequestLine,
  keys: (keyid: string) => KeyObject | undefined,
  carrier: ReceiptCarrierName,
): Promise<ContentSignatureFailure> {
  const digest = headers["content-digest"];
  if (!digest) return "no Content-Digest header";
  if (!contentDigestMatches(digest, body)) return "Content-Digest does not match the body";
  if (!headers["signature-input"] || !headers["signature"]) return "no Signature-Input / Signature headers";
  // Only the `receipt` signature is ours; it must cover every component (a narrower one proves less).
  const only = (h: string) => {
    const member = parseDictionary(h).get(SIGNATURE_LABEL);
    return member ? serializeDictionary(new Map([[SIGNATURE_LABEL, member]])) : undefined;
  };
  let input: string | undefined;
  let signature: string | undefined;
  try {
    input = only(headers["signature-input"]);
    signature = only(headers["signature"]);
  } catch {
    return "Signature-Input / Signature are not structured fields";
  }
  if (!input || !signature) return `no '${SIGNATURE_LABEL}' signature`;
  const response: SignedResponse = { status: 200, headers: { ...headers, "signature-input": input, signature } };
  try {
    const ok = await httpbis.verifyMessage(
      {
        keyLookup: async (params) => {
          const k = typeof params.keyid === "string" ? keys(params.keyid) : undefined;
          return k ? { id: params.keyid, algs: ["ed25519"], verify: async (data, sig) => cryptoVerify(null, data, k, sig) } : null;
        },
        requiredFields: coveredComponents(carrier).map((c) => c.replace(/;req$/, "")),
        requiredParams: ["created", "keyid"],
      },
      response,
      { method: request.method, url: request.targetUri, headers: {} },
    );
    return ok === true ? undefined : ok === null ? "the signature's keyid is not a published key" : "the HTTP message signature does not verify";
  } catch (err) {
    return `the HTTP message signature does not verify: ${(err as Error).message}`;
  }
}
