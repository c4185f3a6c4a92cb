import { randomBytes } from "node:crypto";
import type { PaymentRequired } from "@x402/core/types";
import {
  buildSIWxSchema,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  SIWxPayloadSchema,
  verifySIWxSignature,
  type EVMMessageVerifier,
  type SIWxPayload,
} from "@x402/extensions/sign-in-with-x";
import { createPublicClient, http } from "viem";
import type { CreditLedger } from "./ledger.js";
import { normWallet } from "./shared.js";

/** Header (and, lower-cased, the MCP `_meta` key `x402/sign-in-with-x`) carrying a SIWX proof. */
export const SIWX_HEADER = "SIGN-IN-WITH-X";

/** A proof that verified: the wallet (as the ledgers key it: EVM lower case, Solana base58) and what the request may use from it. */
export interface SiwxIdentity {
  wallet: string;
  /** EIP-4361 `Request ID`, when the client set one: the idempotency key of a credit-paid call. */
  requestId?: string;
}

/** Why a proof was refused: `invalid_siwx_<what>: <message>`, the `error` of the 402 that follows. */
export interface SiwxRefusal {
  refusal: string;
}

/** Options of {@link SiwxVerifier}. */
export interface SiwxVerifierOptions {
  /** CAIP-2 networks whose wallets may sign (the x402 payment networks: Base, and Solana when offered). */
  networks: readonly string[];
  /** Oldest acceptable `issuedAt` (default 300,000 ms, the SIWX default). */
  maxAgeMs?: number;
  /** Clock difference tolerated between client, replicas and us, both ways (default 5,000 ms). */
  skewMs?: number;
  /** Base RPC for ERC-1271 / ERC-6492 smart-wallet signatures; without it, EOA signatures only. */
  rpcUrl?: string;
}

const refuse = (reason: string, message: string): SiwxRefusal => ({ refusal: `invalid_siwx_${reason}: ${message}` });

/**
 * Verifies Sign-In-With-X proofs (CAIP-122 / EIP-4361, `@x402/extensions/sign-in-with-x`) for prepaid
 * credits: the proof is parsed with the official schema, bound to the service's origin (domain = host,
 * `uri` on the same origin), time-limited (`issuedAt` within `maxAgeMs`, `expirationTime` /
 * `notBefore` honoured, ±`skewMs` for clocks), signed by its `address` (official `verifySIWxSignature`:
 * ECDSA locally; smart wallets over `rpcUrl`) and its nonce is accepted once, atomically across replicas
 * (the credit ledger's nonce store). Nonces may be the client's own (one round trip) or the one of our
 * 402 challenge (what `wrapFetchWithSIWx` signs): either way a nonce is spent by its first valid use.
 *
 * Why not `validateSIWxMessage`: it allows no clock skew (a proof issued 1 s "in the future" by a client
 * or another replica fails) and checks nonces separately from recording them (concurrent replays pass).
 */
export class SiwxVerifier {
  private readonly maxAgeMs: number;
  private readonly skewMs: number;
  private readonly evmVerifier?: EVMMessageVerifier;

  constructor(
    private readonly nonces: Pick<CreditLedger, "claimNonce">,
    private readonly opts: SiwxVerifierOptions,
  ) {
    this.maxAgeMs = opts.maxAgeMs ?? 300_000;
    this.skewMs = opts.skewMs ?? 5_000;
    if (opts.rpcUrl) {
      const client = createPublicClient({ transport: http(opts.rpcUrl) });
      // `eoa` mode recovers ECDSA signers locally and calls the chain only for contract wallets.
      this.evmVerifier = (args) => client.verifyMessage({ ...args, mode: "eoa" } as Parameters<typeof client.verifyMessage>[0]);
    }
  }

