/**
 * How an alert's last evaluation is stored, so that a round writes per alert only what changed.
 *
 * Every alert of one kind on one symbol shares, in a round, what was measured (the heatmap's OI at risk
 * and cascade risk, or the price) or the symbol's error: the round stores that once per symbol as a
 * {@link SymbolReading}, stamped with the round's time. An alert's own row keeps its last written
 * evaluation without `condition_met` (the "part"), its own `condition_met`, and when it was written. An
 * active alert whose symbol has a newer reading was evaluated by that round and nothing of its own
 * changed: its last evaluation is that reading's part with its own `condition_met`. When an alert ends
 * (cancelled, expired), the stores copy the newer reading into its row, so it keeps the last evaluation
 * it had while active.
 */
import type { AlertKind, AlertRecord } from "./types.js";

/** One kind's part of a round's reading of a symbol: what was measured, or why nothing was. */
export type ReadingPart = { value: number; cascade_risk?: string } | { error: string };

/** What a round measured on one symbol, for each alert kind the symbol has. */
export interface SymbolReading {
  symbol: string;
  liquidation?: ReadingPart;
  price?: ReadingPart;
}

/** The newest reading of a symbol as stored: the round's time and each kind's part as JSON (absent when the round had no alert of that kind). */
export interface StoredReading {
  at: number;
  liquidation: string | null;
  price: string | null;
}

/** An alert's own stored evaluation: when it was written, its part as JSON, and its `condition_met` (null with an error or before any). */
export interface OwnEvaluation {
  status: AlertRecord["status"];
  kind: AlertKind;
  at: number | null;
  json: string | null;
  conditionMet: boolean | null;
}

/** The keys of an evaluation's part (all but `condition_met`), in their order. */
const PART_KEYS = ["value", "cascade_risk", "error"];

/** Stored forms already computed: a round shares one evaluation object among the alerts it fits. */
const storedForms = new WeakMap<object, { json: string; conditionMet: boolean | null }>();

/** An evaluation as stored: the part (JSON, without `condition_met`) and `condition_met` apart. */
export function storedEvaluation(e: NonNullable<AlertRecord["lastEvaluation"]>): { json: string; conditionMet: boolean | null } {
  let stored = storedForms.get(e);
  if (!stored) storedForms.set(e, (stored = { json: JSON.stringify(e, PART_KEYS), conditionMet: e.condition_met ?? null }));
  return stored;
}

/** A reading's part for `kind`, as JSON (null when the reading has none). */
export function readingPartJson(r: SymbolReading, kind: AlertKind): string | null {
  const part = r[kind];
  return part ? JSON.stringify(part) : null;
}

/**
 * An alert's `lastEvaluatedAt` and `lastEvaluation`: its own, unless it is active, was evaluated before,
 * and its symbol has a newer reading of its kind (see the module comment).
 */
export function lastEvaluation(own: OwnEvaluation, reading: StoredReading | undefined): Pick<AlertRecord, "lastEvaluatedAt" | "lastEvaluation"> {
  const newer = own.status === "active" && own.at !== null && reading !== undefined && reading.at > own.at ? reading[own.kind] : null;
  const at = newer ? reading!.at : own.at;
  const json = newer ?? own.json;
  if (json === null) return { lastEvaluatedAt: at, lastEvaluation: null };
  const part = JSON.parse(json) as NonNullable<AlertRecord["lastEvaluation"]>;
  // Rows written before condition_met was stored apart carry it in their JSON.
  const lastEvaluation = part.error !== undefined || own.conditionMet === null ? part : { ...part, condition_met: own.conditionMet };
  return { lastEvaluatedAt: at, lastEvaluation };
}
