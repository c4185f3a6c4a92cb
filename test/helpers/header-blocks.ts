import { request as httpRequest } from "node:http";
import { connect } from "node:net";

/*
 * Response header blocks as a reverse proxy reads them: the status line and every header line with their
 * CRLFs and the blank line that ends them. nginx reads this block into one `proxy_buffer_size` buffer (4 KB by
 * default) and answers 502 "upstream sent too big header" when it does not fit.
 */

/** One response's header block as received. */
export interface HeaderBlock {
  method: string;
  url: string;
  status: number;
  /** The request's headers as sent (lower-case names). */
  requestHeaders: Record<string, string>;
  /** Status line, header lines and the blank line, as bytes on the wire (latin1). */
  block: string;
  bytes: number;
}

/** Bytes of a header block rebuilt from Node's `rawHeaders` (names and values as received, in order). */
function blockOf(statusLine: string, rawHeaders: readonly string[]): string {
  const lines = [statusLine];
  for (let i = 0; i < rawHeaders.length; i += 2) lines.push(`${rawHeaders[i]}: ${rawHeaders[i + 1]}`);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/**
 * A `fetch` over plain HTTP/1.1 that records the header block of every response it receives in `log` (clients
 * such as `@x402/fetch` and mppx take it as their base fetch, so every 402 and paid answer they see is measured).
 * Loopback `http:` URLs only; the body is buffered.
 */
export function recordingFetch(log: HeaderBlock[]): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const requestHeaders = Object.fromEntries(req.headers);
    return new Promise<Response>((resolve, reject) => {
      const out = httpRequest(req.url, { method: req.method, headers: { ...requestHeaders, ...(body ? { "content-length": String(body.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const status = res.statusCode ?? 0;
          const block = blockOf(`HTTP/${res.httpVersion} ${status} ${res.statusMessage ?? ""}`, res.rawHeaders);
          log.push({ method: req.method, url: req.url, status, requestHeaders, block, bytes: Buffer.byteLength(block, "latin1") });
          const headers = new Headers();
          for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
          const noBody = status === 204 || status === 304 || req.method === "HEAD";
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers }));
        });
      });
      out.on("error", reject);
      out.end(body);
    });
  };
}

/** The raw status line and headers of one HTTP/1.1 request, exactly as the service writes them. */
export async function rawHeaderBlock(url: string, method: string, body?: string, extra: readonly string[] = []): Promise<{ status: number; block: string }> {
  const u = new URL(url);
  const head = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`, "Connection: close", "Accept: application/json", ...extra];
  if (body !== undefined) head.push("Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`);
  const request = `${head.join("\r\n")}\r\n\r\n${body ?? ""}`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => socket.write(request));
    let got = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      got += chunk;
      const end = got.indexOf("\r\n\r\n");
      if (end >= 0) {
        socket.destroy();
        resolve({ status: Number(got.slice(9, 12)), block: got.slice(0, end + 4) });
      }
    });
    socket.on("error", reject);
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no answer from ${url}`)));
  });
}

/** The values of header `name` in a raw block (case-insensitive name), one per line. */
export function headerValues(block: string, name: string): string[] {
  const prefix = `${name.toLowerCase()}:`;
  return block
    .split("\r\n")
    .filter((l) => l.toLowerCase().startsWith(prefix))
    .map((l) => l.slice(prefix.length).trim());
}
