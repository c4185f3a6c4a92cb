import { homedir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { usdToMicro } from "../payments/credits/ledger.js";

/** How the bridge pays: per call with x402 only, from prepaid credits it tops up itself, or credits when they fit (default). */
export type PayMode = "x402" | "credits" | "auto";

/** The options of `marketgate connect`. Money in micro-USD (USDC atomic units). */
export interface BridgeOptions {
  /** The remote MCP endpoint (Streamable HTTP), http(s). */
  url: URL;
  maxPerCallMicro: number;
  maxPerDayMicro: number;
  /** Amount of one credits top-up. */
  topUpMicro: number;
  pay: PayMode;
  /** Which of the two wallets pays when both keys are set. */
  network?: "base" | "solana";
  /** Folder of the spend file. */
  stateDir: string;
  /** File holding the private key (instead of X402_PRIVATE_KEY / SOLANA_PRIVATE_KEY). */
  keyFile?: string;
}

/** Small defaults, printed at start: a mistake costs cents, not dollars. */
export const DEFAULTS = { maxUsdPerCall: "0.10", maxUsdPerDay: "1.00", topUpUsd: "0.50" } as const;

/** One-line usage of `marketgate connect`. */
export const CONNECT_USAGE =
  "usage: marketgate connect <https://host/mcp> [--max-usd-per-call 0.10] [--max-usd-per-day 1.00] [--pay auto|x402|credits] [--top-up-usd 0.50] [--network base|solana] [--key-file FILE] [--state-dir DIR]";

/** A bad command line: printed on one line with the usage, exit code 2. */
export class UsageError extends Error {}

/**
 * Default state folder: `$XDG_STATE_HOME/marketgate`, else `~/.local/state/marketgate` (the XDG default);
 * on Windows `%LOCALAPPDATA%\marketgate`.
 */
export function defaultStateDir(env: Readonly<Record<string, string | undefined>>, home = homedir()): string {
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, "marketgate");
  if (process.platform === "win32" && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, "marketgate");
  return join(home, ".local", "state", "marketgate");
}

/** A positive USD amount flag in micro-USD. @throws UsageError naming the flag. */
function usd(flag: string, value: string): number {
  let micro: number;
  try {
    micro = usdToMicro(value);
  } catch {
    throw new UsageError(`--${flag} takes a USD amount like 0.25, got ${JSON.stringify(value)}`);
  }
  if (micro <= 0) throw new UsageError(`--${flag} must be above 0`);
  return micro;
}

/**
 * Reads `connect`'s arguments (after the command).
 * @throws UsageError for an unknown flag, a missing or non-http(s) URL, a bad amount or choice.
 */
export function parseConnectArgs(argv: string[], env: Readonly<Record<string, string | undefined>>): BridgeOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    // node:util's messages may span lines; a usage error is one line.
    throw new UsageError((err as Error).message.replace(/\s*\n\s*/g, " "));
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(positionals.length ? "one URL only" : "the remote MCP URL is required");
  let url: URL;
  try {
    url = new URL(positionals[0]!);
  } catch {
    throw new UsageError(`not a URL: ${JSON.stringify(positionals[0])}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError(`the URL must be http(s), got ${url.protocol}`);
  const pay = values.pay;
  if (pay !== "auto" && pay !== "x402" && pay !== "credits") throw new UsageError("--pay is auto, x402 or credits");
  const network = values.network;
  if (network !== undefined && network !== "base" && network !== "solana") throw new UsageError("--network is base or solana");
  const maxPerCallMicro = usd("max-usd-per-call", values["max-usd-per-call"]);
  const maxPerDayMicro = usd("max-usd-per-day", values["max-usd-per-day"]);
  return {
    url,
    maxPerCallMicro,
    maxPerDayMicro,
    topUpMicro: usd("top-up-usd", values["top-up-usd"]),
    pay,
    network,
    stateDir: values["state-dir"] ?? defaultStateDir(env),
    keyFile: values["key-file"],
  };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      "max-usd-per-call": { type: "string", default: DEFAULTS.maxUsdPerCall },
      "max-usd-per-day": { type: "string", default: DEFAULTS.maxUsdPerDay },
      "top-up-usd": { type: "string", default: DEFAULTS.topUpUsd },
      pay: { type: "string", default: "auto" },
      network: { type: "string" },
      "state-dir": { type: "string" },
      "key-file": { type: "string" },
    },
  });
}
