import type { KeyObject } from "node:crypto";
import {
  extractJWSHeader,
  extractReceiptFromResponse,
  extractReceiptPayload,
  verifyReceiptSignatureJWS,
  type ReceiptPayload,
  type SignedReceipt,
} from "@x402/extensions/offer-receipt";
import { decodeBase64Json } from "../v1-compat.js";
import { RECEIPT_CARRIERS, RECEIPT_HEADER, signedCarrier, verifyContent, type ReceiptCarrierName } from "./content-signature.js";
import { ed25519Jwk, jwkThumbprint, publicKeyOf, type Ed25519Jwk, type PublishedKey } from "./keys.js";
import { receiptPayloadOf } from "./receipt-payload.js";

/*
 * Checks one saved paid answer (the `marketgate verify-receipt` command, docs/receipts.md): the receipt's
 * JWS with the extension's own `verifyReceiptSignatureJWS`, the `Content-Digest` of the bytes received, and
 * the HTTP Message Signature over the request line, the digest and the receipt header, each against keys
 * the service publishes (`/.well-known/x402.json` → `receipts.keys`) or one given key.
 */

/** A saved answer: its headers (lower-case names) and its exact bytes. */
export interface SavedAnswer {
  /**
   * `http`: a raw HTTP response (`curl -i`); `mcp`: a `tools/call` result (or its JSON-RPC response);
   * `receipt`: a receipt alone (a stream minute's `debit` event, or a signed receipt's JSON), with no content
   * to check (its receipt is in `headers` as `X402-Receipt` would carry it; `body` is empty).
   */
  kind: "http" | "mcp" | "receipt";
  headers: Record<string, string>;
  body: Buffer;
  /** MCP: the signed request line stored beside the receipt. */
  request?: { method: string; targetUri: string };
}

/** Bytes of a saved file, at most (a paid answer is far smaller; a bound keeps a wrong file from filling memory). */
export const MAX_SAVED_BYTES = 32 * 1024 * 1024;

/** `_meta` key of the receipt on an MCP result (mcp/catalog.ts `RECEIPT_META`; repeated here so that the CLI does not load the MCP server). */
const MCP_RECEIPT_META = "marketgate/receipt";

/**
 * Reads a saved answer: a raw HTTP/1.x response as `curl -i` (or `curl -si`) writes it, with interim
 * blocks (`100 Continue`) skipped, the JSON of an MCP `tools/call` result (bare, or in its JSON-RPC
 * response) carrying `_meta["marketgate/receipt"]`, or a receipt alone: the `data` of a stream minute's
 * `debit` event (`{"minute":1,"receipt":{...},...}`) or a signed receipt's JSON (`{"format":"jws","signature":"..."}`).
 * @throws Error when it is none of these.
 */
export function parseSavedAnswer(raw: Buffer): SavedAnswer {
  if (raw.length > MAX_SAVED_BYTES) throw new Error(`the file is over ${MAX_SAVED_BYTES} bytes: not a saved answer`);
  if (raw.subarray(0, 5).toString("latin1") === "HTTP/") return parseHttp(raw);
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new Error("not a saved answer: expected a raw HTTP response (curl -i), the JSON of an MCP tools/call result, or a receipt's JSON");
  }
  return parseReceipt(json) ?? parseMcp(json);
}

/** A receipt alone (see {@link parseSavedAnswer}), or undefined when `json` is not one. */
function parseReceipt(json: unknown): SavedAnswer | undefined {
  const o = json as { receipt?: unknown; format?: unknown; signature?: unknown } | null;
  const receipt = o && typeof o === "object" && o.receipt && typeof o.receipt === "object" ? o.receipt : o;
  const r = receipt as { format?: unknown; signature?: unknown } | null;
  if (!r || typeof r !== "object" || typeof r.format !== "string" || typeof r.signature !== "string") return undefined;
  return { kind: "receipt", headers: { [RECEIPT_HEADER]: Buffer.from(JSON.stringify(receipt)).toString("base64") }, body: Buffer.alloc(0) };
}

function parseHttp(raw: Buffer): SavedAnswer {
  let at = 0;
  for (;;) {
    const crlf = raw.indexOf("\r\n\r\n", at);
    const lf = raw.indexOf("\n\n", at);
    const [end, sep] = crlf >= 0 && (lf < 0 || crlf < lf) ? [crlf, 4] : [lf, 2];
    if (end < 0) throw new Error("no end of the header block (a blank line) in the saved response");
    const lines = raw.subarray(at, end).toString("latin1").split(/\r?\n/);
    const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(lines[0]!)?.[1]);
    if (!status) throw new Error(`not an HTTP status line: ${lines[0]}`);
    at = end + sep;
    // Interim answers (1xx) precede the final one.
    if (status >= 100 && status < 200 && raw.subarray(at, at + 5).toString("latin1") === "HTTP/") continue;
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(":");
      if (i <= 0) continue;
      const name = line.slice(0, i).trim().toLowerCase();
      const value = line.slice(i + 1).trim();
      headers[name] = headers[name] !== undefined ? `${headers[name]}, ${value}` : value;
    }
    if (headers["transfer-encoding"]?.toLowerCase().includes("chunked")) throw new Error("a chunked body as saved (curl -i decodes it; save with curl -i, not --raw)");
    return { kind: "http", headers, body: raw.subarray(at) };
  }
}

