import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { generate } from "selfsigned";

/** One request as the receiver saw it. `headers` are lower-cased by Node; `at` is `Date.now()` on arrival. */
export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  at: number;
}

/** How to answer: status, extra headers, a body (default `ok`) and a delay before answering (ms). */
export interface ReceiverResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
}

/** A local HTTPS webhook receiver, see {@link startHttpsReceiver}. */
export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>/<path>` (path default `/`; a leading `/` is added when missing). */
  url(path?: string): string;
  /** The port it listens on. */
  port: number;
  /** PEM of its self-signed certificate, to trust in tests only. */
  ca: string;
  /** TCP connections accepted so far (a refused attempt must not open one). */
  readonly connections: number;
  /** Requests received so far, in arrival order. */
  requests: ReceivedWebhook[];
  /** Sets how to answer; `n` is the 1-based number of the request. Default: 200 `ok`. */
  respond(fn: (req: ReceivedWebhook, n: number) => ReceiverResponse): void;
  /** Resolves with the requests once at least `count` arrived; rejects after `timeoutMs` (default 5000). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  /** Stops listening, drops open connections and pending delayed answers. */
  close(): Promise<void>;
}

// Key generation is the slow part: one certificate per test process is enough.
let certificate: Promise<{ key: string; cert: string }> | undefined;
function testCertificate(): Promise<{ key: string; cert: string }> {
  // Valid for years either side of `Date.now()`: TLS checks it against the OS clock, which a test that moves the
  // process's calendar (test/clock/shift.js) does not move.
  const now = Date.now();
  certificate ??= generate([{ name: "commonName", value: "localhost" }], {
    notBeforeDate: new Date(now - 5 * 365 * 86_400_000),
    notAfterDate: new Date(now + 5 * 365 * 86_400_000),
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          // A name no real resolver knows: deliveries to it succeed only through an injected lookup.
          { type: 2, value: "receiver.marketgate.test" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  }).then((p) => ({ key: p.private, cert: p.cert }));
  return certificate;
}

/**
 * Starts an HTTPS server on 127.0.0.1 (random port) with a self-signed certificate whose SANs are
 * DNS `localhost`, DNS `receiver.marketgate.test` and IP `127.0.0.1`. It records every request and
 * answers per {@link HttpsReceiver.respond}.
 */
export async function startHttpsReceiver(): Promise<HttpsReceiver> {
  const { key, cert } = await testCertificate();
  const requests: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const timers = new Set<NodeJS.Timeout>();
  let responder: (req: ReceivedWebhook, n: number) => ReceiverResponse = () => ({ status: 200 });

  const server: Server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const received: ReceivedWebhook = { path: req.url ?? "", headers: { ...req.headers }, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      requests.push(received);
      for (const w of waiters) w();
      const answer = responder(received, requests.length);
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "ok");
      };
      if (!answer.delayMs) return reply();
      const t = setTimeout(() => {
        timers.delete(t);
        reply();
      }, answer.delayMs);
      timers.add(t);
    });
  });
  let connections = 0;
  server.on("connection", () => connections++);
  // Clients that give up mid-handshake (untrusted certificate, timeouts) are expected here.
  server.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: (path = "/") => `https://127.0.0.1:${port}${path.startsWith("/") ? "" : "/"}${path}`,
    port,
    ca: cert,
    get connections() {
      return connections;
    },
    requests,
    respond(fn) {
      responder = fn;
    },
    waitFor(count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return;
          waiters.delete(check);
          clearTimeout(t);
          resolve(requests.slice());
        };
        const t = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
