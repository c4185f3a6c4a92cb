import type { Request } from "express";
import { AppError } from "../src/errors.js";
import { isValidHostHeader } from "../src/lib/public-origins.js";

/**
 * The 400 of a request whose `Host` header, or the `X-Forwarded-Host` express reads under trust proxy
 * (`req.host`), is not `name[:port]` / `[IPv6][:port]` (e.g. `[::1`, `a b`, `%zz`, `@@`); undefined when
 * both are well-formed or absent (HTTP/1.0). The value is not echoed, and nothing is logged: it is the
 * caller's error.
 */
export function malformedHost(req: Pick<Request, "host" | "headers">): AppError | undefined {
  const raw = req.headers.host;
  if (raw !== undefined && !isValidHostHeader(raw)) return new AppError("BAD_REQUEST", "malformed Host header: expected host[:port]");
  const host = req.host;
  if (host !== undefined && host !== raw && !isValidHostHeader(host)) return new AppError("BAD_REQUEST", "malformed X-Forwarded-Host header: expected host[:port]");
  return undefined;
}
