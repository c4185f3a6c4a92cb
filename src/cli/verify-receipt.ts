import { readFile, stat } from "node:fs/promises";
import { parseArgs } from "node:util";
import { ed25519Jwk, type PublishedKey } from "../payments/receipts/keys.js";
import { fetchPublishedKeys, MAX_SAVED_BYTES, parseSavedAnswer, verifySavedAnswer, type TrustedKeys } from "../payments/receipts/verify.js";
import { processIo, type CliIo } from "./client.js";

/*
 * `marketgate verify-receipt <saved answer> [--key KEY] [--service URL] [--method M] [--url URL] [--json]`
 *
 * Checks one saved paid answer (docs/receipts.md): the receipt's signature (the offer-receipt extension's
 * own verifier) and that it signs a receipt (not one of the offers every 402 carries, signed with the same
 * key), the Content-Digest of the saved bytes and the HTTP Message Signature, against the keys the service
 * publishes in /.well-known/x402.json (of the receipt's origin, or --service), or one given key. A saved
 * answer is a raw HTTP response as `curl -si URL > file` writes it, the JSON of an MCP tools/call result,
 * or a receipt alone (a stream minute's `debit` event data: its receipt is all it has to check).
 * Exit 0: every check passed; 1: one failed; 2: usage or an unreadable file.
 */

/** Usage of `verify-receipt`. */
export const VERIFY_RECEIPT_USAGE = [
  "  verify-receipt <file> [--key KEY] [--service URL] [--method M] [--url URL] [--json]",
  "          check a saved paid answer (curl -i output; an MCP tools/call result or a stream debit event as JSON): receipt",
  "          signature, Content-Digest and HTTP message signature, against the keys of <service>/.well-known/x402.json",
  "          (default: the receipt's origin) or KEY (Ed25519 public key: base64url x, or a JWK as JSON)",
].join("\n");

/** A `--key` value: a base64url Ed25519 public key, or a JWK (bare, or a published key with `jwk`). */
function keyArg(value: string): TrustedKeys {
  const v = value.trim();
  if (!v.startsWith("{")) return [{ jwk: ed25519Jwk(v) }];
  const o = JSON.parse(v) as Partial<PublishedKey> & { x?: string };
  return [o.jwk ? { jwk: ed25519Jwk(String(o.jwk.x)), kid: o.kid, keyid: o.keyid } : { jwk: ed25519Jwk(String(o.x)) }];
}

/** Runs `verify-receipt` with the arguments after the command; resolves with the exit code. */
export async function verifyReceiptMain(argv: string[], io: CliIo = processIo, fetchFn: typeof fetch = fetch): Promise<number> {
  let file: string;
  let values: { key?: string; service?: string; method?: string; url?: string; json?: boolean };
  try {
    const parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { key: { type: "string" }, service: { type: "string" }, method: { type: "string" }, url: { type: "string" }, json: { type: "boolean" } },
    });
    values = parsed.values;
    if (parsed.positionals.length !== 1) throw new Error("one saved answer file is required");
    file = parsed.positionals[0]!;
  } catch (err) {
    io.stderr(`marketgate verify-receipt: ${(err as Error).message}\nusage:\n${VERIFY_RECEIPT_USAGE}\n`);
    return 2;
  }
  let answer;
  try {
    // Bounded before reading: a wrong file (a disk image, a log) is refused, not loaded.
    if ((await stat(file)).size > MAX_SAVED_BYTES) throw new Error(`over ${MAX_SAVED_BYTES} bytes: not a saved answer`);
    answer = parseSavedAnswer(await readFile(file));
  } catch (err) {
    io.stderr(`marketgate verify-receipt: ${file}: ${(err as Error).message}\n`);
    return 2;
  }
  const first = await verifySavedAnswer(answer, [], { method: values.method, targetUri: values.url });
  let keys: TrustedKeys;
  let keySource: string;
  try {
    if (values.key) {
      keys = keyArg(values.key);
      keySource = "the given key";
    } else {
      const base = values.service ?? (first.resourceUrl ? new URL(first.resourceUrl).origin : undefined);
      if (!base) throw new Error("the answer names no service (no readable receipt): pass --service URL or --key KEY");
      keys = await fetchPublishedKeys(base, fetchFn);
      keySource = `${base.replace(/\/+$/, "")}/.well-known/x402.json`;
    }
  } catch (err) {
    io.stderr(`marketgate verify-receipt: ${(err as Error).message}\n`);
    return 2;
  }
  const v = await verifySavedAnswer(answer, keys, { method: values.method, targetUri: values.url });
  if (values.json) {
    io.stdout(`${JSON.stringify({ ...v, keys: keySource }, null, 2)}\n`);
  } else {
    for (const c of v.checks) io.stdout(`${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}\n`);
    if (v.receipt)
      io.stdout(
        `receipt: payer ${v.receipt.payer || "(none)"} on ${v.receipt.network}, ${v.receipt.resourceUrl}, issued ${new Date(v.receipt.issuedAt * 1000).toISOString()}${v.receipt.transaction ? `, transaction ${v.receipt.transaction}` : ""}\n`,
      );
    io.stdout(`keys: ${keySource}\n${v.ok ? "verified" : "NOT verified"}\n`);
  }
  return v.ok ? 0 : 1;
}