function parseMcp(json: unknown): SavedAnswer {
  const o = json as { result?: unknown };
  const result = (o && typeof o === "object" && "result" in o ? o.result : json) as { content?: Array<{ type?: string; text?: unknown }>; _meta?: Record<string, unknown> };
  const meta = result?._meta?.[MCP_RECEIPT_META] as
    { receipt?: unknown; content_digest?: unknown; signature_input?: unknown; signature?: unknown; method?: unknown; target_uri?: unknown } | undefined;
  const text = result?.content?.[0]?.text;
  if (!meta || typeof text !== "string") throw new Error(`no _meta["${MCP_RECEIPT_META}"] and text content in the saved MCP result`);
  const str = (v: unknown) => (typeof v === "string" ? v : "");
  const headers: Record<string, string> = {
    [RECEIPT_HEADER]: Buffer.from(JSON.stringify(meta.receipt)).toString("base64"),
    "content-digest": str(meta.content_digest),
    "signature-input": str(meta.signature_input),
    signature: str(meta.signature),
  };
  return { kind: "mcp", headers, body: Buffer.from(text, "utf8"), request: { method: str(meta.method), targetUri: str(meta.target_uri) } };
}

/** One check of a verification, and why it failed. */
export interface Check {
  name: "receipt_signature" | "content_digest_and_signature" | "receipt_header_match";
  ok: boolean;
  detail: string;
}

/** What {@link verifySavedAnswer} found. */
export interface Verification {
  ok: boolean;
  checks: Check[];
  /** The receipt's payload (unverified when its signature check failed); undefined when it is not a receipt's. */
  receipt?: ReceiptPayload;
  /** The `resourceUrl` the signed artifact names, receipt or not, read without verifying it: where its service's keys are. */
  resourceUrl?: string;
  /** The request line the content signature verified for. */
  request?: { method: string; targetUri: string };
}

/** Keys a verification accepts: published keys (with `kid` and `keyid`), or bare public JWKs. */
export type TrustedKeys = ReadonlyArray<Pick<PublishedKey, "jwk"> & Partial<Pick<PublishedKey, "kid" | "keyid">>>;

/** The signed receipt in one header of a saved answer: `X402-Receipt` as base64 JSON, a settlement header through the extension's own reader. */
function receiptIn(a: SavedAnswer, name: ReceiptCarrierName): SignedReceipt | undefined {
  const value = a.headers[name];
  if (!value) return undefined;
  if (name === RECEIPT_HEADER) return decodeBase64Json(value) as SignedReceipt | undefined;
  return extractReceiptFromResponse(new Response(null, { headers: { [name]: value } }));
}

/**
 * The signed receipt a saved answer carries and the header it is read from: the one its content signature
 * covers, else the first of `RECEIPT_CARRIERS` present (answers of earlier versions carried it twice,
 * `X402-Receipt` and `PAYMENT-RESPONSE`, their signature covering the former). `mismatch` when another header
 * carries a different receipt.
 */
function receiptOf(a: SavedAnswer): { receipt?: SignedReceipt; carrier?: ReceiptCarrierName; mismatch?: string } {
  const signed = signedCarrier(a.headers["signature-input"]);
  const carrier = signed ?? RECEIPT_CARRIERS.find((name) => receiptIn(a, name));
  const receipt = carrier && receiptIn(a, carrier);
  if (!carrier || !receipt) return { carrier };
  const other = RECEIPT_CARRIERS.find((name) => name !== carrier && (receiptIn(a, name)?.signature ?? receipt.signature) !== receipt.signature);
  return { receipt, carrier, mismatch: other ? `${other} and ${carrier} carry different receipts` : undefined };
}

/**
 * Verifies a saved answer against `keys`. `method` / `targetUri`: the request the answer was for (default:
 * MCP the stored ones; HTTP the receipt's `resourceUrl`, and GET, POST then DELETE until one verifies).
 */
