import type { z } from "zod";

/** The live topics a client can subscribe to. */
export type StreamTopic = "liquidations" | "cvd" | "funding";

/**
 * One paid live stream of the catalogue, written once and read by every mount: the SSE route, the
 * WebSocket topic, the MCP `stream_subscribe` tool, `/`, OpenAPI, the discovery documents and llms.txt.
 *
 * - `path`: the SSE route; `:symbol` when the topic is per symbol, else `?symbol=` filters (optional).
 * - `pricePerMinuteUsd`: decimal USD debited from prepaid credits at the start of every stream-minute.
 * - `events`: SSE event name (and WebSocket `event` field) → JSON schema of its `data`.
 * - `resumable`: how far back `Last-Event-ID` replays (a sentence for documents).
 */
export interface StreamDef {
  readonly topic: StreamTopic;
  readonly title: string;
  readonly path: string;
  readonly symbol: "required" | "optional";
  readonly pricePerMinuteUsd: string;
  readonly summary: string;
  readonly description: string;
  readonly resumable: string;
  readonly events: Readonly<Record<string, z.ZodType>>;
  /** A symbol for examples (documents, the sandbox demo, tests). */
  readonly exampleSymbol: string;
}

/** Identity helper that keeps the literal types of a stream definition. */
export function defineStream(def: StreamDef): StreamDef {
  return def;
}

/** The SSE path of `def` for `symbol` (`/stream/cvd/BTC`, `/stream/liquidations?symbol=BTC`, `/stream/liquidations`). */
export function streamPath(def: StreamDef, symbol?: string): string {
  if (def.symbol === "required") return def.path.replace(":symbol", encodeURIComponent(symbol ?? def.exampleSymbol));
  return symbol ? `${def.path}?symbol=${encodeURIComponent(symbol)}` : def.path;
}
