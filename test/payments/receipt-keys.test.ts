import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractPublicKeyFromKid, verifyReceiptSignatureJWS } from "@x402/extensions/offer-receipt";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config.js";
import { ReceiptIssuer } from "../../src/payments/receipts/issuer.js";
import { GENERATED_KEY_FILE, ReceiptKeys } from "../../src/payments/receipts/keys.js";

const SEED = "11".repeat(32);

describe("receipt signing keys", () => {
  it("generates a key once under DATA_DIR (mode 0600) and signs with it again after a restart", () => {
    const dir = mkdtempSync(join(tmpdir(), "receipt-keys-"));
    const first = ReceiptKeys.load({ dataDir: dir });
    const file = join(dir, GENERATED_KEY_FILE);
    expect(readFileSync(file, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ReceiptKeys.load({ dataDir: dir }).current).toEqual(first.current);
  });

  it("RECEIPT_SIGNING_KEY names the key; a malformed one is a configuration error", () => {
    const a = ReceiptKeys.load({ signingKey: SEED, dataDir: ":memory:" });
    expect(ReceiptKeys.load({ signingKey: `0x${SEED}`, dataDir: ":memory:" }).current).toEqual(a.current);
    expect(() => ReceiptKeys.load({ signingKey: "abc", dataDir: ":memory:" })).toThrow(ConfigError);
  });

  it("the receipt's kid (did:key) resolves, with the extension's own resolver, to the published key", async () => {
    const keys = ReceiptKeys.load({ signingKey: SEED, dataDir: ":memory:" });
    const receipt = await new ReceiptIssuer(keys).receipt("https://api.example/x", { payer: "0xabc", network: "eip155:8453" });
    await extractPublicKeyFromKid(keys.current.kid);
    expect(await verifyReceiptSignatureJWS(receipt as never, { ...keys.current.jwk })).toMatchObject({ payer: "0xabc", resourceUrl: "https://api.example/x" });
  });

  it("rotation: a retired key is published, marked retired, until its date, then left out", () => {
    const old = ReceiptKeys.load({ signingKey: SEED, dataDir: ":memory:" }).current.jwk.x;
    const keys = ReceiptKeys.load({ signingKey: "22".repeat(32), previousKeys: `${old}@2030-01-31`, dataDir: ":memory:" });
    const during = keys.published(Date.parse("2030-01-31T23:00:00Z"));
    expect(during.map((k) => [k.status, k.jwk.x])).toEqual([
      ["current", keys.current.jwk.x],
      ["retired", old],
    ]);
    expect(during[1]!.published_until).toBe("2030-01-31");
    expect(keys.published(Date.parse("2030-02-01T00:00:00Z")).map((k) => k.status)).toEqual(["current"]);
    expect(() => ReceiptKeys.load({ previousKeys: `${old}`, dataDir: ":memory:" })).toThrow(/RECEIPT_PREVIOUS_KEYS/);
    expect(() => ReceiptKeys.load({ previousKeys: "short@2030-01-01", dataDir: ":memory:" })).toThrow(ConfigError);
  });
});
