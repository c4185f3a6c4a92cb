import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import type { VenueFeed } from "../../src/ingestion/feeds/feed-base.js";
import type { Liquidation, StreamGap, Trade } from "../../src/ingestion/types.js";

/*
 * A local `ws` server on port 0 for feed lifecycle tests (not the simulator): records every connection and the
 * text frames it received, so a test can play the venue's side by hand and wait for what the feed sends.
 */

/** One accepted connection: its socket, request path, the frames received (text, in order), when it opened and whether it closed. */
export interface WsConn {
  ws: WebSocket;
  url: string;
  received: string[];
  openedAt: number;
  closed: boolean;
}

/** A running server: its `ws://127.0.0.1:<port>` URL and its connections, oldest first. */
export interface WsTestServer {
  url: string;
  conns: WsConn[];
  close(): Promise<void>;
}

/**
 * Starts a server; `onConnection` sees each connection after its frames start being recorded (so a venue stub
 * can answer them with `c.ws.on("message", …)`).
 */
export async function startWsServer(onConnection: (c: WsConn) => void = () => {}): Promise<WsTestServer> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await once(wss, "listening");
  const { port } = wss.address() as AddressInfo;
  const srv: WsTestServer = {
    url: `ws://127.0.0.1:${port}`,
    conns: [],
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
  wss.on("connection", (ws, req) => {
    const c: WsConn = { ws, url: req.url ?? "", received: [], openedAt: Date.now(), closed: false };
    srv.conns.push(c);
    ws.on("message", (d: WebSocket.RawData) => c.received.push(d.toString()));
    ws.on("close", () => (c.closed = true));
    onConnection(c);
  });
  return srv;
}

/**
 * Per-test cleanup for a test file (call once at its top level): `cleanup(fn)` runs `fn` after the current test
 * (newest first); `server(onConnection)` starts a {@link startWsServer} closed the same way.
 */
export function wsTestKit(): { cleanup: (fn: () => Promise<void>) => void; server: (onConnection?: (c: WsConn) => void) => Promise<WsTestServer> } {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const cleanup = (fn: () => Promise<void>) => void cleanups.push(fn);
  return {
    cleanup,
    server: async (onConnection) => {
      const s = await startWsServer(onConnection);
      cleanup(() => s.close());
      return s;
    },
  };
}

/** The frames a connection received, parsed as JSON. */
export function jsonReceived<T>(c: WsConn): T[] {
  return c.received.map((r) => JSON.parse(r) as T);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 5 ms until it returns a truthy value (returned); throws "waitFor timed out" after `timeoutMs`. */
export async function waitFor<T>(fn: () => T | undefined | null | false, timeoutMs = 3_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("waitFor timed out");
    await sleep(5);
  }
}

/** Collects what a feed emits from now on: its trades and liquidations (flattened, in order) and its gap events. */
export function collectEvents(feed: VenueFeed): { trades: Trade[]; liqs: Liquidation[]; gaps: StreamGap[] } {
  const out = { trades: [] as Trade[], liqs: [] as Liquidation[], gaps: [] as StreamGap[] };
  feed.on("trades", (t) => out.trades.push(...t));
  feed.on("liquidations", (l) => out.liqs.push(...l));
  feed.on("gap", (g) => out.gaps.push(g));
  return out;
}
