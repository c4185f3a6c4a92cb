import { describe, expect, it } from "vitest";
import { formatSse, sseChunk } from "../../src/live/sse.js";

describe("sseChunk", () => {
  it("frames an event as one HTTP/1.1 chunk whose size counts bytes, not characters, and builds it once", () => {
    const e = { event: "liquidation", id: "liq_1_1", data: { symbol: "ÉTÉ", note: "ü€" } };
    const chunk = sseChunk(e);
    const frame = formatSse(e);
    expect(frame.length).toBeLessThan(Buffer.byteLength(frame));
    expect(chunk).toBe(`${Buffer.byteLength(frame).toString(16)}\r\n${frame}\r\n`);
    expect(sseChunk(e)).toBe(chunk);
  });
});
