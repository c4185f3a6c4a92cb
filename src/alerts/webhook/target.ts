/**
 * Webhook URL rules and the SSRF guard: which caller-supplied URLs marketgate may POST to, and which
 * address the connection must use. Webhooks go to HTTPS endpoints on the public internet only, on the
 * allowed ports (443 by default); the service must never become a way to reach loopback, private
 * networks or cloud metadata endpoints, nor to probe other services of public hosts.
 */
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { AppError } from "../../errors.js";

/** One resolved address: `address` is an IP literal without brackets, `family` its version. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How strict the guard is, and how names are resolved. */
export interface WebhookTargetPolicy {
  /**
   * Accept loopback targets (127/8, ::1, ::ffff:127.x and the name `localhost`). ONLY for tests and
   * the offline sandbox, where the receiver runs on the same host; production keeps it false.
   */
  allowLoopback: boolean;
  /**
   * TCP ports a webhook URL may name (`WEBHOOK_ALLOWED_PORTS`; default {@link DEFAULT_WEBHOOK_PORTS}, i.e.
   * HTTPS's 443 only: an HTTPS client pointed at a public host's SSH, SMTP or database port is a port
   * scanner). Loopback targets, when `allowLoopback`, may use any port: the sandbox's and the tests'
   * receivers listen on a random loopback port.
   */
  allowedPorts?: readonly number[];
  /**
   * Resolves a host name to ALL its addresses (default: a shared {@link createDnsLookup} with its
   * defaults). Injected by tests to simulate DNS answers, including rebinding. An {@link AppError} it
   * throws is passed through as is; any other error means the name is `unresolvable`.
   */
  lookup?: (hostname: string) => Promise<ResolvedAddress[]>;
}

/** Ports webhook URLs may name when the policy lists none: HTTPS only (webhooks are never plain HTTP). */
export const DEFAULT_WEBHOOK_PORTS: readonly number[] = [443];

/** Longest accepted webhook URL, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Addresses of cloud instance-metadata services, named as such in refusals (they sit inside ranges refused anyway). */
const CLOUD_METADATA = new Set([
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean…
  "169.254.170.2", // AWS ECS task metadata
  "169.254.170.23", // AWS EKS pod identity
  "100.100.100.200", // Alibaba Cloud
  "fd00:ec2::254", // AWS IMDS over IPv6
  "fd00:ec2::23", // AWS EKS pod identity over IPv6
]);

/** ipaddr.js range names → reasons. Anything not listed here and not `unicast` is `reserved`. */
const V4_REASONS: Record<string, string> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link_local",
  loopback: "loopback",
  carrierGradeNat: "cgnat",
  private: "private",
};
const V6_REASONS: Record<string, string> = {
  unspecified: "unspecified",
  linkLocal: "link_local",
  multicast: "multicast",
  loopback: "loopback",
  uniqueLocal: "unique_local",
  deprecatedSiteLocal: "site_local",
  discard: "discard",
  teredo: "teredo",
};

function badUrl(reason: string, message: string): AppError {
  return new AppError("BAD_REQUEST", message, { details: { field: "webhook_url", reason } });
}

/**
 * Parses and checks the syntax of a caller-supplied webhook URL: absolute `https:` URL with a host,
 * no `user:password@`, no `#fragment`, at most {@link MAX_WEBHOOK_URL_LENGTH} characters, no
 * whitespace or control characters (the URL parser would silently strip them). Says nothing about where
 * the host points nor which ports are allowed: that is {@link resolveWebhookTarget}'s job.
 *
 * @returns the parsed URL (WHATWG-normalised: IPv4 hosts in dotted-quad form, IPv6 hosts bracketed).
 * @throws AppError `BAD_REQUEST` with `details: { field: "webhook_url", reason }`, reason one of
 *   `invalid_url`, `too_long`, `not_https`, `missing_host`, `credentials`, `fragment`.
 */
