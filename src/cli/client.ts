import { parseArgs } from "node:util";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { siwxHeader, solanaSiwxHeader } from "../payments/credits/client.js";
import { SOLANA_MAINNET_CAIP2 } from "@x402/svm";
import { solanaScheme, solanaSigner } from "./solana-payer.js";

/*
 * The client commands of the `marketgate` CLI, for people and scripts:
 *
 *   marketgate call <path> [--data JSON] [--method M] [--credits [--session TOKEN]] [--max-usd N] [--network base|solana]
 *   marketgate quote <path> [--data JSON] [--method M]
 *
 * `call` pays with the key in X402_PRIVATE_KEY through the official x402 client (`@x402/fetch`) (with
 * `--network solana`: the key in SOLANA_PRIVATE_KEY, official `@x402/svm` scheme, over SOLANA_RPC_URL), or from
 * prepaid credits with a one-round-trip Sign-In-With-X proof (`--credits`). The answer goes to stdout (JSON
 * pretty-printed), what it cost to stderr, so that `marketgate call … | jq` works. The base URL is
 * MARKETGATE_URL (default http://localhost:4021).
 */

/** Where a command writes and what it reads (the process's by default; tests pass their own). */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Readonly<Record<string, string | undefined>>;
}

/** Default base URL: the sandbox's and the service's default port. */
export const DEFAULT_URL = "http://localhost:4021";

/** The process's own streams and environment. */
export const processIo: CliIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  env: process.env,
};

/** Usage of the client commands (shown by `--help` and on a usage error). */
export const CLIENT_USAGE = [
  "  call <path> [--data JSON] [--method M] [--credits [--session TOKEN]] [--max-usd N] [--network base|solana]",
  "          call an endpoint, paying with X402_PRIVATE_KEY (x402, or prepaid credits with --credits);",
  "          --network solana pays (or signs in) with SOLANA_PRIVATE_KEY, reading the chain over SOLANA_RPC_URL;",
  "          prints the answer on stdout and what it cost on stderr",
  "  quote <path> [--data JSON] [--method M]",
  "          what a request would cost (GET /api/v1/quote), without calling it",
  "  (base URL: MARKETGATE_URL, default http://localhost:4021)",
].join("\n");

/** A usage error: printed with the usage, exit code 2. */
class UsageError extends Error {}

/** The request a command describes: absolute URL, method and JSON body. */
interface Target {
  path: string;
  url: string;
  method: string;
  body?: string;
}

/** Reads `<path> [--data JSON] [--method M]` (a full URL works as the path too). */
function target(path: string | undefined, data: string | undefined, method: string | undefined, env: CliIo["env"]): Target {
  if (!path) throw new UsageError("a path is required, e.g. /api/v1/prices?symbols=btc");
  if (data !== undefined) {
    try {
      JSON.parse(data);
    } catch {
      throw new UsageError(`--data is not JSON: ${data}`);
    }
  }
  const base = (env.MARKETGATE_URL || DEFAULT_URL).replace(/\/+$/, "");
  const url = /^https?:\/\//.test(path) ? path : `${base}${path.startsWith("/") ? "" : "/"}${path}`;
  const u = new URL(url);
  return { path: u.pathname + u.search, url, method: (method ?? (data === undefined ? "GET" : "POST")).toUpperCase(), body: data };
}

/** The payer's key from X402_PRIVATE_KEY, or undefined when unset. */
function privateKey(env: CliIo["env"]): `0x${string}` | undefined {
  const key = env.X402_PRIVATE_KEY?.trim();
  if (!key) return undefined;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new UsageError("X402_PRIVATE_KEY must be a 0x-prefixed 32-byte hex private key");
  return key as `0x${string}`;
}

/** Prints a response body: JSON pretty-printed, anything else as is. */
async function printBody(res: Response, io: CliIo): Promise<unknown> {
  const text = await res.text();
  try {
    const json: unknown = JSON.parse(text);
    io.stdout(`${JSON.stringify(json, null, 2)}\n`);
    return json;
  } catch {
    io.stdout(text.endsWith("\n") || !text ? text : `${text}\n`);
    return text;
  }
}

