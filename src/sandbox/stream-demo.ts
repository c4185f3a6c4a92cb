import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { liquidationStream } from "../../tools/live/liquidations.js";
import { siwxHeader } from "../payments/credits/client.js";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";
import type { RunningSimulator } from "../sim/server.js";
import { PRE_SUBSCRIBED } from "../ingestion/manager.js";
import { VENUES } from "../venues/index.js";

/** Length of a billed stream-minute in the sandbox demo (`LIVE_STREAM_MINUTE_MS`), so a few minutes are billed in seconds. */
export const DEMO_STREAM_MINUTE_MS = 2000;

/** One `debit` event of a stream. */
export interface StreamDebit {
  topic: string;
  minute: number;
  price_usd: string;
  remaining_usd: string;
}

/** What the stream walk-through did, for tests. */
export interface StreamDemoResult {
  /** Status of `GET /stream/liquidations` (200 once the first minute is paid). */
  status: number;
  /** Whether the answer carried an `X-Credits-Session` token to reconnect with. */
  sessionToken: boolean;
  /** The `data` of every `liquidation` event received. */
  liquidations: Array<Record<string, unknown>>;
  debits: StreamDebit[];
  /** `payment_required` or `dropped` when the server ended the stream; undefined when the client closed it. */
  endedBy?: string;
  pricePerMinuteUsd: string;
  /** When the stream was requested (epoch ms) and how long it was open, ms. */
  openedAt: number;
  openMs: number;
  /** `GET /api/v1/credits` after the top-up and before the stream, and after it closed. */
  before: { balance_usd: string; spent_usd: string };
  after: { balance_usd: string; spent_usd: string };
  /** Credits spent on the stream (after − before), USD. */
  spentUsd: string;
  /** Liquidations the simulator's feeds published with venue times while the stream was open, when the sandbox said. */
  simulated?: number;
  /** On-chain USDC the payer spent (atomic units): the top-up only. */
  onChainSpentAtomic?: bigint;
}

/**
 * Counts the liquidations of the simulator's tape with venue times in [fromMs, toMs) that reach the
 * service: the all-market streams (Binance, OKX, Gate, Aster, HTX: `liquidationFeed.kind` `all_symbols` in the venue
 * definitions), and the per-symbol ones (Bybit, Deribit, …) for the symbols the service follows (`subscribedBases`,
 * by default the pre-subscribed ones). Venues without a liquidation feed (Hyperliquid, Bitget) add none.
 */
export function simulatedLiquidations(sim: Pick<RunningSimulator, "tape">, subscribedBases: readonly string[] = PRE_SUBSCRIBED): (fromMs: number, toMs: number) => number {
  const allMarket = VENUES.filter((v) => v.liquidationFeed.kind === "all_symbols").map((v) => v.id);
  const perSymbol = VENUES.filter((v) => v.liquidationFeed.kind === "per_symbol").map((v) => v.id);
  return (fromMs, toMs) =>
    allMarket.reduce((n, v) => n + sim.tape.liquidations(v, "*", fromMs, toMs).length, 0) +
    perSymbol.reduce((n, v) => n + sim.tape.liquidations(v, "*", fromMs, toMs).filter((l) => subscribedBases.includes(l.base)).length, 0);
}

const micro = (usd: string) => Math.round(Number(usd) * 1e6);
const usdOf = (m: number) => String(m / 1e6);

/**
 * The sandbox's live-stream walk-through: a payer tops up prepaid credits once with x402, signs in with a
 * one-round-trip Sign-In-With-X proof and opens `GET /stream/liquidations` (all symbols), which debits a
 * stream-minute at its start and at the start of every following minute. It stays open for `minutes`
 * billed minutes (longer, up to `maxMinutes`, until a first liquidation arrives: the simulated market
 * liquidates a few times a minute at rest), closes half-way through a minute so that no debit races the
 * close, and prints the events, every `debit` event and the credits before and after.
 * `minuteMs` must be the server's `LIVE_STREAM_MINUTE_MS` (the sandbox uses {@link DEMO_STREAM_MINUTE_MS}).
 */
