import { Client, StreamableHTTPClientTransport, type JsonSchemaValidator, type jsonSchemaValidator, type Tool } from "@modelcontextprotocol/client";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { join } from "node:path";
import { X402McpClient, type ToolCaller } from "../client/mcp.js";
import { redactUrl, scrubUrls } from "../lib/redact.js";
import { microToUsd } from "../payments/credits/ledger.js";
import { VERSION } from "../version.js";
import { CONNECT_USAGE, parseConnectArgs, UsageError, type BridgeOptions } from "./args.js";
import { Budget } from "./budget.js";
import { AUTO_TOP_UP_MIN_CALLS, CallPayer, TOP_UP_TOOL } from "./payer.js";
import { createBridgeServer, type RemoteTools } from "./server.js";
import { SPEND_FILE, SpendStore } from "./spend-store.js";
import { loadWallet, WalletError, type Wallet } from "./wallet.js";

/*
 * `marketgate connect <url>`: a stdio MCP server for any MCP host that lists the tools of a remote paid MCP
 * server and pays for each call from the user's wallet, within a per-call and a per-day budget kept on disk.
 */

/** What `connect` reads and writes besides stdio's protocol (tests pass their own clock). */
export interface ConnectIo {
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
  now?: () => number;
}

const processIo: ConnectIo = { stderr: (t) => void process.stderr.write(t), env: process.env };

/** A JSON Schema "validator" that accepts everything (see where the upstream client is built). */
const PASS_THROUGH: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

/** The remote's tool list, fetched on first use and kept; a failure is asked again next time. */
function remoteTools(client: Client): RemoteTools & { names(): Promise<Set<string>> } {
  let listing: Promise<Tool[]> | undefined;
  const list = () => {
    listing ??= client.listTools().then(
      (r) => r.tools,
      (err: unknown) => {
        listing = undefined;
        throw err;
      },
    );
    return listing;
  };
  return { list, names: async () => new Set((await list()).map((t) => t.name)) };
}

/** The start-up lines on stderr: where, who pays, the limits in force (defaults included) and today's spend. */
function banner(opts: BridgeOptions, wallet: Wallet, budget: Budget): string {
  const day = budget.today();
  const pay =
    opts.pay === "x402"
      ? "pays each call with x402"
      : `pays from prepaid credits (custodial: held by the service) when it offers them, topping up ${microToUsd(opts.topUpMicro)} USD at a time${opts.pay === "auto" ? ` when that covers ${AUTO_TOP_UP_MIN_CALLS}+ calls, else each call with x402 (--pay x402: never top up)` : ""}`;
  return [
    `marketgate connect ${VERSION}: ${redactUrl(opts.url.href)} for wallet ${wallet.address} on ${wallet.chain}`,
    `budget: ${microToUsd(budget.limits.maxPerCallMicro)} USD per call (--max-usd-per-call), ${microToUsd(budget.limits.maxPerDayMicro)} USD per UTC day (--max-usd-per-day); spent today ${microToUsd(day.spentMicro)} USD (${join(opts.stateDir, SPEND_FILE)})`,
    `${pay}`,
  ]
    .map((l) => `marketgate connect: ${l}\n`)
    .join("");
}

/**
 * Runs `marketgate connect` with the arguments after the command: resolves with the exit code once the host
 * closes stdin (or on SIGTERM/SIGINT): 2 for a bad command line (one line on stderr), 1 when the wallet or
 * the remote cannot be used, 0 after serving.
 */
export async function connectMain(argv: string[], io: ConnectIo = processIo): Promise<number> {
  const say = (line: string) => io.stderr(`marketgate connect: ${scrubUrls(line)}\n`);
  let opts: BridgeOptions;
  try {
    opts = parseConnectArgs(argv, io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`marketgate connect: ${err.message}; ${CONNECT_USAGE}\n`);
    return 2;
  }
  let wallet: Wallet;
  try {
    wallet = await loadWallet(io.env, { keyFile: opts.keyFile, network: opts.network, maxPaymentMicro: Math.max(opts.maxPerCallMicro, opts.topUpMicro) });
  } catch (err) {
    say(err instanceof WalletError ? err.message : "the wallet could not be loaded");
    return 1;
  }
  const budget = new Budget(new SpendStore(opts.stateDir, io.now), { maxPerCallMicro: opts.maxPerCallMicro, maxPerDayMicro: opts.maxPerDayMicro });
  // No output-schema check here: the bridge forwards what it paid for, and the host checks what it receives
  // (a paid answer rejected here would be money spent for an error).
  const client = new Client({ name: "marketgate-connect", version: VERSION }, { jsonSchemaValidator: PASS_THROUGH });
  try {
    await client.connect(new StreamableHTTPClientTransport(opts.url));
  } catch (err) {
    say(`cannot connect to ${redactUrl(opts.url.href)}: ${(err as Error).message}`);
    return 1;
  }
  const tools = remoteTools(client);
  const payer = new CallPayer({
    upstream: new X402McpClient(client as ToolCaller, wallet.x402),
    wallet,
    budget,
    pay: opts.pay,
    topUpMicro: opts.topUpMicro,
    canTopUp: async () => (await tools.names()).has(TOP_UP_TOOL),
    log: say,
  });
  io.stderr(banner(opts, wallet, budget));
  const budgetNote = `Budget: at most ${microToUsd(opts.maxPerCallMicro)} USD per call and ${microToUsd(opts.maxPerDayMicro)} USD per UTC day; a call over it is refused with nothing charged.`;
  const handle = serveStdio(() => createBridgeServer({ tools, call: (p) => payer.call(p), info: { name: "marketgate-connect", version: VERSION }, budgetNote }), {
    onerror: (err) => say(`stdio: ${err.message}`),
  });
  await new Promise<void>((resolve) => {
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  await Promise.allSettled([handle.close(), client.close()]);
  return 0;
}