/** USD amount of atomic USDC units (6 decimals). */
const usdc = (atomic: string | bigint) => formatUnits(BigInt(atomic), 6);

/** The price a 402 asks, from its `PAYMENT-REQUIRED` header (x402 v2), if readable. */
function askedPrice(res: Response): string | undefined {
  const header = res.headers.get("payment-required");
  if (!header) return undefined;
  try {
    const required = JSON.parse(Buffer.from(header, "base64").toString("utf8")) as { accepts?: Array<{ amount?: string; network?: string }> };
    const first = required.accepts?.[0];
    return first?.amount ? `${usdc(first.amount)} USDC on ${first.network ?? "?"}` : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The top-up the CLI suggests when credits are refused. `--max-usd` lifts the x402 client's default cap of
 * $1 a payment, which a $5 top-up exceeds.
 */
export const TOP_UP_COMMAND = `marketgate call /api/v1/credits --data '{"amount_usd":"5"}' --max-usd 5`;

/** `marketgate call`: calls an endpoint, paying when asked, and tells what it cost. */
async function call(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: "string", short: "d" },
      method: { type: "string", short: "X" },
      credits: { type: "boolean", default: false },
      session: { type: "string" },
      "max-usd": { type: "string" },
      network: { type: "string", default: "base" },
    },
  });
  if (values.network !== "base" && values.network !== "solana") throw new UsageError("--network is base or solana");
  const onSolana = values.network === "solana";
  const sol = onSolana ? await solanaSigner(io.env) : undefined;
  const t = target(positionals[0], values.data, values.method, io.env);
  if (values.session && !values.credits) throw new UsageError("--session goes with --credits");
  const maxUsd = values["max-usd"];
  if (maxUsd !== undefined && !/^\d+(\.\d+)?$/.test(maxUsd)) throw new UsageError("--max-usd takes a decimal amount, e.g. 5");
  const key = privateKey(io.env);
  const headers: Record<string, string> = t.body === undefined ? {} : { "content-type": "application/json" };
  const init = { method: t.method, headers, body: t.body };

  if (values.credits) {
    if (values.session) headers["X-Credits-Session"] = values.session;
    else if (onSolana && sol) headers["SIGN-IN-WITH-X"] = await solanaSiwxHeader(sol, t.url);
    else if (!onSolana && key) headers["SIGN-IN-WITH-X"] = await siwxHeader(key, t.url);
    else throw new UsageError(`--credits signs with ${onSolana ? "SOLANA_PRIVATE_KEY" : "X402_PRIVATE_KEY"} (or pass --session TOKEN): set it`);
    const res = await fetch(t.url, init);
    const body = await printBody(res, io);
    const remaining = res.headers.get("x-credits-remaining");
    const lines = [`${t.method} ${t.path} -> ${res.status}`];
    if (res.headers.get("x-cache") === "HIT") lines.push("cost: free (cache hit)");
    else if (remaining !== null) lines.push(`cost: paid from credits (Sign-In-With-X, no chain transaction); remaining ${remaining} USD`);
    else if (res.status === 402) lines.push(`not paid: ${errorOf(body) ?? "the credits were refused"}; top up with: ${TOP_UP_COMMAND}`);
    else lines.push(res.ok ? "cost: free" : "cost: nothing (errors are not charged)");
    const session = res.headers.get("x-credits-session");
    if (session) lines.push(`X-Credits-Session: ${session}  (reuse it with --credits --session <token> until it expires)`);
    io.stderr(`${lines.join("\n")}\n`);
    return res.ok ? 0 : 1;
  }

  let paid: { amount: string; network: string } | undefined;
  let doFetch: typeof fetch = fetch;
  const payer = onSolana ? sol : key;
  if (payer) {
    const client = sol
      ? new x402Client().register(SOLANA_MAINNET_CAIP2, solanaScheme(sol, io.env))
      : new x402Client().register("eip155:*", new ExactEvmScheme(privateKeyToAccount(key!)));
    // The official client refuses payments above $1 unless told otherwise (top-ups are larger).
    if (maxUsd !== undefined) client.setSpendControls({ maxAmountPerPayment: `$${maxUsd}` });
    client.onAfterPaymentCreation(async (ctx) => {
      paid = { amount: ctx.selectedRequirements.amount, network: ctx.selectedRequirements.network };
    });
    doFetch = wrapFetchWithPayment(fetch, client);
  }
  const res = await doFetch(t.url, init);
  const body = await printBody(res, io);
  const lines = [`${t.method} ${t.path} -> ${res.status}`];
  const receipt = res.headers.get("payment-response");
  if (res.headers.get("x-cache") === "HIT") lines.push("cost: free (cache hit)");
  else if (receipt && paid) {
    const settled = decodePaymentResponseHeader(receipt);
    lines.push(`cost: ${usdc(settled.amount ?? paid.amount)} USDC (x402 on ${settled.network}, tx ${settled.transaction})`);
  } else if (res.status === 402) {
    const asked = askedPrice(res);
    const reason = errorOf(body) ? ` (${errorOf(body)})` : "";
    lines.push(
      payer
        ? `not paid${reason}: the payment was refused`
        : `payment required${asked ? `: ${asked}` : ""}; set ${onSolana ? "SOLANA_PRIVATE_KEY" : "X402_PRIVATE_KEY"} to pay, or see: marketgate quote ${t.path}`,
    );
  } else lines.push(res.ok ? "cost: free" : "cost: nothing (errors are not charged)");
  io.stderr(`${lines.join("\n")}\n`);
  return res.ok ? 0 : 1;
}