export async function runStreamDemo(opts: {
  baseUrl: string;
  payer: DevAccount;
  minuteMs: number;
  /** Billed minutes to stay open (default 3). */
  minutes?: number;
  /** Most billed minutes while waiting for a first liquidation (default 15). */
  maxMinutes?: number;
  topUpUsd?: string;
  /** Counts the simulator's liquidations in a window, to explain what was (or was not) received. */
  simulated?: (fromMs: number, toMs: number) => number;
  balanceOf?: (address: `0x${string}`) => Promise<bigint>;
  print?: (line: string) => void;
}): Promise<StreamDemoResult> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const minutes = opts.minutes ?? 3;
  const maxMinutes = Math.max(minutes, opts.maxMinutes ?? 15);
  const price = liquidationStream.pricePerMinuteUsd;
  const key = opts.payer.privateKey;
  const chainBefore = await opts.balanceOf?.(opts.payer.address);

  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(key))));
  const topUpUsd = opts.topUpUsd ?? "0.1";
  const top = await pay(`${opts.baseUrl}/api/v1/credits`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount_usd: topUpUsd }) });
  const topBody = (await top.json()) as { balance_usd?: string };
  print(`POST /api/v1/credits {"amount_usd":"${topUpUsd}"} -> ${top.status} (x402, settled on chain): balance ${topBody.balance_usd} USD`);
  const account = async () => {
    const url = `${opts.baseUrl}/api/v1/credits`;
    const res = await fetch(url, { headers: { "SIGN-IN-WITH-X": await siwxHeader(key, url) } });
    return (await res.json()) as { balance_usd: string; spent_usd: string };
  };
  const before = await account();

  const url = `${opts.baseUrl}${liquidationStream.path}`;
  const abort = new AbortController();
  const opened = Date.now();
  const res = await fetch(url, { headers: { accept: "text/event-stream", "SIGN-IN-WITH-X": await siwxHeader(key, url) }, signal: abort.signal });
  const result: StreamDemoResult = {
    status: res.status,
    sessionToken: Boolean(res.headers.get("x-credits-session")),
    liquidations: [],
    debits: [],
    pricePerMinuteUsd: price,
    openedAt: opened,
    openMs: 0,
    before,
    after: before,
    spentUsd: "0",
  };
  if (res.status !== 200) {
    print(`GET ${liquidationStream.path} -> ${res.status}: ${await res.text()}`);
    return result;
  }
  print(
    `GET ${liquidationStream.path} (SIGN-IN-WITH-X) -> 200 text/event-stream, ${price} USD per minute from credits (a billed minute lasts ${opts.minuteMs / 1000} s here); X-Credits-Session token to reconnect: ${result.sessionToken ? "yes" : "no"}`,
  );

  // Close half-way through the last billed minute (minute 1 is debited when the stream opens).
  let firstDebitAt: number | undefined;
  let closeAt = Date.now() + (minutes - 0.5) * opts.minuteMs;
  let waiting = false;
  const timer = setInterval(() => {
    if (Date.now() < closeAt) return;
    if (result.liquidations.length === 0 && result.debits.length < maxMinutes) {
      if (!waiting) print(`  no liquidation yet (the simulated market liquidates a few times a minute at rest): keeping the stream open, at most ${maxMinutes} billed minutes`);
      waiting = true;
      closeAt += opts.minuteMs;
      return;
    }
    abort.abort();
  }, 50);

  const onEvent = (event: string, data: string) => {
    if (event === "debit") {
      const d = JSON.parse(data) as StreamDebit;
      result.debits.push(d);
      if (firstDebitAt === undefined) {
        firstDebitAt = Date.now();
        closeAt = firstDebitAt + (minutes - 0.5) * opts.minuteMs;
      }
      print(`  debit: minute ${d.minute}, ${d.price_usd} USD, credits remaining ${d.remaining_usd} USD`);
    } else if (event === "liquidation") {
      const d = JSON.parse(data) as Record<string, unknown>;
      result.liquidations.push(d);
      if (result.liquidations.length <= 3) {
        print(`  liquidation ${d.id}: ${d.exchange} ${d.symbol} ${d.side} ${d.size} @ ${d.price} = ${Number(d.value_usd).toFixed(2)} USD at ${d.timestamp}`);
      }
    } else if (event === "payment_required" || event === "dropped") {
      result.endedBy = event;
      print(`  ${event}: ${data}`);
      abort.abort();
    }
  };

  try {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let end: number;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        let event = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length) onEvent(event, data.join("\n"));
      }
    }
  } catch (err) {
    if (!abort.signal.aborted) throw err;
  } finally {
    clearInterval(timer);
    abort.abort();
  }
  const closed = Date.now();
  result.openMs = closed - opened;
  // The server notices the closed connection and stops billing (the close was half a minute from a debit).
  await new Promise((r) => setTimeout(r, 300));
  result.after = await account();
  result.spentUsd = usdOf(micro(result.after.spent_usd) - micro(before.spent_usd));
  result.simulated = opts.simulated?.(opened, closed);

  const n = result.liquidations.length;
  print(
    `received ${n} liquidation${n === 1 ? "" : "s"} in ${(result.openMs / 1000).toFixed(1)} s${n > 3 ? ` (first 3 above)` : ""}${result.simulated !== undefined ? `; the simulator's feeds published ${result.simulated} with venue times while it was open (one in the last half second may still have been in a venue's push batch)` : ""}`,
  );
  print(
    `paid ${result.debits.length} stream-minutes x ${price} USD = ${usdOf(result.debits.length * micro(price))} USD from credits (debits: ${result.debits.map((d) => d.minute).join(", ")}); credits before ${before.balance_usd} USD, after ${result.after.balance_usd} USD (spent ${result.spentUsd} USD)`,
  );
  if (chainBefore !== undefined && opts.balanceOf) {
    result.onChainSpentAtomic = chainBefore - (await opts.balanceOf(opts.payer.address));
    print(`on chain the payer spent ${formatUnits(result.onChainSpentAtomic, 6)} USDC (the top-up only; the stream-minutes moved nothing on chain)`);
  }
  return result;
}
