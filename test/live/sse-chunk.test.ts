import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatSse, SseTransport, sseChunk } from "../../src/live/sse.js";
import type { LiveEvent } from "../../src/live/types.js";

const EVENTS: LiveEvent[] = [
  { event: "liquidation", id: "liq_1_1", data: { symbol: "ÉTÉ", note: "ü€" } },
  { event: "liquidation", id: "liq_1_2", data: { symbol: "BTCUSDT", value_usd: 1234.5 } },
];

describe("sseChunk", () => {
  it("frames an event as one HTTP/1.1 chunk whose size counts bytes, not characters, and builds it once", () => {
    const e = EVENTS[0]!;
    const chunk = sseChunk(e);
    const frame = formatSse(e);
    expect(frame.length).toBeLessThan(Buffer.byteLength(frame));
    expect(chunk).toBe(`${Buffer.byteLength(frame).toString(16)}\r\n${frame}\r\n`);
    expect(sseChunk(e)).toBe(chunk);
  });
});

describe("SseTransport on a real express server", () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    const app = express();
    // Express gives the response its own prototype: the case the socket writes are for.
    app.all("/sse", (_req, res) => {
      const t = new SseTransport(res, 1 << 20, 60_000);
      for (const e of EVENTS) t.send(e);
      setTimeout(() => t.end({ event: "dropped", data: { reason: "test over" } }), 20);
    });
    app.get("/after", (_req, res) => res.json({ ok: true }));
    server = app.listen(0, "127.0.0.1");
    await once(server, "listening");
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** Sends `request` on one raw connection and returns everything the server wrote until it closed or `until` matched. */
  async function raw(request: string, until?: RegExp): Promise<string> {
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    socket.on("data", (b: Buffer) => {
      text += b.toString("utf8");
      if (until?.test(text)) socket.end();
    });
    socket.write(request);
    await once(socket, "close");
    return text;
  }

  it("HTTP/1.1: chunked events a standard client decodes, ended by the last chunk, and the connection is reused", async () => {
    const text = await raw("GET /sse HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n", /\{"ok":true\}/);
    const [first, second] = text.split(/(?=HTTP\/1\.1 200)/);
    expect(first).toMatch(/transfer-encoding: chunked/i);
    expect(first).toContain(sseChunk(EVENTS[0]!));
    expect(first).toContain(sseChunk(EVENTS[1]!));
    expect(first!.endsWith("0\r\n\r\n")).toBe(true);
    expect(second).toContain('{"ok":true}');
  });

  it("HTTP/1.1 through node's own client: the body is the SSE frames in order", async () => {
    const body = await new Promise<string>((resolve, reject) => {
      http
        .get(`http://127.0.0.1:${port}/sse`, (res) => {
          let s = "";
          res.setEncoding("utf8");
          res.on("data", (c: string) => (s += c));
          res.on("end", () => resolve(s));
        })
        .on("error", reject);
    });
    expect(body).toBe(`retry: 3000\n\n${formatSse(EVENTS[0]!)}${formatSse(EVENTS[1]!)}event: dropped\ndata: {"reason":"test over"}\n\n`);
  });

  it("HEAD: headers only, no body bytes on the connection", async () => {
    const text = await raw("HEAD /sse HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n", /\{"ok":true\}/);
    const [head, next] = text.split(/(?=HTTP\/1\.1 200)/);
    expect(head).not.toContain("liquidation");
    expect(head!.endsWith("\r\n\r\n")).toBe(true);
    expect(next).toContain('{"ok":true}');
  });

  it("HTTP/1.0 (not chunked): the frames as they are, until the connection closes", async () => {
    const text = await raw("GET /sse HTTP/1.0\r\nHost: x\r\n\r\n");
    const body = text.slice(text.indexOf("\r\n\r\n") + 4);
    expect(text).not.toMatch(/transfer-encoding/i);
    expect(body).toBe(`retry: 3000\n\n${formatSse(EVENTS[0]!)}${formatSse(EVENTS[1]!)}event: dropped\ndata: {"reason":"test over"}\n\n`);
  });
});