  /**
   * Verifies a proof for `origin`: the service's public origin (`https://host[:port]`), which callers take
   * from configuration (`PublicOrigins.origin`), never from a request's Host.
   * @param proof the `SIGN-IN-WITH-X` header value (base64 JSON), or the decoded payload object (MCP).
   * @returns the identity, or the refusal reason. Never throws for bad input; rejects only when the nonce
   *   store is unreachable (`AppError UPSTREAM_UNAVAILABLE`).
   */
  async verify(proof: unknown, origin: string, nowMs = Date.now()): Promise<SiwxIdentity | SiwxRefusal> {
    let p: SIWxPayload;
    try {
      if (typeof proof === "string") p = parseSIWxHeader(proof.trim());
      else {
        const parsed = SIWxPayloadSchema.safeParse(proof);
        if (!parsed.success) return refuse("payload", parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join(", "));
        p = parsed.data;
      }
    } catch (err) {
      return refuse("payload", (err as Error).message.slice(0, 200));
    }
    const o = new URL(origin);
    if (p.domain !== o.host) return refuse("domain", `signed for ${p.domain.slice(0, 100)}, this service is ${o.host}`);
    let uriOrigin: string;
    try {
      uriOrigin = new URL(p.uri).origin;
    } catch {
      return refuse("uri", "uri is not a URL");
    }
    if (uriOrigin !== o.origin) return refuse("uri", `uri must be on ${o.origin}`);
    if (!this.opts.networks.includes(p.chainId)) return refuse("chain_id", `sign on ${this.opts.networks.join(" or ")}`);
    const issued = Date.parse(p.issuedAt);
    if (Number.isNaN(issued)) return refuse("issued_at", "issuedAt is not an ISO 8601 time");
    if (nowMs - issued > this.maxAgeMs) return refuse("expired", `issued more than ${this.maxAgeMs / 1000} s ago`);
    if (issued - nowMs > this.skewMs) return refuse("issued_at", "issuedAt is in the future");
    if (p.expirationTime !== undefined && !(Date.parse(p.expirationTime) > nowMs - this.skewMs)) return refuse("expired", "expirationTime has passed");
    if (p.notBefore !== undefined && !(Date.parse(p.notBefore) <= nowMs + this.skewMs)) return refuse("not_yet_valid", "notBefore is in the future");
    if (!/^[A-Za-z0-9]{8,128}$/.test(p.nonce)) return refuse("nonce", "nonce must be 8 to 128 letters and digits");
    if (p.requestId !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(p.requestId)) return refuse("request_id", "requestId must be 1 to 128 letters, digits, - or _");

    const verified = await verifySIWxSignature(p, this.evmVerifier ? { evmVerifier: this.evmVerifier } : undefined).catch((err: unknown) => ({
      isValid: false as const,
      invalidMessage: (err as Error).message,
    }));
    if (!verified.isValid)
      return refuse("signature", (("invalidMessage" in verified ? verified.invalidMessage : undefined) ?? "signature does not match the address").slice(0, 200));
    // Spent only by a valid proof, and atomically: of concurrent replays exactly one passes. Keyed by the
    // nonce alone: whatever origin or Host a request names, a nonce is spent once for the whole service.
    if (!(await this.nonces.claimNonce(p.nonce, this.maxAgeMs + 2 * this.skewMs, nowMs))) return refuse("nonce", "nonce already used; sign a new proof");
    return { wallet: normWallet(verified.payer), ...(p.requestId ? { requestId: p.requestId } : {}) };
  }
}

/** Narrows {@link SiwxVerifier.verify}'s result. */
export function isSiwxRefusal(r: SiwxIdentity | SiwxRefusal): r is SiwxRefusal {
  return "refusal" in r;
}

/**
 * The `sign-in-with-x` extension of a 402 (what the official server extension would enrich a
 * `declareSIWxExtension()` declaration into), bound to `origin` and the requested `resourceUrl`'s path: a fresh
 * nonce and `issuedAt`, and the payment networks as `supportedChains` (`wrapFetchWithSIWx` signs for
 * `accepts[0].network`). The optional fields are left out, since the challenge travels in every 402's header
 * block, which must stay small: `statement`, `resources` (which would repeat `uri`) and `expirationTime`, whose
 * default in the extension's spec is the 5 minutes from `issuedAt` that the verifier enforces (`maxAgeMs`). For
 * the same reason `uri` has no query (the resource URL beside it has it, and a long one would count twice):
 * clients and the verifier check only its origin.
 */
export function siwxChallenge(resourceUrl: string, origin: string, networks: readonly string[]): Record<string, unknown> {
  const o = new URL(origin);
  let uri: string;
  try {
    uri = `${o.origin}${new URL(resourceUrl).pathname}`;
  } catch {
    uri = o.origin;
  }
  return {
    info: {
      domain: o.host,
      uri,
      version: "1",
      nonce: randomBytes(16).toString("hex"),
      issuedAt: new Date().toISOString(),
    },
    supportedChains: networks.map((chainId) => ({ chainId, type: chainId.startsWith("solana:") ? "ed25519" : "eip191" })),
    schema: SIWX_PROOF_SCHEMA,
  };
}

/**
 * The `schema` of the challenge: the fields a proof must carry (the official `buildSIWxSchema()`'s `required`),
 * without its per-field types, which repeat what `info` shows and what the official parser checks anyway
 * (`parseSIWxHeader`); no client reads it (the official one reads `info` and `supportedChains`). It keeps the
 * x402 extension shape (`info` plus a JSON Schema) at a fifth of the size, in every 402's header block.
 */
const SIWX_PROOF_SCHEMA = { type: "object", required: buildSIWxSchema().required };

/**
 * `required` with a fresh SIWX challenge ({@link siwxChallenge}) in its extensions, offering its payment
 * networks: what every 402 of a service with credits carries, so that a client with credits signs in
 * instead of paying. The only place a challenge is added to a 402 (src/core/call-pipeline.ts calls it).
 * @param challengeUrl the URL whose path the challenge's `uri` names (HTTP: the resource; MCP: `<origin>/mcp`).
 */
export function withSiwxChallenge(required: PaymentRequired, origin: string, challengeUrl: string): PaymentRequired {
  const networks = [...new Set(required.accepts.map((a) => a.network))];
  return { ...required, extensions: { ...required.extensions, [SIGN_IN_WITH_X]: siwxChallenge(challengeUrl, origin, networks) } };
}
