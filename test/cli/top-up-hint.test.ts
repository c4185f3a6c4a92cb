import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clientMain, TOP_UP_COMMAND, type CliIo } from "../../src/cli/client.js";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";

/** Runs a client command in process; what it printed and its exit code. */
async function cli(argv: string[], env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env };
  const code = await clientMain("call", argv, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

/** The arguments of a suggested `marketgate call ...` line (single-quoted words kept whole, quotes removed). */
function argsOf(command: string): string[] {
  const words = [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
  expect(words.slice(0, 2)).toEqual(["marketgate", "call"]);
  return words.slice(2);
}

/* The hint printed when credits are refused is a command that works as printed (above the x402 client's $1 cap). */
describe("marketgate call --credits without credits", () => {
  let stack: OfflineStack;
  beforeAll(async () => {
    stack = await startOfflineStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("suggests a top-up that, run as printed, pays 5 USDC; then --credits is served from the balance", async () => {
    const payer = stack.payers[5]!;
    const env = { MARKETGATE_URL: stack.url, X402_PRIVATE_KEY: payer.privateKey };
    const refused = await cli(["/futures/basis/ETH", "--credits"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`top up with: ${TOP_UP_COMMAND}`);
    const hint = /top up with: (.+)$/m.exec(refused.stderr)![1]!;

    // Without --max-usd the official client's default cap refuses the $5 payment before anything is signed.
    const before = await stack.balanceOf(payer.address);
    const capped = await cli(
      argsOf(hint).filter((a, i, all) => a !== "--max-usd" && all[i - 1] !== "--max-usd"),
      env,
    );
    expect(capped.code).not.toBe(0);
    expect(await stack.balanceOf(payer.address)).toBe(before);

    const top = await cli(argsOf(hint), env);
    expect(top.stderr).toMatch(/^POST \/api\/v1\/credits -> 200\ncost: 5 USDC \(x402 on eip155:8453, tx 0x[0-9a-f]{64}\)\n$/);
    expect(before - (await stack.balanceOf(payer.address))).toBe(5_000_000n);

    const served = await cli(["/futures/basis/ETH", "--credits"], env);
    expect(served.code).toBe(0);
    expect(served.stderr).toContain("cost: paid from credits (Sign-In-With-X, no chain transaction); remaining 4.98 USD");
  });
});
