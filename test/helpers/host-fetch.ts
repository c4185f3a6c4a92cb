import { request } from "node:http";
import { Readable } from "node:stream";

/**
 * A `fetch` that connects to `target` (a server on loopback, `http://127.0.0.1:<port>`) whatever host the
 * URL names, and sends `opts.host` (default: the URL's own host) as the `Host` header, plus `opts.headers`.
 * It is what a client reaching the server under another name sends, or an attacker who writes `Host`
 * (Node's fetch always sends the URL's host). Response bodies stream (SSE works); `signal` aborts.
 */
export function fetchVia(target: string, opts: { host?: string; headers?: Record<string, string> } = {}): typeof fetch {
  const to = new URL(target);
  return async (input, init) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const headers: Record<string, string> = { ...Object.fromEntries(req.headers), host: opts.host ?? url.host, ...opts.headers };
    return new Promise<Response>((resolve, reject) => {
      const r = request({ host: to.hostname, port: to.port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (res) => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const one of [v ?? []].flat()) h.append(k, one);
        const empty = req.method === "HEAD" || res.statusCode === 204 || res.statusCode === 304;
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status: res.statusCode, headers: h }));
      });
      r.on("error", reject);
      req.signal.addEventListener("abort", () => r.destroy(new Error("aborted")), { once: true });
      r.end(body);
    });
  };
}
