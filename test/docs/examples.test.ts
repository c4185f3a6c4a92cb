import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The examples of `examples/`, run as a reader would run them, against the offline sandbox stack. */
describe("examples/ against the sandbox stack", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("examples/curl.sh shows the 402 with its requirements, the quote and the free endpoints", async () => {
    const { stdout } = await run("bash", ["examples/curl.sh"], { cwd: ROOT, env: { ...process.env, MARKETGATE_URL: stack.url }, timeout: 60_000 });
    expect(stdout).toMatch(/^HTTP\/1\.1 402 Payment Required$/m);
    expect(stdout).toMatch(/"scheme":"exact","network":"eip155:8453","amount":"5000"/);
    expect(stdout).toMatch(/^www-authenticate: Payment /im);
    expect(stdout).toContain('"price_usd":"0.005"');
    expect(stdout).toContain('"tool":"price_alert_create"');
    expect(stdout).toContain('{"status":"ok"}');
    expect(stdout).toContain('"simulated":true');
    expect(stdout).toContain("# marketgate");
    expect(stdout).toMatch(/GET \/docs: 200 text\/html/);
  });

  it("examples/pay.ts pays for one call with @x402/fetch and prints the answer and the transaction", async () => {
    const payer = stack.payers[8]!;
    const before = await stack.balanceOf(payer.address);
    const { stdout } = await run(process.execPath, ["--import", "tsx", "examples/pay.ts"], {
      cwd: ROOT,
      env: { ...process.env, MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey },
      timeout: 60_000,
    });
    expect(stdout).toContain("HTTP 200, X-Data-Source: simulated");
    expect(stdout).toContain('"success": true');
    expect(stdout).toMatch(new RegExp(`paid by ${payer.address} on eip155:8453: transaction 0x[0-9a-f]{64}`));
    expect(before - (await stack.balanceOf(payer.address))).toBe(5_000n);
  });
});
