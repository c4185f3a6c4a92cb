import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/log.js";
import { redactUrl, registerSecret, registerSecretUrl, scrubSecrets, scrubUrls } from "../../src/lib/redact.js";

/** A logger at `info` writing into memory; `text()` is everything logged so far. */
function memoryLogger() {
  const chunks: string[] = [];
  const dest = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString("utf8"));
      cb();
    },
  });
  return { log: createLogger(dest, "info"), text: () => chunks.join("") };
}

/** An error shaped like viem's HttpRequestError: the RPC URL in message, shortMessage, details, metaMessages and url. */
function viemLikeError(url: string): Error {
  const meta = [`URL: ${url}`, 'Request body: {"method":"eth_chainId"}'];
  const err = Object.assign(new Error(["HTTP request failed.", "", "Status: 401", ...meta, "", "Version: viem@2.57.1"].join("\n")), {
    name: "HttpRequestError",
    shortMessage: "HTTP request failed.",
    details: `fetch to ${url} failed`,
    metaMessages: meta,
    url,
    status: 401,
  });
  return Object.assign(new Error(`self facilitator: settle failed: ${err.message}`, { cause: err }), { url });
}

describe("redactUrl", () => {
  it.each([
    ["https://base-mainnet.example/v2/SECRETKEY", "https://base-mainnet.example/…"],
    ["https://user:pa55word@rpc.example:8545/", "https://[redacted]@rpc.example:8545"],
    ["https://token@rpc.example", "https://[redacted]@rpc.example"],
    ["https://api.example.com/data?apikey=SECRET123", "https://api.example.com/…"],
    ["https://api.example.com?apikey=SECRET123", "https://api.example.com/…"],
    ["redis://:hunter2hunter2@redis.internal:6379", "redis://[redacted]@redis.internal:6379"],
    ["rediss://default:pw@redis.example:6380/0", "rediss://[redacted]@redis.example:6380/…"],
    ["https://api.binance.com", "https://api.binance.com"],
    ["https://api.binance.com/", "https://api.binance.com"],
    ["wss://fstream.binance.com/ws?listenKey=abc", "wss://fstream.binance.com/…"],
    ["http://[::1]:4021/x#frag", "http://[::1]:4021/…"],
    ["not a url", "[redacted]"],
    ["mailto:someone@example.com", "[redacted]"],
  ])("%s -> %s", (raw, shown) => {
    expect(redactUrl(raw)).toBe(shown);
    expect(shown).not.toMatch(/SECRET|pa55word|hunter2|token|\bpw\b|abc/);
  });
});

describe("scrubSecrets", () => {
  it("replaces a registered URL, its normalised form and its credential pieces; leaves other text alone", () => {
    registerSecretUrl("https://Rpc.Example.org/v3/KEY-0123456789?x=1");
    registerSecretUrl("redis://:s3cr3t-pass@cache.example:6379");
    registerSecret("cg-api-key-000111222");
    expect(scrubSecrets("call https://Rpc.Example.org/v3/KEY-0123456789?x=1 failed")).toBe("call https://rpc.example.org/… failed");
    expect(scrubSecrets("fetch https://rpc.example.org/v3/KEY-0123456789?x=1")).toBe("fetch https://rpc.example.org/…");
    expect(scrubSecrets("POST /v3/KEY-0123456789?x=1 -> 401")).toBe("POST /… -> 401");
    expect(scrubSecrets("WRONGPASS s3cr3t-pass")).toBe("WRONGPASS [redacted]");
    expect(scrubSecrets("x-cg-pro-api-key: cg-api-key-000111222")).toBe("x-cg-pro-api-key: [redacted]");
    expect(scrubSecrets("nothing to see at https://example.com/a/b")).toBe("nothing to see at https://example.com/a/b");
  });
});

describe("scrubUrls", () => {
  it("redacts every network URL in error text, keeps file URLs of stack frames", () => {
    expect(scrubUrls("GET https://u:p@x.example/k?apikey=1 (401)\n    at f (file:///app/dist/x.js:1:2)")).toBe(
      "GET https://[redacted]@x.example/… (401)\n    at f (file:///app/dist/x.js:1:2)",
    );
  });
});

describe("logger", () => {
  it("never writes the key of an RPC URL embedded in a viem-like error, registered or not", () => {
    const { log, text } = memoryLogger();
    log.warn({ err: viemLikeError("https://base-mainnet.example/v2/SECRETKEY") }, "settlement outcome unknown; reconciling");
    log.error({ err: "fetch https://unregistered.example/v2/OTHERSECRET failed" }, "as a string");
    const out = text();
    expect(out).toContain("settlement outcome unknown");
    expect(out).toContain("https://base-mainnet.example/…");
    expect(out).toContain("Status: 401");
    expect(out).not.toContain("SECRETKEY");
    expect(out).not.toContain("OTHERSECRET");
  });

  it("scrubs registered secrets from messages and any field, and shows URL fields without path", () => {
    registerSecretUrl("https://facilitator.example/x402/FACILITATORKEY");
    const { log, text } = memoryLogger();
    log.info(`cannot reach https://facilitator.example/x402/FACILITATORKEY`);
    log.info({ facilitator: { name: "primary", detail: "/x402/FACILITATORKEY refused" } }, "facilitator failed");
    log.info({ rpcUrl: "https://rpc.example/PATHSECRET", cfg: { url: "https://rpc.example/?apikey=QUERYSECRET" } }, "configured");
    log.info({ req: { headers: { authorization: "Bearer TOKENSECRET" } } }, "request");
    const out = text();
    expect(out).toContain("https://facilitator.example/…");
    expect(out).toContain("https://rpc.example/…");
    for (const s of ["FACILITATORKEY", "PATHSECRET", "QUERYSECRET", "TOKENSECRET"]) expect(out).not.toContain(s);
  });
});