export function parseWebhookUrl(raw: string): URL {
  if (typeof raw !== "string" || raw.length === 0) throw badUrl("invalid_url", "webhook_url must be a non-empty string");
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw badUrl("too_long", `webhook_url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw badUrl("invalid_url", "webhook_url must not contain whitespace or control characters");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badUrl("invalid_url", "webhook_url is not a valid absolute URL");
  }
  if (url.protocol !== "https:") throw badUrl("not_https", "webhook_url must use https");
  if (!url.hostname) throw badUrl("missing_host", "webhook_url must have a host");
  if (url.username || url.password) throw badUrl("credentials", "webhook_url must not contain credentials");
  // `url.hash` is "" for a bare trailing "#", so look at the serialisation: "#" only survives there as the fragment mark.
  if (url.href.includes("#")) throw badUrl("fragment", "webhook_url must not contain a fragment");
  return url;
}

/** The IPv4 address carried in the last 32 bits of an IPv6 address. */
function embeddedV4(v6: ipaddr.IPv6): string {
  const p = v6.parts;
  return `${p[6]! >> 8}.${p[6]! & 0xff}.${p[7]! >> 8}.${p[7]! & 0xff}`;
}

function v4Reason(v4: ipaddr.IPv4, allowLoopback: boolean): string | null {
  const s = v4.toString();
  if (CLOUD_METADATA.has(s)) return "cloud_metadata";
  const range = v4.range();
  if (range === "unicast") return null;
  if (range === "loopback" && allowLoopback) return null;
  return V4_REASONS[range] ?? "reserved";
}

function v6Reason(v6: ipaddr.IPv6, allowLoopback: boolean): string | null {
  const p = v6.parts;
  if (CLOUD_METADATA.has(v6.toRFC5952String())) return "cloud_metadata";
  const zeros = (n: number) => p.slice(0, n).every((x) => x === 0);
  // Prefixes that carry an IPv4 address: judge the IPv4 address, since that is where packets end up.
  if (zeros(5) && p[5] === 0xffff) {
    const inner = v4Reason(ipaddr.IPv4.parse(embeddedV4(v6)), allowLoopback);
    return inner && `ipv4_mapped:${inner}`;
  }
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) {
    // A NAT64 gateway translates to the embedded address from its own network: never allow loopback there.
    const inner = v4Reason(ipaddr.IPv4.parse(embeddedV4(v6)), false);
    return inner && `nat64:${inner}`;
  }
  if (p[0] === 0x2002) {
    const inner = v4Reason(new ipaddr.IPv4([p[1]! >> 8, p[1]! & 0xff, p[2]! >> 8, p[2]! & 0xff]), false);
    return inner && `6to4:${inner}`;
  }
  const range: string = v6.range();
  if (range === "loopback") return allowLoopback ? null : "loopback";
  if (range !== "unicast") return V6_REASONS[range] ?? "reserved";
  // ::/96 (IPv4-compatible, deprecated) and everything outside 2000::/3 is not global unicast.
  if (zeros(6) || (p[0]! & 0xe000) !== 0x2000) return "reserved";
  return null;
}

/**
 * Whether `address` (an IP literal, IPv6 without brackets) may be a webhook destination.
 *
 * @returns `null` for a public unicast address; otherwise a short reason: `invalid`, `loopback`,
 *   `private`, `link_local`, `cgnat`, `multicast`, `unspecified`, `broadcast`, `cloud_metadata`,
 *   `reserved` (documentation, benchmarking, 192.0.0/24, 240/4, IPv6 outside 2000::/3…),
 *   `unique_local`, `site_local`, `discard`, `teredo`, or `ipv4_mapped:` / `nat64:` / `6to4:`
 *   followed by the reason of the embedded IPv4 address. Loopback (127/8, ::1, ::ffff:127.x) is
 *   accepted only when `allowLoopback`. Never throws.
 */
export function forbiddenAddressReason(address: string, allowLoopback: boolean): string | null {
  // Strict syntax (node:net) first: ipaddr.js also accepts inet_aton forms such as "0177.1".
  const family = isIP(address);
  if (family === 4) return v4Reason(ipaddr.IPv4.parse(address), allowLoopback);
  if (family !== 6) return "invalid";
  // The zone only matters for link-local, refused anyway. A dotted tail goes through the WHATWG
  // serialiser because ipaddr.js reads "::1.2.3.4" as if it were "::ffff:1.2.3.4".
  let text = address.replace(/%.*$/, "");
  if (text.includes(".")) {
    try {
      text = new URL(`https://[${text}]/`).hostname.slice(1, -1);
    } catch {
      return "invalid";
    }
  }
  return v6Reason(ipaddr.IPv6.parse(text), allowLoopback);
}

/**
 * Whether a host NAME (not an IP literal) may be a webhook destination, before any DNS: refuses
 * `localhost` and `*.localhost` (`loopback`, unless `allowLoopback` and the name is exactly
 * `localhost`), cloud metadata names (`metadata.google.internal`, `metadata`: `cloud_metadata`),
 * names under `.internal` / `.local` (`internal_name`) and single-label names (`single_label`:
 * resolver search domains would turn them into intranet names). Case and a trailing dot are ignored.
 *
 * @returns `null` when the name may be resolved, else the reason.
 */
