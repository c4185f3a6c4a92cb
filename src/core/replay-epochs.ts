/**
 * One epoch per answer in sandbox replay (docs/sandbox-replay.md, "One epoch per answer").
 *
 * The simulator's recordings were made at different times (2020 to 2026) and its model simulates the present. An
 * answer that combined them would compare numbers of different epochs (a 2024 Binance mark against the simulated
 * spot of today gives a basis of thousands of percent; a 2021 candle history against today's price gives a false
 * cascade risk). So the venue data behind one answer must come from ONE source: one recording, or the model alone.
 * Reference data (instrument lists, funding intervals, margin tiers) carries no epoch and is not counted.
 *
 * The check reads the venue exchanges of the request (`VenueLog`, noted by `VenueHttpClient`, single-flight
 * followers included): a recording is known by the simulator's `X-Sim-Source: replay` mark, which the service takes
 * into account only with `SIM_REPLAY=on`; so live mode and plain sim mode never refuse anything here.
 */
import { AppError } from "../errors.js";
import type { VenueExchange, VenueLog } from "./request-scope.js";

/**
 * Venue endpoints whose answers are reference data without an epoch: instrument lists, funding intervals and
 * margin-tier tables (`<venue> <METHOD> <path>`, as {@link VenueExchange} names them).
 */
export const REFERENCE_ENDPOINTS: ReadonlySet<string> = new Set([
  "binance GET /fapi/v1/exchangeInfo",
  "binance GET /fapi/v1/fundingInfo",
  "aster GET /fapi/v1/exchangeInfo",
  "aster GET /fapi/v1/fundingInfo",
  "bybit GET /v5/market/instruments-info",
  "bybit GET /v5/market/risk-limit",
  "okx GET /api/v5/public/instruments",
  "okx GET /api/v5/public/position-tiers",
  "gate GET /futures/usdt/contracts",
  "gate GET /futures/usdt/risk_limit_tiers",
  "bitget GET /api/v2/mix/market/contracts",
  "bitget GET /api/v2/mix/market/query-position-lever",
  "deribit GET /public/get_instruments",
]);

/** Where the data of one venue exchange came from: a recording (its `<venue>/<file>`), or `model`. */
export interface ExchangeSource {
  readonly venue: string;
  readonly endpoint: string;
  /** `recording` when the simulator answered with recorded data, `model` when its model computed the answer. */
  readonly source: "recording" | "model";
  /** The recording (`<venue>/<file>`, named after its recording date); absent for `model`. */
  readonly recording?: string;
}

/** The data sources of a request's exchanges: answered ones only (2xx), reference data and instrument lists left out. */
export function dataSources(exchanges: readonly VenueExchange[]): ExchangeSource[] {
  const out = new Map<string, ExchangeSource>();
  for (const x of exchanges) {
    if (x.status === undefined || x.status < 200 || x.status > 299) continue;
    if (x.simSource === "replay-instruments" || REFERENCE_ENDPOINTS.has(`${x.venue} ${x.endpoint}`)) continue;
    const s: ExchangeSource =
      x.simSource === "replay"
        ? { venue: x.venue, endpoint: x.endpoint, source: "recording", recording: x.recording ?? "unnamed" }
        : { venue: x.venue, endpoint: x.endpoint, source: "model" };
    out.set(`${s.venue} ${s.endpoint} ${s.recording ?? ""}`, s);
  }
  return [...out.values()];
}

/** Most sources listed in a refusal's `details` (a request makes a few dozen exchanges at most). */
const MAX_LISTED = 40;

/**
 * Throws when the request's venue data mixes epochs: data of a recording beside the model's data, or beside
 * another recording's. Does nothing when no recording answered (live, plain sim, or a model-only answer).
 * @throws AppError CONFLICT (409), `details.sources` listing every data source with its venue endpoint.
 */
export function assertSingleEpoch(log: VenueLog | undefined): void {
  if (!log?.replayed) return;
  const sources = dataSources(log.exchanges);
  const epochs = new Set(sources.map((s) => s.recording ?? "model"));
  if (epochs.size <= 1) return;
  const recordings = [...epochs].filter((e) => e !== "model");
  throw new AppError(
    "CONFLICT",
    `sandbox replay: this answer would combine venue data of different epochs (${[...epochs].map((e) => (e === "model" ? "the simulated present" : `recording ${e}`)).join(" with ")}), so it is refused. ` +
      `In replay an answer comes from one recording alone or from the simulator's model alone; see docs/sandbox-replay.md for what the recordings answer (${recordings.length} recording(s) involved).`,
    { details: { sources: sources.slice(0, MAX_LISTED) } },
  );
}
