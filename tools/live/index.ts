import type { ToolContext } from "../../src/core/context.js";
import { AppError } from "../../src/errors.js";
import type { StreamDef } from "../../src/registry/stream.js";
import type { UnpaidCaller } from "../../src/registry/tool.js";
import { validateStreams } from "../../src/registry/validate.js";
import { PerpSymbol, requireListed } from "../perp/common.js";
import { ingestion } from "../streams/common.js";
import { cvdStream } from "./cvd.js";
import { fundingStream } from "./funding.js";
import { liquidationStream } from "./liquidations.js";

/** The live streams of the catalogue (paid per minute from credits), read by every mount and document. */
export const STREAMS: readonly StreamDef[] = [liquidationStream, cvdStream, fundingStream];

validateStreams(STREAMS);

/**
 * Validates a stream's symbol before anything is paid: the base of `raw` (`BTCUSDT` → `BTC`), listed on
 * some venue; CVD also subscribes an on-demand symbol's trade streams (its data starts about 10 s later),
 * which spends one of `caller`'s warm-ups when the symbol is new. Undefined for an optional symbol left out
 * (all liquidations).
 * @throws AppError BAD_REQUEST for a malformed or missing symbol, UNKNOWN_SYMBOL when no venue lists it,
 *   UPSTREAM_UNAVAILABLE when the topic needs live stores this instance does not run or every on-demand
 *   stream is in paid use, RATE_LIMITED over the client's warm-up budget.
 */
export async function streamSymbol(def: StreamDef, raw: string | undefined, ctx: ToolContext, caller: UnpaidCaller = {}): Promise<string | undefined> {
  if (raw === undefined || raw === "") {
    if (def.symbol === "optional") return undefined;
    throw new AppError("BAD_REQUEST", `${def.path} needs a symbol`);
  }
  const parsed = PerpSymbol.safeParse(raw);
  if (!parsed.success) throw new AppError("BAD_REQUEST", `'${raw.slice(0, 40)}' is not a perpetual symbol`);
  const base = parsed.data;
  if (def.topic !== "funding") ingestion(ctx);
  await requireListed(base, ctx);
  if (def.topic === "cvd") await ingestion(ctx).ensure(base, caller);
  return base;
}
