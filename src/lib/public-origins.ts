import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { ConfigError } from "../config.js";

/** What {@link PublicOrigins} reads of a request: express's `host` (Host, or X-Forwarded-Host under trust proxy) and `protocol`. */
export interface OriginRequest {
  readonly host?: string | undefined;
  readonly protocol?: string;
}

/** The settings origins come from (a subset of `Config`). */
export interface PublicOriginSettings {
  /** `HOST`: the address the service binds. */
  host: string;
  /** `PORT` (0 = a free port, known once listening). */
  port: number;
  /** `PUBLIC_URL`, no trailing slash (may carry a path prefix). */
  publicUrl?: string;
  /** `PUBLIC_ORIGINS`: further origins (`scheme://host[:port]`) that reach the same service. */
  publicOrigins?: readonly string[];
  /** `CORS_ORIGINS`: origins browsers may call from; a list (not `*`) also opens the MCP and WebSocket endpoints to them. */
  corsOrigins?: readonly string[] | "*";
}

/** Longest Host value accepted (a DNS name is at most 253 characters, plus a port). */
const MAX_HOST_LENGTH = 261;
/** `reg-name[:port]` (RFC 3986 unreserved and sub-delims, no percent-encoding) or `[IPv6][:port]`. */
const HOST_SYNTAX = /^(?:\[([0-9A-Fa-f:.]+)\]|[A-Za-z0-9\-._~!$&'()*+,;=]+)(?::(\d{1,5}))?$/;

/**
 * Whether `value` is a well-formed `Host` (or `X-Forwarded-Host`) value: `name[:port]` or `[IPv6][:port]`,
 * port at most 65535, at most 261 characters. Anything else (`[::1`, `a b`, `%zz`, `@@`, an empty value)
 * is the caller's error.
 */
export function isValidHostHeader(value: string): boolean {
  if (value.length === 0 || value.length > MAX_HOST_LENGTH) return false;
  const m = HOST_SYNTAX.exec(value);
  if (!m) return false;
  if (m[1] !== undefined && isIP(m[1]) !== 6) return false;
  return m[2] === undefined || Number(m[2]) <= 65535;
}

/**
 * Whether `host` (a `HOST` bind address) listens on loopback only: `localhost`, `127.0.0.0/8`, `::1`
 * (also IPv4-mapped `::ffff:127.x.y.z`). `0.0.0.0`, `::` and every other name or address are public.
 */
export function isLoopbackBind(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (h === "localhost") return true;
  if (!ipaddr.isValid(h)) return false;
  return ipaddr.process(h).range() === "loopback";
}

/** The host name of a well-formed Host value (`name[:port]`, `[IPv6][:port]`), lower case, IPv6 in brackets. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

/** `raw` (an `Origin` header) as an http(s) origin, or undefined (`null`, another scheme, a path, credentials). */
function httpOrigin(raw: string): URL | undefined {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return undefined;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  if (u.username || u.password || u.pathname !== "/" || u.search || u.hash) return undefined;
  return u;
}

/** `host` as it appears in a URL: IPv6 literals in brackets. */
function urlHost(host: string): string {
  const h = host.replace(/^\[(.*)\]$/, "$1");
  return isIP(h) === 6 ? `[${h}]` : h;
}

/** An origin's `host` in every spelling a Host header may use for it (with and without its default port). */
function hostKeys(origin: string): string[] {
  const u = new URL(origin);
  const keys = [u.host.toLowerCase()];
  if (u.port === "") keys.push(`${u.hostname.toLowerCase()}:${u.protocol === "https:" ? 443 : 80}`);
  return keys;
}

/**
 * The public origins of the service, from configuration only, never from a request: the origin that
 * Sign-In-With-X proofs and credits session tokens are bound to, and the base of the absolute URLs in
 * answers (402 `resource`, discovery documents).
 *
 * - `PUBLIC_URL` set: its origin, plus the `PUBLIC_ORIGINS`. A request whose Host (X-Forwarded-Host under
 *   trust proxy) names one of them is bound to that one; any other Host is bound to PUBLIC_URL's origin.
 * - No `PUBLIC_URL`, loopback bind (`HOST=127.0.0.1`, `::1`, `localhost`): `http://<HOST>:<bound port>`
 *   (decided by {@link PublicOrigins.listening}, so `PORT=0` works), plus `http://localhost:<port>`.
 * - Neither: no origin can be trusted. {@link PublicOrigins.listening} refuses to start when SIWX is on;
 *   otherwise (credits off) URLs in answers use the request's validated Host, where no money or identity
 *   depends on them.
 *
 * It also decides which requests the endpoints a browser page could drive (`/mcp`, `/mcp/live`, `/ws`)
 * answer: {@link PublicOrigins.acceptsHost} and {@link PublicOrigins.acceptsOrigin} (DNS rebinding, MCP's
 * "servers MUST validate the Origin header").
 */
export class PublicOrigins {
  /** Base URL of each configured origin (origin + PUBLIC_URL's path), by Host spelling. */
  private byHost = new Map<string, { origin: string; base: string }>();
  private primary?: { origin: string; base: string };
  /** The address and port the service is reached at when nothing is configured (stdio, before listening). */
  private fallback: string;
  /** Whether the service listens on loopback only (`HOST`, then the address {@link listening} was given). */
  private loopback: boolean;
  /** The origins listed in `CORS_ORIGINS` (not `*`), as `URL.origin`. */
  private readonly corsOrigins: ReadonlySet<string>;

  constructor(private readonly settings: PublicOriginSettings) {
    this.fallback = `http://localhost:${settings.port}`;
    this.loopback = isLoopbackBind(settings.host);
    const listed = settings.corsOrigins === "*" ? [] : (settings.corsOrigins ?? []);
    this.corsOrigins = new Set(listed.flatMap((o) => httpOrigin(o)?.origin ?? []));
    if (settings.publicUrl) {
      const path = new URL(settings.publicUrl).pathname.replace(/\/+$/, "");
      this.set([new URL(settings.publicUrl).origin, ...(settings.publicOrigins ?? [])], path);
    } else if (isLoopbackBind(settings.host)) {
      this.setLoopback(settings.host, settings.port);
    }
  }

  /** Whether an origin is known from configuration (PUBLIC_URL, or a loopback bind). */
  get configured(): boolean {
    return this.primary !== undefined;
  }

  /**
   * The service is about to listen on `host`:`port` (call again with the bound port once known, for
   * `PORT=0`). Without PUBLIC_URL a loopback bind derives the origins from them.
   * @param siwx whether SIWX proofs or credits sessions are accepted (credits on with payments).
   * @throws ConfigError when `siwx` is on, PUBLIC_URL is unset and `host` is not a loopback address.
   */
  listening(host: string, port: number, opts: { siwx: boolean }): void {
    this.loopback = isLoopbackBind(host);
    if (this.settings.publicUrl) return;
    if (isLoopbackBind(host)) {
      this.setLoopback(host, port);
      return;
    }
    this.primary = undefined;
    this.byHost.clear();
    this.fallback = `http://localhost:${port}`;
    if (opts.siwx) {
      throw new ConfigError([
        `PUBLIC_URL is required when credits are on (CREDITS=on, the default) and HOST is not a loopback address (HOST=${host}): Sign-In-With-X proofs and credits sessions are bound to the service's public origin, which is configuration, never a request's Host header. Set PUBLIC_URL to the URL clients use (e.g. https://data.example.com; more origins in PUBLIC_ORIGINS), bind HOST=127.0.0.1, or set CREDITS=off.`,
      ]);
    }
  }

  /**
   * The origin (`scheme://host[:port]`) a request's SIWX proof and session token must be bound to: the
   * configured origin its Host names, else the primary one (PUBLIC_URL's, or the loopback bind's). Never
   * derived from the request; never throws.
   */
  origin(req?: OriginRequest): string {
    return (this.match(req) ?? this.primary)?.origin ?? new URL(this.fallback).origin;
  }

  /**
   * The base (origin and PUBLIC_URL's path, no trailing slash) of absolute URLs in the answer to `req`.
   * When no origin is configured (credits off, public bind without PUBLIC_URL) it is the request's own
   * scheme and Host (which the app has checked for syntax): nothing a caller pays or signs depends on it then.
   */
  baseUrl(req?: OriginRequest): string {
    const known = this.match(req) ?? this.primary;
    if (known) return known.base;
    const host = req?.host;
    if (!host || !isValidHostHeader(host)) return this.fallback;
    return `${req.protocol === "https" ? "https" : "http"}://${host}`;
  }

  /**
   * Whether the browser-reachable endpoints (`/mcp`, `/mcp/live`, `/ws`) answer a request addressed to
   * `host` (express's `req.host`: the Host header, or X-Forwarded-Host under trust proxy). On a loopback
   * bind only a loopback name (`localhost`, `127.0.0.0/8`, `[::1]`, any port) or the host of a configured
   * origin (PUBLIC_URL, PUBLIC_ORIGINS): a page whose own name the attacker points at 127.0.0.1 (DNS
   * rebinding) sends that name. On a public bind any name (DNS rebinding gains nothing there: the
   * attacker reaches the service directly). No Host (HTTP/1.0) is no browser: accepted.
   */
  acceptsHost(host: string | undefined): boolean {
    if (!this.loopback || host === undefined) return true;
    if (this.byHost.has(host.toLowerCase())) return true;
    const name = hostnameOf(host);
    return name !== undefined && isLoopbackBind(name);
  }

  /**
   * Whether a browser page of `origin` (the `Origin` header, which browsers send on every POST and
   * WebSocket) may call the browser-reachable endpoints: the service's configured origins (PUBLIC_URL,
   * PUBLIC_ORIGINS, or the loopback bind's), the origins listed in `CORS_ORIGINS` (not `*`), and on a
   * loopback bind any loopback origin (http or https, any port: local tools such as an MCP inspector). Not
   * `null` (sandboxed pages, files), nor anything that is not an http(s) origin.
   */
  acceptsOrigin(origin: string): boolean {
    const u = httpOrigin(origin);
    if (!u) return false;
    if (this.loopback && isLoopbackBind(u.hostname)) return true;
    return this.byHost.get(u.host)?.origin === u.origin || this.corsOrigins.has(u.origin);
  }

  /** Whether the service listens on loopback only (for messages). */
  get loopbackBind(): boolean {
    return this.loopback;
  }

  /** The configured origins (primary first), for logs and tests. */
  list(): string[] {
    return [...new Set([...this.byHost.values()].map((o) => o.origin))];
  }

  private match(req?: OriginRequest): { origin: string; base: string } | undefined {
    const host = req?.host;
    return host ? this.byHost.get(host.toLowerCase()) : undefined;
  }

  private set(origins: readonly string[], path: string): void {
    this.byHost.clear();
    for (const origin of origins) {
      const entry = { origin, base: `${origin}${path}` };
      for (const key of hostKeys(origin)) if (!this.byHost.has(key)) this.byHost.set(key, entry);
    }
    this.primary = { origin: origins[0]!, base: `${origins[0]!}${path}` };
  }

  /** `http://<bind>:<port>` first, then the other loopback names of the same port. */
  private setLoopback(host: string, port: number): void {
    const bind = host.trim().toLowerCase();
    const names = bind === "localhost" ? ["localhost", "127.0.0.1", "::1"] : [bind, "localhost"];
    this.fallback = `http://${urlHost(names[0]!)}:${port}`;
    this.set(
      names.map((n) => new URL(`http://${urlHost(n)}:${port}`).origin),
      "",
    );
  }
}
