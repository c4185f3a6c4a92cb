import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientMain, type CliIo } from "../../src/cli/client.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runs a client command in process; what it printed and its exit code. */
async function cli(command: "call" | "quote", argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env };
  const code = await clientMain(command, argv, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("marketgate call / quote against the offline stack", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("quote prints the price of a request without calling it", async () => {
    const r = await cli("quote", ["/api/v1/market/bitcoin"], { MARKETGATE_URL: stack.url });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ tool: "cex_market", price_usd: "0.005", charged: true });
    expect(r.stderr).toBe(`GET /api/v1/market/bitcoin: 0.005 USD, tool cex_market (0.005 USDC on eip155:8453 to ${stack.operator.address})\n`);

    // A POST with its body: checked like the route (the body's webhook host must resolve; this machine is offline).
    const post = await cli("quote", ["/price-alert", "--data", '{"symbol":"ETH","direction":"above","target_price":5000,"webhook_url":"https://hooks.invalid/x"}'], {
      MARKETGATE_URL: stack.url,
    });
    expect(post.code).toBe(1);
    expect(JSON.parse(post.stdout)).toMatchObject({ error: { code: "BAD_REQUEST" } });
    expect(post.stderr).toBe("quote of POST /price-alert -> 400\n");
    const unchecked = await cli("quote", ["/price-alert", "--method", "POST"], { MARKETGATE_URL: stack.url });
    expect(JSON.parse(unchecked.stdout)).toMatchObject({ tool: "price_alert_create", method: "POST", price_usd: "0.04", input_checked: false });
  });

  it("call pays with X402_PRIVATE_KEY through @x402/fetch and prints the answer and its cost; the repeat is a free cache hit", async () => {
    const payer = stack.payers[3]!;
    const env = { MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey };
    const before = await stack.balanceOf(payer.address);
    const r = await cli("call", ["/funding-rate/BTC"], env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ symbol: expect.stringMatching(/BTC/) });
    expect(r.stderr).toMatch(/^GET \/funding-rate\/BTC -> 200\ncost: 0\.02 USDC \(x402 on eip155:8453, tx 0x[0-9a-f]{64}\)\n$/);
    expect(before - (await stack.balanceOf(payer.address))).toBe(20_000n);

    const again = await cli("call", ["/funding-rate/BTC"], env);
    expect(again.stderr).toContain("cost: free (cache hit)");
    expect(before - (await stack.balanceOf(payer.address))).toBe(20_000n);
  });

  it("call without a key shows the 402 and the price asked, and exits 1", async () => {
    const r = await cli("call", ["/api/v1/prices?symbols=btc"], { MARKETGATE_URL: stack.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("-> 402\npayment required: 0.005 USDC on eip155:8453; set X402_PRIVATE_KEY to pay");
  });

  it("call --credits pays from credits with a one-round-trip SIWX proof, then with the session token it returned", async () => {
    const payer = stack.payers[2]!;
    const env = { MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey };
    const top = await cli("call", ["/api/v1/credits", "--data", '{"amount_usd":"1"}'], env);
    expect(top.code).toBe(0);
    expect(top.stderr).toMatch(/^POST \/api\/v1\/credits -> 200\ncost: 1 USDC \(x402 on eip155:8453, tx 0x[0-9a-f]{64}\)\n$/);
    const before = await stack.balanceOf(payer.address);

    const r = await cli("call", ["/futures/basis/ETH", "--credits"], env);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("cost: paid from credits (Sign-In-With-X, no chain transaction); remaining 0.98 USD");
    const session = /X-Credits-Session: (\S+)/.exec(r.stderr)?.[1];
    expect(session).toBeDefined();

    const withSession = await cli("call", ["/futures/basis/BTC", "--credits", "--session", session!], { MARKETGATE_URL: stack.url });
    expect(withSession.code).toBe(0);
    expect(withSession.stderr).toContain("remaining 0.96 USD");
    expect(await stack.balanceOf(payer.address)).toBe(before);
  });

  it("bad usage exits 2 with the usage", async () => {
    const r = await cli("call", [], { MARKETGATE_URL: stack.url });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("a path is required");
    expect((await cli("call", ["/x", "--data", "{nope"], {})).code).toBe(2);
  });

  it("bin/marketgate.ts wires the commands", async () => {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["--import", "tsx", "bin/marketgate.ts", "quote", "/api/v1/prices?symbols=btc"], {
      cwd: ROOT,
      env: { ...process.env, MARKETGATE_URL: stack.url },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toMatchObject({ tool: "cex_prices", price_usd: "0.005" });
    expect(stderr).toContain("GET /api/v1/prices?symbols=btc: 0.005 USD");
  });
});
