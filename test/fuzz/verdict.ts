import { TOOLS } from "../../tools/index.js";
import type { FuzzReport } from "./run.js";

/** Largest `/metrics` exposition accepted after a fuzz run (bytes): bounded labels keep it far below. */
export const METRICS_BOUND_BYTES = 1_500_000;
/** Route labels possible: one per registry route, the fixed documents, `/mcp`, the quote and `unmatched`. */
export const ROUTE_LABEL_BOUND = TOOLS.length + 12;

/** Everything wrong with a fuzz report, as short sentences (empty when the run passed). */
export function problems(r: FuzzReport): string[] {
  const out: string[] = [];
  const fives = r.failures.filter((f) => f.status !== "no_answer").length;
  if (fives) out.push(`${fives} answers with a 5xx`);
  if (r.failures.length - fives) out.push(`${r.failures.length - fives} requests without an answer`);
  if (!r.alive) out.push("the service no longer answers /health");
  if (r.metricsBytesAfter > METRICS_BOUND_BYTES) out.push(`/metrics grew to ${r.metricsBytesAfter} bytes`);
  if (r.routeLabels > ROUTE_LABEL_BOUND) out.push(`${r.routeLabels} route labels (bound ${ROUTE_LABEL_BOUND})`);
  return out;
}
