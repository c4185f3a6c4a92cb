import { describe, expect, it } from "vitest";
import { fanOut, NOT_LISTED, optionalRead } from "../../src/core/fanout.js";
import { completenessOf, runInScope } from "../../src/core/request-scope.js";
import { AppError } from "../../src/errors.js";

const down = new AppError("UPSTREAM_UNAVAILABLE", "venue answered HTTP 503");

/** A venue call answering per a script: a number, NOT_LISTED, or a failure. */
const script =
  (answers: Record<string, number | typeof NOT_LISTED | "fail">) =>
  async (v: string): Promise<number | typeof NOT_LISTED> => {
    const a = answers[v]!;
    if (a === "fail") throw down;
    return a;
  };

const V = ["a", "b", "c", "d"] as const;

describe("fanOut: how partial an answer may be", () => {
  it("answers with up to half of the listing venues failed, naming them", async () => {
    const out = await fanOut(V, script({ a: 1, b: 2, c: "fail", d: "fail" }));
    expect(out.answered).toEqual(["a", "b"]);
    expect(out.missing_exchanges.map((m) => m.exchange)).toEqual(["c", "d"]);
  });

  it("refuses when more than half of the venues that list the symbol failed, with every missing venue in details", async () => {
    const err = await fanOut(V, script({ a: 1, b: "fail", c: "fail", d: "fail" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", retryAfterSec: 10, message: expect.stringContaining("3 of 4 venues failed") });
    expect((err as AppError).details).toEqual([
      { exchange: "b", reason: "UPSTREAM_UNAVAILABLE: venue answered HTTP 503" },
      { exchange: "c", reason: "UPSTREAM_UNAVAILABLE: venue answered HTTP 503" },
      { exchange: "d", reason: "UPSTREAM_UNAVAILABLE: venue answered HTTP 503" },
    ]);
  });

  it("does not count venues that do not list the symbol", async () => {
    // 2 listing venues, 1 failed: exactly half, answered.
    const out = await fanOut(V, script({ a: 1, b: "fail", c: NOT_LISTED, d: NOT_LISTED }));
    expect(out.answered).toEqual(["a"]);
    // 3 listing venues, 2 failed: refused, the unlisted one named as such.
    const err = await fanOut(V, script({ a: 1, b: "fail", c: "fail", d: NOT_LISTED })).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: expect.stringContaining("2 of 3 venues failed") });
    expect((err as AppError).details).toContainEqual({ exchange: "d", reason: "not_listed" });
  });

  it("keeps its earlier answers: none answered is 503, none listing is 404", async () => {
    await expect(fanOut(V, script({ a: "fail", b: "fail", c: "fail", d: "fail" }))).rejects.toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: "no venue answered" });
    await expect(fanOut(V, script({ a: NOT_LISTED, b: NOT_LISTED, c: NOT_LISTED, d: NOT_LISTED }))).rejects.toMatchObject({ code: "UNKNOWN_SYMBOL" });
  });

  it("require=all: any failed venue refuses the answer; unlisted venues are still fine", async () => {
    const all = <T>(fn: () => Promise<T>) => runInScope({ deadlineMs: 5000, require: "all" }, fn);
    await expect(all(() => fanOut(V, script({ a: 1, b: 2, c: 3, d: "fail" })))).rejects.toMatchObject({
      code: "UPSTREAM_UNAVAILABLE",
      message: expect.stringContaining("require=all"),
      details: [{ exchange: "d", reason: expect.stringContaining("UPSTREAM_UNAVAILABLE") }],
    });
    const out = await all(() => fanOut(V, script({ a: 1, b: 2, c: 3, d: NOT_LISTED })));
    expect(out.answered).toEqual(["a", "b", "c"]);
  });
});

describe("optionalRead", () => {
  const failing = () => Promise.reject(down);
  const notFound = () => Promise.reject(new AppError("NOT_FOUND", "binance lists no spot market for XYZ"));

  it("degrades a failed supplementary read to undefined, unless every venue is required", async () => {
    await expect(optionalRead(Promise.resolve(7))).resolves.toBe(7);
    await expect(optionalRead(failing())).resolves.toBeUndefined();
    await expect(runInScope({ deadlineMs: 5000, require: "all" }, () => optionalRead(failing()))).rejects.toBe(down);
    await expect(runInScope({ deadlineMs: 5000, require: "all" }, () => optionalRead(notFound()))).resolves.toBeUndefined();
  });
});

describe("completenessOf", () => {
  it("reads the generic require field of a validated input", () => {
    expect(completenessOf({ symbol: "BTC", require: "all" })).toBe("all");
    expect(completenessOf({ symbol: "BTC", require: "any" })).toBe("any");
    expect(completenessOf({ symbol: "BTC" })).toBe("any");
    expect(completenessOf(undefined)).toBe("any");
  });
});
