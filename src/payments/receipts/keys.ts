import { createHash, createPrivateKey, createPublicKey, randomBytes, type KeyObject } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { base58 } from "@scure/base";
import { ConfigError } from "../../config.js";

/*
 * The service's receipt-signing key (Ed25519): it signs offers and receipts (JWS, alg EdDSA, per the
 * `offer-receipt` extension of @x402/extensions) and the HTTP Message Signatures of paid answers
 * (RFC 9421, alg ed25519). Its public half, and those of retired keys still in their grace period, are
 * published in `/.well-known/x402.json` under `receipts` (docs/receipts.md).
 */

/** An Ed25519 public key as a JWK (RFC 8037). */
export interface Ed25519Jwk {
  kty: "OKP";
  crv: "Ed25519";
  /** The 32-byte public key, base64url. */
  x: string;
}

/** One key as `/.well-known/x402.json` publishes it (`receipts.keys[]`). */
export interface PublishedKey {
  /** JWS `kid` of offers and receipts: the `did:key` of {@link jwk}. */
  kid: string;
  /** `keyid` of the HTTP Message Signature: the RFC 7638 thumbprint of {@link jwk}. */
  keyid: string;
  jwk: Ed25519Jwk;
  /** `current` signs now; `retired` signed before a rotation and is published for verification only. */
  status: "current" | "retired";
  /** Retired keys: the ISO date after which the key is no longer published. */
  published_until?: string;
}

/** What `RECEIPT_SIGNING_KEY`, `RECEIPT_PREVIOUS_KEYS` and `DATA_DIR` configure. */
export interface ReceiptKeySettings {
  /** 32-byte Ed25519 seed, hex (0x optional); undefined: generated once and kept in `<dataDir>/receipt-signing-key`. */
  signingKey?: string;
  /** Retired public keys published for verification: comma-separated `<x base64url>@<YYYY-MM-DD>`. */
  previousKeys?: string;
  /** `DATA_DIR` (`:memory:`: a generated key lives as long as the process). */
  dataDir: string;
}

/** DER prefix of a PKCS#8 Ed25519 private key (RFC 8410), before its 32-byte seed. */
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The file a generated key is kept in, under `DATA_DIR`. */
export const GENERATED_KEY_FILE = "receipt-signing-key";

/** The RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 JWK: its required members in lexicographic order. */
export function jwkThumbprint(jwk: Ed25519Jwk): string {
  return createHash("sha256")
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest("base64url");
}

/** Multicodec prefix of an Ed25519 public key (0xed, varint) in a `did:key`. */
const ED25519_MULTICODEC = Uint8Array.of(0xed, 0x01);

/**
 * The `did:key` of a public key (`did:key:z6Mk…`, base58btc multibase of the multicodec key): the JWS `kid`
 * of offers and receipts, short enough for a 402's header block, and resolved by the extension's
 * `extractPublicKeyFromKid`. It names the key, not who holds it: verifiers check it is a published key.
 */
export function didKey(jwk: Ed25519Jwk): string {
  return `did:key:z${base58.encode(new Uint8Array([...ED25519_MULTICODEC, ...Buffer.from(jwk.x, "base64url")]))}`;
}

/** The public JWK of an Ed25519 raw key (`x`, base64url). @throws Error when it is not 32 bytes. */
export function ed25519Jwk(x: string): Ed25519Jwk {
  if (!/^[A-Za-z0-9_-]{43}$/.test(x) || Buffer.from(x, "base64url").length !== 32) throw new Error(`not a base64url 32-byte Ed25519 public key: ${x}`);
  return { kty: "OKP", crv: "Ed25519", x };
}

/** The Node public key of an Ed25519 JWK. */
export function publicKeyOf(jwk: Ed25519Jwk): KeyObject {
  return createPublicKey({ key: { ...jwk }, format: "jwk" });
}

/** The signing key and the published keys. */
export class ReceiptKeys {
  /** The private key that signs. */
  readonly privateKey: KeyObject;
  /** The published form of the current key. */
  readonly current: PublishedKey;
  private readonly retired: readonly PublishedKey[];

  private constructor(seed: Buffer, retired: readonly PublishedKey[]) {
    this.privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: "der", type: "pkcs8" });
    const { x } = createPublicKey(this.privateKey).export({ format: "jwk" }) as { x: string };
    const jwk = ed25519Jwk(x);
    this.current = { kid: didKey(jwk), keyid: jwkThumbprint(jwk), jwk, status: "current" };
    this.retired = retired;
  }

  /**
   * The keys `settings` configure: `RECEIPT_SIGNING_KEY`, else the key kept under `DATA_DIR` (generated and
   * written there, mode 0600, on first use; per process with `DATA_DIR=:memory:`).
   * @throws ConfigError for a malformed key or previous-key entry.
   */
  static load(settings: ReceiptKeySettings): ReceiptKeys {
    return new ReceiptKeys(seedOf(settings), parsePrevious(settings.previousKeys));
  }

  /** A key from a 32-byte seed (tests, the bench). */
  static fromSeed(seed: Buffer, previous?: string): ReceiptKeys {
    return new ReceiptKeys(seed, parsePrevious(previous));
  }

  /** The keys to publish at `now` (ms): the current one, then retired keys whose grace period has not ended. */
  published(now = Date.now()): PublishedKey[] {
    const today = new Date(now).toISOString().slice(0, 10);
    return [this.current, ...this.retired.filter((k) => k.published_until! >= today)];
  }
}

/** The seed `settings` name (see {@link ReceiptKeys.load}). */
function seedOf(settings: ReceiptKeySettings): Buffer {
  if (settings.signingKey !== undefined) {
    const hex = settings.signingKey.trim().replace(/^0x/, "");
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(["RECEIPT_SIGNING_KEY: expected a 32-byte Ed25519 seed in hex (openssl rand -hex 32)"]);
    return Buffer.from(hex, "hex");
  }
  if (settings.dataDir === ":memory:") return randomBytes(32);
  const file = join(settings.dataDir, GENERATED_KEY_FILE);
  if (existsSync(file)) {
    const hex = readFileSync(file, "utf8").trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new ConfigError([`${file}: not a receipt signing key (64 hex characters); remove it to generate a new one`]);
    return Buffer.from(hex, "hex");
  }
  const seed = randomBytes(32);
  mkdirSync(settings.dataDir, { recursive: true });
  // `wx`: two processes starting on one DATA_DIR at once never overwrite each other's key.
  try {
    writeFileSync(file, `${seed.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return seedOf(settings);
    throw err;
  }
  chmodSync(file, 0o600);
  return seed;
}

/** `RECEIPT_PREVIOUS_KEYS` entries. @throws ConfigError for a malformed entry. */
function parsePrevious(list: string | undefined): PublishedKey[] {
  if (!list?.trim()) return [];
  return list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = /^([A-Za-z0-9_-]+)@(\d{4}-\d{2}-\d{2})$/.exec(entry);
      if (!m || Number.isNaN(Date.parse(m[2]!))) {
        throw new ConfigError([`RECEIPT_PREVIOUS_KEYS: expected <public key x, base64url>@<YYYY-MM-DD>, got '${entry}'`]);
      }
      let jwk: Ed25519Jwk;
      try {
        jwk = ed25519Jwk(m[1]!);
      } catch (err) {
        throw new ConfigError([`RECEIPT_PREVIOUS_KEYS: ${(err as Error).message}`]);
      }
      return { kid: didKey(jwk), keyid: jwkThumbprint(jwk), jwk, status: "retired" as const, published_until: m[2]! };
    });
}
