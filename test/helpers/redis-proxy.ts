import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { TEST_REDIS_URL } from "./redis-available.js";

/** A TCP proxy in front of a real Redis that a test can cut (Redis "goes down"), stall (Redis "hangs") and restore. */
export interface RedisProxy {
  /** `redis://127.0.0.1:<proxy port>`. */
  url: string;
  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): Promise<void>;
  /** Accepts connections again (on the same port). */
  restore(): Promise<void>;
  /**
   * Keeps connections open but holds every byte in both directions until {@link resume}: commands sent
   * meanwhile reach Redis only then (a slow network or a stalled Redis), and their replies come after.
   */
  stall(): void;
  /** Delivers what {@link stall} held, in order, and forwards again. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a {@link RedisProxy} to `target` (default the loopback Redis of the tests). */
export async function startRedisProxy(target = TEST_REDIS_URL): Promise<RedisProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  /** Per direction: the destination and the chunks held while stalled. */
  const held: Array<{ to: Socket; chunks: Buffer[] }> = [];
  let open = true;
  let stalled = false;
  const forward = (from: Socket, to: Socket) => {
    const q = { to, chunks: [] as Buffer[] };
    held.push(q);
    from.on("data", (chunk: Buffer) => {
      if (stalled) q.chunks.push(chunk);
      else to.write(chunk);
    });
    to.once("close", () => {
      const i = held.indexOf(q);
      if (i >= 0) held.splice(i, 1);
    });
  };
  const server: Server = createServer((client) => {
    if (!open) return void client.destroy();
    const upstream = connect(Number(t.port || 6379), t.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    async cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    async restore() {
      open = true;
    },
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const q of held) for (const c of q.chunks.splice(0)) q.to.write(c);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
