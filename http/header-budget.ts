import type { Response } from "express";

/*
 * The size of a response's header block (status line, header lines, blank line) as a reverse proxy reads it.
 * nginx reads it into one `proxy_buffer_size` buffer, one 4 KB memory page by default, and answers 502 "upstream
 * sent too big header" when it does not fit: after the payment settled, when it is a paid answer's. Every block
 * the service builds stays under {@link HEADER_BLOCK_BUDGET} (test/http/header-block-size.test.ts measures them).
 */

/** nginx's default `proxy_buffer_size` on x86-64 Linux (one memory page), bytes: every header block stays under it. */
export const HEADER_BLOCK_BUDGET = 4096;

/**
 * Longest URL of a paid request (absolute, as its 402 and receipt name it: origin, PUBLIC_URL's path, path and
 * query), bytes. The 402 repeats it (resource, and its SIWX challenge the path) and the paid answer's receipt
 * twice encoded (about 1.8 bytes a byte): beyond it the paid answer's header block could outgrow
 * {@link HEADER_BLOCK_BUDGET}, so such requests are refused before payment (414). Measured at the bound, MPP
 * answer 4.0 KB (test/http/header-block-size.test.ts).
 */
export const MAX_PAID_URL_BYTES = 1024;

/**
 * Bytes Node and express add to a JSON answer's header block after the route set its headers, lines with their
 * CRLF: the status line (`HTTP/1.1 402 Payment Required`, 32), `Content-Type: application/json; charset=utf-8`
 * (47), `Content-Length` (at most 24 under 1 MB), `Date` (37), `Connection: keep-alive` (24), `Keep-Alive:
 * timeout=5` (23) and the blank line (2): 189, rounded up.
 */
const ADDED_WHEN_SENT_BYTES = 200;

/** Bytes of one header's lines (`name: value\r\n`, one line per value of an array). */
export function headerBytes(name: string, value: string | number | readonly string[]): number {
  const values = Array.isArray(value) ? value : [String(value)];
  return values.reduce((n: number, v: string) => n + name.length + 2 + Buffer.byteLength(v, "latin1") + 2, 0);
}

/** Bytes of a set of headers' lines. */
export function headersBytes(headers: Readonly<Record<string, string | number | readonly string[]>>): number {
  return Object.entries(headers).reduce((n, [name, value]) => n + headerBytes(name, value), 0);
}

/**
 * The header bytes `res` will send besides the ones a route is about to add: those already set (CORS, rate
 * limit, `X-Data-Source`, ...) and what Node and express add when sending.
 */
export function sentHeaderBytes(res: Response): number {
  let n = ADDED_WHEN_SENT_BYTES;
  for (const name of res.getHeaderNames()) {
    const v = res.getHeader(name);
    if (v !== undefined) n += headerBytes(name, v);
  }
  return n;
}
