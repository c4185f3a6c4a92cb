import { connect, createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { TEST_REDIS_URL } from "./redis-available.js";

/** A TCP proxy in front of a real Redis that a test can cut (Redis "goes down") and restore. */
export interface RedisProxy {
  /** `redis://127.0.0.1:<proxy port>`. */
  url: string;
  /** Drops every open connection and refuses new ones until {@link restore}. */
  cut(): Promise<void>;
  /** Accepts connections again (on the same port). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a {@link RedisProxy} to `target` (default the loopback Redis of the tests). */
export async function startRedisProxy(target = TEST_REDIS_URL): Promise<RedisProxy> {
  const t = new URL(target);
  const sockets = new Set<Socket>();
  let open = true;
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
    client.pipe(upstream).pipe(client);
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
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