export async function verifySavedAnswer(a: SavedAnswer, keys: TrustedKeys, opts: { method?: string; targetUri?: string } = {}): Promise<Verification> {
  const checks: Check[] = [];
  const { receipt, carrier, mismatch } = receiptOf(a);
  if (!receipt || !carrier) {
    const where = carrier ? `in ${carrier}, the header the content signature covers` : `(${RECEIPT_CARRIERS.join(", ")})`;
    return { ok: false, checks: [{ name: "receipt_signature", ok: false, detail: `no signed receipt ${where}` }] };
  }
  if (mismatch) checks.push({ name: "receipt_header_match", ok: false, detail: mismatch });
  // Keys that are not Ed25519 public keys (a malformed document or --key) verify nothing.
  const jwks = keys.flatMap((k) => {
    try {
      return [{ ...k, jwk: ed25519Jwk(String(k.jwk?.x)) }];
    } catch {
      return [];
    }
  });
  let payload: ReceiptPayload | undefined;
  try {
    if (receipt.format !== "jws") throw new Error(`format ${String(receipt.format)} is not the service's (jws)`);
    const kid = extractJWSHeader(receipt.signature).kid;
    // Only trusted keys: a did:key kid verifies against itself, which proves nothing about who signed.
    const candidates = jwks.filter((k) => k.kid === undefined || k.kid === kid);
    if (candidates.length === 0) throw new Error(`kid ${kid} is not a published key`);
    const signed = await firstVerifying(
      candidates.map((k) => k.jwk),
      (jwk) => verifyReceiptSignatureJWS(receipt, { ...jwk }),
    );
    // The same key signs offers: what it signed must be a receipt.
    payload = receiptPayloadOf(signed);
    checks.push({ name: "receipt_signature", ok: true, detail: `JWS verifies under ${kid}; it signs a receipt, not an offer` });
  } catch (err) {
    checks.push({ name: "receipt_signature", ok: false, detail: (err as Error).message });
  }
  const signedPayload = unverifiedPayload(receipt);
  const shown = payload ?? asReceipt(signedPayload);
  const resourceUrl = typeof signedPayload?.resourceUrl === "string" ? signedPayload.resourceUrl : undefined;
  // A receipt alone (a stream minute) signs no content: its receipt is all there is to check.
  if (a.kind === "receipt") return { ok: checks.every((c) => c.ok), checks, receipt: shown, resourceUrl };
  const targetUri = opts.targetUri ?? a.request?.targetUri ?? resourceUrl;
  let request: Verification["request"];
  if (!targetUri) {
    checks.push({ name: "content_digest_and_signature", ok: false, detail: "no target URI: pass --url" });
  } else {
    const byKeyid = new Map<string, KeyObject>();
    for (const k of jwks) byKeyid.set(k.keyid ?? jwkThumbprint(k.jwk), publicKeyOf(k.jwk));
    const methods = opts.method ? [opts.method.toUpperCase()] : a.request?.method ? [a.request.method] : ["GET", "POST", "DELETE"];
    let failure: string | undefined = "not checked";
    for (const method of methods) {
      failure = await verifyContent(a.headers, a.body, { method, targetUri }, (id) => byKeyid.get(id), carrier);
      if (!failure) {
        request = { method, targetUri };
        break;
      }
    }
    checks.push(
      failure
        ? { name: "content_digest_and_signature", ok: false, detail: `${failure} (for ${methods.join("/")} ${targetUri})` }
        : { name: "content_digest_and_signature", ok: true, detail: `Content-Digest matches the ${a.body.length} bytes; signature verifies for ${request!.method} ${targetUri}` },
    );
  }
  return { ok: checks.every((c) => c.ok), checks, receipt: shown, resourceUrl, request };
}

async function firstVerifying<T>(jwks: Ed25519Jwk[], verify: (jwk: Ed25519Jwk) => Promise<T>): Promise<T> {
  let last: unknown = new Error("no key to verify with");
  for (const jwk of jwks) {
    try {
      return await verify(jwk);
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

/** The payload of a signed artifact, read without verifying it; undefined when unreadable. */
function unverifiedPayload(r: SignedReceipt): Record<string, unknown> | undefined {
  try {
    const p: unknown = extractReceiptPayload(r);
    return p && typeof p === "object" ? (p as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `payload` when it is a receipt's (see `receiptPayloadOf`), else undefined. */
function asReceipt(payload: unknown): ReceiptPayload | undefined {
  try {
    return receiptPayloadOf(payload);
  } catch {
    return undefined;
  }
}

/**
 * The receipt keys `base` publishes (`<base>/.well-known/x402.json` → `receipts.keys`).
 * @throws Error when the document cannot be fetched or lists no keys.
 */
export async function fetchPublishedKeys(base: string, fetchFn: typeof fetch = fetch): Promise<PublishedKey[]> {
  const url = `${base.replace(/\/+$/, "")}/.well-known/x402.json`;
  const res = await fetchFn(url, { headers: { accept: "application/json" }, signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  const doc = (await res.json()) as { receipts?: { keys?: PublishedKey[] } };
  const keys = doc.receipts?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${url} publishes no receipt keys (receipts.keys)`);
  return keys;
}
