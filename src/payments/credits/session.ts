import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Header carrying a credits session token over HTTP (MCP: `_meta["marketgate/credits-session"]`). */
export const SESSION_HEADER = "X-Credits-Session";

/**
 * Short-lived credits sessions: a call whose SIWX proof verified gets a token (HMAC-SHA256 with the
 * service's session secret over wallet, origin and expiry) that later calls may present instead of a new
 * signature, saving the ~2 ms of ECDSA recovery that bounds a core at a few hundred proofs per second.
 * A token is a bearer credential for its wallet's credits on one origin until it expires (default 5
 * minutes); it carries no balance (every call still reserves from the ledger). Every replica must share
 * the secret (`CREDITS_SESSION_SECRET`) to accept each other's tokens.
 * Format: `v1.<wallet>.<expiry unix s>.<base64url HMAC>`.
 */
export class CreditSessions {
  private readonly secret: Buffer;

  /** @param secret at least 32 bytes; random per process when undefined (tokens then die with it). */
  constructor(
    secret: string | undefined,
    private readonly ttlSec = 300,
  ) {
    this.secret = secret ? Buffer.from(secret) : randomBytes(32);
  }

  private mac(wallet: string, origin: string, exp: number): string {
    return createHmac("sha256", this.secret).update(`v1|${wallet}|${origin}|${exp}`).digest("base64url");
  }

  /** A token for `wallet` (as the ledgers key it: EVM lower case, Solana base58) on `origin`, valid `ttlSec` from `nowMs`. */
  mint(wallet: string, origin: string, nowMs = Date.now()): string {
    const exp = Math.floor(nowMs / 1000) + this.ttlSec;
    return `v1.${wallet}.${exp}.${this.mac(wallet, origin, exp)}`;
  }

  /** The wallet of a valid, unexpired token for `origin`, or the refusal reason. Never throws. */
  verify(token: unknown, origin: string, nowMs = Date.now()): { wallet: string } | { refusal: string } {
    const m = typeof token === "string" ? /^v1\.(0x[0-9a-f]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(token.trim()) : null;
    if (!m) return { refusal: "invalid_credits_session: malformed token" };
    const [, wallet, expRaw, mac] = m as unknown as [string, string, string, string];
    const exp = Number(expRaw);
    const expected = Buffer.from(this.mac(wallet, origin, exp));
    if (expected.length !== mac.length || !timingSafeEqual(expected, Buffer.from(mac))) return { refusal: "invalid_credits_session: not issued by this service for this origin" };
    if (exp * 1000 <= nowMs) return { refusal: "invalid_credits_session: expired; sign a new SIGN-IN-WITH-X proof" };
    return { wallet };
  }
}
