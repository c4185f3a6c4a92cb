import { z } from "zod";
import { AppError } from "../../src/errors.js";
import { defineTool } from "../../src/registry/tool.js";

/**
 * Two paid tools for payment-flow tests, with counters the tests read and set:
 * - `test_counter` (`GET /test/counter/:label`, 0.02, no cache, so every retry reaches the payment layer)
 *   answers `{label, run}` and counts its runs in `state.runs`;
 * - `test_create` (`POST /test/things`, 0.03, settled upfront like alert creation) answers `{id}`,
 *   counts in `state.created`, and fails its next `state.failCreates` runs with a 503.
 */
export function paidTestTools() {
  const state = { runs: 0, created: 0, failCreates: 0 };
  const counter = defineTool({
    name: "test_counter",
    title: "Counter",
    method: "GET",
    path: "/test/counter/:label",
    priceUsd: "0.02",
    cacheTtlSec: 0,
    tags: ["test"],
    summary: "counts handler runs",
    description: "test tool",
    example: { label: "a" },
    input: z.object({ label: z.string() }),
    output: z.object({ label: z.string(), run: z.number() }),
    handler: async ({ label }) => ({ label, run: ++state.runs }),
  });
  const creator = defineTool({
    name: "test_create",
    title: "Create",
    method: "POST",
    path: "/test/things",
    priceUsd: "0.03",
    cacheTtlSec: 0,
    tags: ["test"],
    summary: "creates a thing",
    description: "test tool",
    example: { name: "x" },
    paymentFlow: "upfront",
    input: z.object({ name: z.string() }),
    output: z.object({ id: z.number() }),
    handler: async () => {
      if (state.failCreates > 0) {
        state.failCreates--;
        throw new AppError("UPSTREAM_UNAVAILABLE", "storage unreachable", { retryAfterSec: 1 });
      }
      return { id: ++state.created };
    },
  });
  return { state, counter, creator };
}