export function forbiddenHostnameReason(hostname: string, allowLoopback: boolean): string | null {
  const name = hostname.toLowerCase().replace(/\.$/, "");
  if (name === "localhost") return allowLoopback ? null : "loopback";
  if (name.endsWith(".localhost")) return "loopback";
  if (name === "metadata" || name === "metadata.google.internal") return "cloud_metadata";
  if (name.endsWith(".internal") || name.endsWith(".local")) return "internal_name";
  if (!name.includes(".")) return "single_label";
  return null;
}

/** Options of {@link createDnsLookup}. */
export interface DnsLookupOptions {
  /** c-ares per-try timeout in ms (default 1000; c-ares lengthens later tries). */
  timeoutMs?: number;
  /** c-ares tries per name server (default 2). */
  tries?: number;
  /** Hard limit on one lookup (A and AAAA together) in ms (default 3000): its queries are cancelled then. */
  deadlineMs?: number;
  /** Lookups in flight at most (default 32); one more is refused at once (see {@link createDnsLookup}). */
  maxInFlight?: number;
  /** Name servers (`ip` or `ip:port`, as `Resolver.setServers` takes them); default the system's (resolv.conf). */
  servers?: string[];
}

/** Codes of c-ares answers meaning "no record of this family", not a failure. */
const NO_RECORDS = new Set(["ENODATA", "ENOTFOUND"]);

/**
 * A host-name resolver for webhook targets that caller-chosen names cannot clog. `dns.lookup` (getaddrinfo)
 * runs on libuv's 4-thread pool, shared with file I/O and crypto, with no deadline: a few dozen names whose
 * servers never answer stalled every lookup in the process for seconds. This one asks the DNS servers
 * directly through c-ares (`dns.Resolver`: sockets, no thread pool), with:
 * - A and AAAA queried together and merged, IPv4 first (the delivery connects to the first address, and
 *   many hosts have no IPv6 route); one family answering "no records" (ENODATA/ENOTFOUND) counts as
 *   empty, any other failure of either fails the lookup;
 * - a hard deadline per lookup (`deadlineMs`): the lookup's own resolver is cancelled then, so a slot is
 *   never held longer;
 * - at most `maxInFlight` lookups at once: one more rejects at once with AppError UPSTREAM_UNAVAILABLE
 *   (503, `retryAfterSec` 2), so a burst of hopeless names cannot queue up behind the cap either.
 *
 * `localhost` is not in DNS (c-ares does not read /etc/hosts): per RFC 6761 it answers 127.0.0.1 and ::1
 * without a query. The policy refuses it unless loopback targets are allowed.
 *
 * @returns `lookup(hostname)`, resolving every address of the name (possibly none); it rejects with the
 *   resolver's error (`code` ENOTFOUND, ESERVFAIL, ETIMEOUT…; ETIMEOUT also at the deadline) or the
 *   AppError above.
 */
export function createDnsLookup(opts: DnsLookupOptions = {}): (hostname: string) => Promise<ResolvedAddress[]> {
  const { timeoutMs = 1000, tries = 2, deadlineMs = 3000, maxInFlight = 32, servers } = opts;
  let inFlight = 0;
  const family = (resolver: Resolver, name: string, v: 4 | 6): Promise<ResolvedAddress[]> =>
    (v === 4 ? resolver.resolve4(name) : resolver.resolve6(name)).then(
      (addresses) => addresses.map((address) => ({ address, family: v })),
      (err: unknown) => {
        if (NO_RECORDS.has((err as { code?: string }).code ?? "")) return [];
        throw err;
      },
    );
  return async (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, "");
    if (name === "localhost") {
      return [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ];
    }
    if (inFlight >= maxInFlight) {
      throw new AppError("UPSTREAM_UNAVAILABLE", "too many webhook host lookups in flight; retry shortly", { retryAfterSec: 2 });
    }
    inFlight++;
    // One resolver per lookup: cancel() ends all of a resolver's queries, and only this lookup's must end.
    const resolver = new Resolver({ timeout: timeoutMs, tries });
    if (servers) resolver.setServers(servers);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, deadlineMs);
    try {
      const [v4, v6] = await Promise.all([family(resolver, name, 4), family(resolver, name, 6)]);
      return [...v4, ...v6];
    } catch (err) {
      if (timedOut) throw Object.assign(new Error(`DNS lookup of ${name} timed out after ${deadlineMs} ms`), { code: "ETIMEOUT" });
      throw err;
    } finally {
      clearTimeout(timer);
      inFlight--;
    }
  };
}

let sharedLookup: ((hostname: string) => Promise<ResolvedAddress[]>) | undefined;

/** The process-wide lookup (one in-flight cap for every policy without its own `lookup`). */
function defaultLookup(hostname: string): Promise<ResolvedAddress[]> {
  sharedLookup ??= createDnsLookup();
  return sharedLookup(hostname);
}

