import type { Request } from "express";
import { AppError } from "../src/errors.js";
import { isValidHostHeader } from "../src/lib/public-origins.js";

/** The last Host header found well-formed: almost every request repeats it, so it is checked once. */
let lastValidHost: string | undefined;

/**
 * The 400 of a request whose `Host` header, or the `X-Forwarded-Host` express reads under trust proxy
 * (`req.host`), is not `name[:port]` / `[IPv6][:port]` (e.g. `[::1`, `a b`, `%zz`, `@@`); undefined when
 * both are well-formed or absent (HTTP/1.0). The value is not echoed, and nothing is logged: it is the
 * caller's error.
 */
export function malformedHost(req: Pick<Request, "host" | "headers">): AppError | undefined {
  const raw = req.headers.host;
  if (raw !== undefined && raw !== lastValidHost) {
    if (!isValidHostHeader(raw)) return new AppError("BAD_REQUEST", "malformed Host header: expected host[:port]");
    lastValidHost = raw;
  }
  // express reads another host than the Host header only from X-Forwarded-Host (under trust proxy).
  if (req.headers["x-forwarded-host"] === undefined) return undefined;
  const host = req.host;
  if (host !== undefined && host !== raw && !isValidHostHeader(host)) return new AppError("BAD_REQUEST", "malformed X-Forwarded-Host header: expected host[:port]");
  return undefined;
}
