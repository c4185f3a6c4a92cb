import type { Request } from "express";
import { AppError } from "../src/errors.js";
import { isValidHostHeader, type PublicOrigins } from "../src/lib/public-origins.js";

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

/**
 * The endpoints a browser page could drive with the caller's reach (its loopback, its network): MCP's
 * Streamable HTTP endpoints. `/ws` is checked on the upgrade (http/ws.ts). Express matches routes without
 * case and with an optional trailing slash, so paths are compared the same way.
 */
const BROWSER_GUARDED_PATHS = new Set(["/mcp", "/mcp/live"]);

/** Whether `path` (express's `req.path`) is one of {@link BROWSER_GUARDED_PATHS}. */
export function isBrowserGuardedPath(path: string): boolean {
  return BROWSER_GUARDED_PATHS.has(path.toLowerCase().replace(/\/+$/, ""));
}

/**
 * The 403 of a request to `/mcp`, `/mcp/live` or `/ws` that a foreign page could have sent (DNS rebinding,
 * or a cross-site request from the caller's browser; the MCP transport spec: servers MUST validate
 * `Origin`): its Host names another site while the service listens on loopback, or its `Origin` is not one
 * `origins` accepts (see {@link PublicOrigins.acceptsHost} and {@link PublicOrigins.acceptsOrigin}).
 * Undefined otherwise; requests without an `Origin` (agents, curl, SDK clients) pass on a loopback name.
 * Neither value is echoed, and nothing is logged: it is the caller's error. Call after {@link malformedHost}.
 */
export function foreignBrowserRequest(
  req: Pick<Request, "host" | "headers">,
  origins: Pick<PublicOrigins, "acceptsHost" | "acceptsOrigin" | "loopbackBind">,
): AppError | undefined {
  if (!origins.acceptsHost(req.host)) {
    return new AppError(
      "FORBIDDEN",
      "this service listens on loopback: its MCP and WebSocket endpoints answer only requests addressed to localhost, 127.0.0.1 or [::1] (or to PUBLIC_URL / PUBLIC_ORIGINS); the Host header names another site",
    );
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.acceptsOrigin(origin)) {
    const own = origins.loopbackBind ? "a loopback origin, PUBLIC_URL, PUBLIC_ORIGINS" : "PUBLIC_URL, PUBLIC_ORIGINS";
    return new AppError(
      "FORBIDDEN",
      `browser pages may call the MCP and WebSocket endpoints only from this service's origins (${own}) or those listed in CORS_ORIGINS; the Origin header names another one`,
    );
  }
  return undefined;
}