/** The reason of a refusal: a 402's `error` string, or an error body's `error.message`. */
function errorOf(body: unknown): string | undefined {
  if (!body || typeof body !== "object" || !("error" in body)) return undefined;
  const e = body.error;
  if (typeof e === "string") return e;
  return e && typeof e === "object" && "message" in e && typeof e.message === "string" ? e.message : undefined;
}

/** `marketgate quote`: prints the quote of a request (`GET /api/v1/quote`), without calling it. */
async function quote(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { data: { type: "string", short: "d" }, method: { type: "string", short: "X" } } });
  const t = target(positionals[0], values.data, values.method, io.env);
  const q = new URLSearchParams({ path: t.path, method: t.method });
  if (t.body !== undefined) q.set("body", t.body);
  const res = await fetch(`${new URL(t.url).origin}/api/v1/quote?${q}`);
  const body = (await printBody(res, io)) as {
    tool?: string;
    price_usd?: string;
    charged?: boolean;
    reason?: string;
    x402?: { payment_required?: { accepts?: Array<{ amount: string; network: string; payTo: string }> } };
  };
  if (!res.ok) {
    io.stderr(`quote of ${t.method} ${t.path} -> ${res.status}\n`);
    return 1;
  }
  const accept = body.x402?.payment_required?.accepts?.[0];
  const where = accept ? ` (${usdc(accept.amount)} USDC on ${accept.network} to ${accept.payTo})` : "";
  io.stderr(
    body.charged
      ? `${t.method} ${t.path}: ${body.price_usd} USD, tool ${body.tool}${where}\n`
      : `${t.method} ${t.path}: free (${body.reason ?? "not charged"}), tool ${body.tool}\n`,
  );
  return 0;
}

/** Runs `call` or `quote` with the arguments after the command; resolves with the exit code. */
export async function clientMain(command: "call" | "quote", argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    return await (command === "call" ? call(argv, io) : quote(argv, io));
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`marketgate ${command}: ${(err as Error).message}\nusage:\n${CLIENT_USAGE}\n`);
      return 2;
    }
    io.stderr(`marketgate ${command}: ${(err as Error).message}\n`);
    return 1;
  }
}
