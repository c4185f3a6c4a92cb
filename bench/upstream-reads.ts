/**
 * Counts the venue reads of a benchmark's service: every request to a venue is recorded as the venue gets
 * it, and one read is one distinct request (venue, method, path, query string, body). A tool may need
 * several reads of one venue (several endpoints, one request per pool or contract, pages); a call beyond
 * one per read is the same request made again, which nothing coalesced.
 */

/** One venue's reads during a measurement. */
export interface VenueReads {
  venue: string;
  /** Distinct requests. */
  reads: number;
  /** Requests sent (repeats and retries included). */
  calls: number;
  /** The reads per endpoint (`GET /fapi/v1/premiumIndex?symbol`; addresses as `*`), with how many of each. */
  endpoints: Record<string, number>;
  /** Requests sent more than once (`GET /path?query body`), with how many times. */
  repeated: Record<string, number>;
}

interface Sent {
  venue: string;
  method: string;
  /** Path and query, relative to the venue's base URL. */
  target: string;
  body: string;
  /** Time from the request to its response's headers, ms (undefined while in flight or when it failed). */
  ms?: number;
}

/** A path segment naming a token or pool (hex or base58, so with digits) rather than an endpoint (`topLongShortPositionRatio`). */
const isAddress = (segment: string) => segment.length >= 16 && /\d/.test(segment);

/** The endpoint of a request: its path with addresses as `*`, its query's parameter names, and a JSON body's `type`. */
function endpointOf(r: Sent): string {
  const [path = "", query] = r.target.split("?", 2);
  const names = query ? [...new URLSearchParams(query).keys()].join("&") : "";
  let type = "";
  try {
    const parsed = JSON.parse(r.body) as { type?: unknown };
    if (typeof parsed?.type === "string") type = ` ${parsed.type}`;
  } catch {
    // not a JSON body: the path says it all
  }
  return `${r.method} ${path
    .split("/")
    .map((s) => (isAddress(s) ? "*" : s))
    .join("/")}${names ? `?${names}` : ""}${type}`;
}

/**
 * Records the requests this process sends to the venues at `baseUrls` (venue key → base URL, no trailing
 * slash). It wraps `fetch`, which every venue client calls: the simulator counts requests per venue but
 * cannot say which were the same read.
 */
export class UpstreamRecorder {
  readonly #sent: Sent[] = [];
  readonly #bases: Array<[venue: string, base: string]>;

  constructor(baseUrls: Readonly<Record<string, string>>) {
    // Longest first: `/binance-spot` is not a `/binance` request.
    this.#bases = Object.entries(baseUrls).sort((a, b) => b[1].length - a[1].length);
    const fetchOnce = globalThis.fetch;
    globalThis.fetch = (input, init) => {
      const sent = this.#note(input instanceof Request ? input.url : String(input), init);
      const t0 = performance.now();
      const res = fetchOnce(input, init);
      if (sent) void res.then(() => (sent.ms = performance.now() - t0)).catch(() => undefined);
      return res;
    };
  }

  #note(url: string, init: RequestInit | undefined): Sent | undefined {
    const hit = this.#bases.find(([, base]) => url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`));
    if (!hit) return undefined;
    const sent: Sent = { venue: hit[0], method: init?.method ?? "GET", target: url.slice(hit[1].length) || "/", body: typeof init?.body === "string" ? init.body : "" };
    this.#sent.push(sent);
    return sent;
  }

  /**
   * The slowest single venue request sent since `mark` (request to response headers, ms), or undefined when
   * none was sent: what a tool reading its venues in parallel cannot be faster than.
   */
  slowestReadSince(mark: number): number | undefined {
    let slowest: number | undefined;
    for (const r of this.#sent.slice(mark)) if (r.ms !== undefined && (slowest === undefined || r.ms > slowest)) slowest = r.ms;
    return slowest;
  }

  /** A position in the record: {@link readsSince} counts what was sent after it. */
  mark(): number {
    return this.#sent.length;
  }

  /** Reads and calls per venue sent since `mark`, venues in the order of their first request. */
  readsSince(mark: number): VenueReads[] {
    const byVenue = new Map<string, Map<string, { count: number; endpoint: string }>>();
    for (const r of this.#sent.slice(mark)) {
      const reads = byVenue.get(r.venue) ?? new Map<string, { count: number; endpoint: string }>();
      byVenue.set(r.venue, reads);
      const key = `${r.method} ${r.target}${r.body ? ` ${r.body}` : ""}`;
      const read = reads.get(key) ?? { count: 0, endpoint: endpointOf(r) };
      read.count++;
      reads.set(key, read);
    }
    return [...byVenue].map(([venue, reads]) => {
      const endpoints: Record<string, number> = {};
      const repeated: Record<string, number> = {};
      let calls = 0;
      for (const [key, { count, endpoint }] of reads) {
        endpoints[endpoint] = (endpoints[endpoint] ?? 0) + 1;
        if (count > 1) repeated[key] = count;
        calls += count;
      }
      return { venue, reads: reads.size, calls, endpoints, repeated };
    });
  }
}
