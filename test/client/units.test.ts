import { describe, expect, it } from "vitest";
import { atomicToMicros, microsToUsd, SpendBudget, usdToMicros } from "../../src/client/budget.js";
import { SpendCapError } from "../../src/client/errors.js";
import { sseMessages } from "../../src/client/sse.js";

/** A body that delivers `chunks` one by one, as a network read may split them. */
const body = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(new TextEncoder().encode(x));
      c.close();
    },
  });

describe("the typed client's amounts, budget and SSE reader", () => {
  it("converts USD to micro-USD and back without floating point", () => {
    expect(usdToMicros("0.005")).toBe(5_000n);
    expect(usdToMicros("$1")).toBe(1_000_000n);
    expect(usdToMicros(0.1)).toBe(100_000n);
    expect(() => usdToMicros("-1")).toThrow();
    expect(microsToUsd(20_000n)).toBe("0.02");
    expect(microsToUsd(5_000_000n)).toBe("5");
    // Another token's decimals: never under-counted.
    expect(atomicToMicros("1000000000001", 18)).toBe(2n);
    expect(atomicToMicros("3", 2)).toBe(30_000n);
  });

  it("reserves each charge against both caps; concurrent reservations count; a released one gives its room back", () => {
    const b = new SpendBudget("0.05", "0.1");
    expect(() => b.reserve(60_000n)).toThrow(SpendCapError);
    expect(b.reserve(60_000n, "1")).toBeDefined(); // a call's own cap, still within the session
    const second = () => b.reserve(50_000n);
    expect(second).toThrow(/per-session cap/);
    const held = b.reserve(40_000n);
    held.release();
    held.commit(); // after release: nothing
    expect(b.spentMicros).toBe(0n);
    expect(b.roomMicros).toBe(40_000n);
    new SpendBudget(undefined, undefined).reserve(10n ** 12n).commit();
  });

  it("reads named events, ids, multi-line data and comments, across chunk boundaries and CRLF", async () => {
    const got = [];
    for await (const m of sseMessages(body(["retry: 3000\n\n: hb\n\nevent: de", 'bit\ndata: {"a":1}\r\n\r\nid: liq_1\nevent: liquidation\ndata: x\ndata: y\n\n', "data: tail"])))
      got.push(m);
    expect(got).toEqual([
      { event: "debit", data: '{"a":1}' },
      { event: "liquidation", id: "liq_1", data: "x\ny" },
    ]);
  });
});
