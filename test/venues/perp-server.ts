import type { AddressInfo } from "node:net";
import express, { type Request } from "express";

/** What a stub route answers: JSON `body` with `status` (default 200), or a raw `text` body. */
export interface StubAnswer {
  status?: number;
  body?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** A route handler of {@link startStub}, keyed `"GET /path"` or `"POST /path"`. */
export type StubRoute = (req: Request) => StubAnswer;

/** A running stub venue: its base URL, the requests it saw (`GET /path?query` or `POST /path {body}`), and `close`. */
export interface RunningStub {
  url: string;
  calls: string[];
  close(): Promise<void>;
}

/**
 * A tiny local HTTP server (port 0) answering fixed JSON per route, for adapter client tests.
 * Unknown routes answer 404. Not the venue simulator: just enough to exercise the clients' wiring.
 */
export async function startStub(routes: Record<string, StubRoute>): Promise<RunningStub> {
  const app = express();
  app.use(express.json());
  const calls: string[] = [];
  app.use((req, res) => {
    calls.push(req.method === "POST" ? `POST ${req.path} ${JSON.stringify(req.body)}` : `GET ${req.originalUrl}`);
    const route = routes[`${req.method} ${req.path}`];
    if (!route) {
      res.status(404).json({ error: "no such route" });
      return;
    }
    const a = route(req);
    res.status(a.status ?? 200);
    for (const [k, v] of Object.entries(a.headers ?? {})) res.setHeader(k, v);
    if (a.text !== undefined) res.type("text/html").send(a.text);
    else res.json(a.body);
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
