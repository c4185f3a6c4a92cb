import { parseArgs } from "node:util";
import { formatUnits } from "viem";
import { createClient, SpendCapError, type RawResponse } from "../client/index.js";
import { solanaSigner } from "./solana-payer.js";

/*
 * The client commands of the `marketgate` CLI, for people and scripts:
 *
 *   marketgate call <path> [--data JSON] [--method M] [--credits [--session TOKEN]] [--max-usd N] [--network base|solana]
 *   marketgate quote <path> [--data JSON] [--method M]
 *
 * `call` goes through the typed client (`marketgate/client`, src/client: the official x402 client underneath): it
 * pays with the key in X402_PRIVATE_KEY (with `--network solana`: the key in SOLANA_PRIVATE_KEY, official
 * `@x402/svm` scheme, over SOLANA_RPC_URL) within a cap of $1 a payment (`--max-usd`), or from prepaid credits
 * with a one-round-trip Sign-In-With-X proof (`--credits`). The answer goes to stdout (JSON
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

/** Prints a response body: JSON pretty-printed, text as is. */
function printBody(body: unknown, io: CliIo): void {
  if (body === undefined) return;
  if (typeof body === "string") io.stdout(body.endsWith("\n") ? body : `${body}\n`);
  else io.stdout(`${JSON.stringify(body, null, 2)}\n`);
}

/** Reads a response body: parsed JSON, or the text when it is not JSON. */
async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** USD amount of atomic USDC units (6 decimals). */
const usdc = (atomic: string | bigint) => formatUnits(BigInt(atomic), 6);

/** The price a 402 asks, from its `PAYMENT-REQUIRED` header (x402 v2), if readable. */
function askedPrice(headers: Headers): string | undefined {
  const header = headers.get("payment-required");
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

/** `marketgate call`: calls an endpoint through the typed client (src/client), paying when asked, and tells what it cost. */
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
  if (values.credits && !values.session && !(onSolana ? sol : key))
    throw new UsageError(`--credits signs with ${onSolana ? "SOLANA_PRIVATE_KEY" : "X402_PRIVATE_KEY"} (or pass --session TOKEN): set it`);
  const payer = onSolana ? sol : key;
  // The client's default cap of $1 a payment, as the official x402 client's (a larger top-up needs --max-usd).
  const client = createClient({
    url: new URL(t.url).origin,
    pay: values.credits ? "credits" : "x402",
    network: onSolana ? "solana" : "base",
    wallet: { evmPrivateKey: key, solanaSecretKey: sol, solanaRpcUrl: io.env.SOLANA_RPC_URL?.trim() || undefined },
    maxUsdPerCall: maxUsd ?? "1",
    creditsSession: values.session,
  });
  let res: RawResponse;
  try {
    res = await client.request(t.method, t.path, { body: t.body });
  } catch (err) {
    if (err instanceof SpendCapError) {
      io.stderr(`${t.method} ${t.path}: not paid: ${err.message}; raise the cap with --max-usd ${err.details.priceUsd}\n`);
      return 1;
    }
    throw err;
  }
  printBody(res.body, io);
  const lines = [`${t.method} ${t.path} -> ${res.status}`];
  const { cost } = res;
  if (res.cacheHit) lines.push("cost: free (cache hit)");
  else if (cost.method === "credits") lines.push(`cost: paid from credits (Sign-In-With-X, no chain transaction); remaining ${cost.creditsRemainingUsd} USD`);
  else if (cost.method === "x402") lines.push(`cost: ${cost.usd} USDC (x402 on ${cost.network}, tx ${cost.transaction})`);
  else if (res.status === 402 && values.credits) lines.push(`not paid: ${errorOf(res.body) ?? "the credits were refused"}; top up with: ${TOP_UP_COMMAND}`);
  else if (res.status === 402) {
    const asked = askedPrice(res.headers);
    const reason = errorOf(res.body) ? ` (${errorOf(res.body)})` : "";
    lines.push(
      payer
        ? `not paid${reason}: the payment was refused`
        : `payment required${asked ? `: ${asked}` : ""}; set ${onSolana ? "SOLANA_PRIVATE_KEY" : "X402_PRIVATE_KEY"} to pay, or see: marketgate quote ${t.path}`,
    );
  } else lines.push(res.status < 400 ? "cost: free" : "cost: nothing (errors are not charged)");
  const session = values.credits ? res.headers.get("x-credits-session") : null;
  if (session) lines.push(`X-Credits-Session: ${session}  (reuse it with --credits --session <token> until it expires)`);
  io.stderr(`${lines.join("\n")}\n`);
  return res.status < 400 ? 0 : 1;
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
  const body = (await readBody(res)) as {
    tool?: string;
    price_usd?: string;
    charged?: boolean;
    reason?: string;
    x402?: { payment_required?: { accepts?: Array<{ amount: string; network: string; payTo: string }> } };
  };
  printBody(body, io);
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