function forbidden(reason: string, address: string | undefined, what: string): AppError {
  return new AppError("BAD_REQUEST", `webhook_url resolves to a forbidden address (${what}: ${reason})`, {
    details: { field: "webhook_url", reason, ...(address === undefined ? {} : { address }) },
  });
}

/** The TCP port a delivery to `url` connects to (the URL parser leaves `port` empty for https's 443). */
export function webhookPort(url: URL): number {
  return url.port ? Number(url.port) : 443;
}

/** Whether `address` is a loopback address (127/8, ::1, ::ffff:127.x), i.e. allowed only by `allowLoopback`. */
function isLoopback(address: string): boolean {
  const reason = forbiddenAddressReason(address, false);
  return reason === "loopback" || reason === "ipv4_mapped:loopback";
}

function portRefused(port: number, allowed: readonly number[]): AppError {
  return new AppError("BAD_REQUEST", `webhook_url port ${port} is not allowed (allowed: ${allowed.join(", ")}; see WEBHOOK_ALLOWED_PORTS)`, {
    details: { field: "webhook_url", reason: "port_not_allowed", port, allowed_ports: allowed },
  });
}

/**
 * Decides which address a delivery to `url` connects to. An IP literal host (IPv6 bracketed or not)
 * is judged directly; a name is checked with {@link forbiddenHostnameReason}, then resolved, and
 * refused if ANY of its addresses is forbidden (one private A record among public ones is enough,
 * since the client could pick it). The caller pins the connection to the returned address, so a DNS
 * answer that changes between this check and the connect (rebinding) cannot redirect it. Run it
 * again at every attempt: a name that was public when the webhook was registered may not be now.
 * The URL's port must be one of `policy.allowedPorts` (default 443), except for a loopback target (every
 * address loopback) under `allowLoopback`; without `allowLoopback` a name's port is checked before DNS.
 *
 * @returns the first address of the answer (all of them allowed), `family` 4 or 6.
 * @throws AppError `BAD_REQUEST`, `details: { field: "webhook_url", reason, address? }`: `reason`
 *   from {@link forbiddenAddressReason} / {@link forbiddenHostnameReason}, `port_not_allowed` (with
 *   `port` and `allowed_ports`), or `unresolvable` when the name has no address (NXDOMAIN, SERVFAIL,
 *   empty answer, timeout, resolver error);
 *   AppError `UPSTREAM_UNAVAILABLE` (503, `retryAfterSec`) when too many lookups are in flight.
 */
export async function resolveWebhookTarget(url: URL, policy: WebhookTargetPolicy): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = webhookPort(url);
  const allowedPorts = policy.allowedPorts ?? DEFAULT_WEBHOOK_PORTS;
  const portAllowed = allowedPorts.includes(port);
  const literal = isIP(host);
  if (literal) {
    const reason = forbiddenAddressReason(host, policy.allowLoopback);
    if (reason) throw forbidden(reason, host, host);
    if (!portAllowed && !isLoopback(host)) throw portRefused(port, allowedPorts);
    return { address: host, family: literal === 6 ? 6 : 4 };
  }
  const nameReason = forbiddenHostnameReason(host, policy.allowLoopback);
  if (nameReason) throw forbidden(nameReason, undefined, host);
  // Only a loopback target may use another port, and only under allowLoopback: otherwise refuse before DNS.
  if (!portAllowed && !policy.allowLoopback) throw portRefused(port, allowedPorts);

  let answers: ResolvedAddress[];
  try {
    answers = await (policy.lookup ?? defaultLookup)(host);
  } catch (err) {
    // Our own refusals (lookup capacity) are not a verdict on the name.
    if (err instanceof AppError) throw err;
    const code = (err as { code?: unknown }).code;
    throw new AppError("BAD_REQUEST", `webhook_url host ${host} does not resolve${typeof code === "string" ? ` (${code})` : ""}`, {
      details: { field: "webhook_url", reason: "unresolvable" },
      cause: err,
    });
  }
  if (!answers.length) {
    throw new AppError("BAD_REQUEST", `webhook_url host ${host} does not resolve`, { details: { field: "webhook_url", reason: "unresolvable" } });
  }
  for (const a of answers) {
    const reason = forbiddenAddressReason(a.address, policy.allowLoopback);
    if (reason) throw forbidden(reason, a.address, `${host} → ${a.address}`);
  }
  if (!portAllowed && !answers.every((a) => isLoopback(a.address))) throw portRefused(port, allowedPorts);
  // Family from the address itself rather than from the resolver's (injectable) claim.
  const first = answers[0]!;
  return { address: first.address, family: isIP(first.address) === 6 ? 6 : 4 };
}
