import { AsyncLocalStorage } from "node:async_hooks";

/** The values of {@link Completeness}. */
export const COMPLETENESS = ["any", "all"] as const;

/**
 * How complete a fanned-out answer must be: `any` (default) accepts a partial answer as long as no more
 * than half of the venues that list the symbol failed; `all` accepts only an answer from every such venue.
 */
export type Completeness = (typeof COMPLETENESS)[number];

/** The request a venue call is made for: its deadline and how complete its answer must be. */
export interface RequestScope {
  /** Absolute deadline, epoch ms: no venue call made for this request may run past it. */
  readonly deadlineAt: number;
  /** Aborted when the deadline passes (reason: a `TimeoutError` DOMException). */
  readonly signal: AbortSignal;
  /** Completeness the request asks for (`require` input field); `fanOut` and `optionalRead` enforce it. */
  readonly require: Completeness;
  /** The venue exchanges made for the request (shared with an enclosing {@link recordVenueExchanges}). */
  readonly venueLog: VenueLog;
}

const storage = new AsyncLocalStorage<RequestScope>();

/**
 * Runs `fn` in a new request scope ending `deadlineMs` from now. Every venue call started from `fn`
 * (and from what it awaits) sees the scope through {@link currentScope}; work started outside any scope
 * (alert scheduler, stream backfill) has none and keeps the clients' per-attempt limits only.
 * @returns what `fn` resolves to; rejects with what it throws.
 */
export function runInScope<T>(opts: { deadlineMs: number; require?: Completeness }, fn: () => Promise<T>): Promise<T> {
  const scope: RequestScope = {
    deadlineAt: Date.now() + opts.deadlineMs,
    // AbortSignal.timeout's timer is unref'd: a finished request leaves nothing keeping the process alive.
    signal: AbortSignal.timeout(opts.deadlineMs),
    require: opts.require ?? "any",
    venueLog: logStorage.getStore() ?? new VenueLog(),
  };
  return storage.run(scope, fn);
}

/** The scope of the request being served, or undefined outside requests (background jobs). */
export function currentScope(): RequestScope | undefined {
  return storage.getStore();
}

/** Name of the generic input field carrying the completeness requirement (`?require=all`). */
export const REQUIRE_FIELD = "require" as const;

/** The completeness a validated tool input asks for through {@link REQUIRE_FIELD}; `any` when absent. */
export function completenessOf(input: unknown): Completeness {
  return input && typeof input === "object" && (input as Record<string, unknown>)[REQUIRE_FIELD] === "all" ? "all" : "any";
}

/** Where an answer's data comes from: live venues, the simulator's model, or real recordings the simulator replays. */
export type DataSource = "live" | "simulated" | "replay";

/** One HTTP exchange with a venue, as `VenueHttpClient` saw it. */
export interface VenueExchange {
  readonly venue: string;
  /** `GET /fapi/v1/premiumIndex`: method and path relative to the venue's base URL, without the query. */
  readonly endpoint: string;
  /** HTTP status; undefined when no answer came (`failure`). */
  readonly status?: number;
  /** Why no answer came: the attempt timed out, or the venue could not be reached (refused, DNS, reset). */
  readonly failure?: "timeout" | "unreachable";
  /** The network error behind `unreachable` (`ECONNREFUSED`, `ENOTFOUND`), when known. */
  readonly detail?: string;
  /** Duration of the exchange. */
  readonly ms: number;
  /**
   * The simulator's `X-Sim-Source` answer header: `replay` when it answered with recorded data (then `recording`
   * names the file), `replay-instruments` for a recorded instrument list (reference data, not counted as a replay).
   */
  readonly simSource?: string;
  readonly recording?: string;
}

/** Exchanges kept per log (a request makes a few dozen at most). */
const MAX_EXCHANGES = 500;

/** The venue exchanges of one request, or of one doctor check. */
export class VenueLog {
  readonly exchanges: VenueExchange[] = [];
  #replayed = false;
  #listeners: Array<(x: VenueExchange) => void> = [];

  /** Records one exchange (the first {@link MAX_EXCHANGES}) and tells the listeners. */
  note(x: VenueExchange): void {
    if (this.exchanges.length < MAX_EXCHANGES) this.exchanges.push(x);
    if (x.simSource === "replay") this.#replayed = true;
    for (const l of this.#listeners) l(x);
  }

  /** Whether a venue answered with recorded data (`X-Sim-Source: replay`). */
  get replayed(): boolean {
    return this.#replayed;
  }

  /** Calls `fn` on every exchange noted from now on. */
  onNote(fn: (x: VenueExchange) => void): void {
    this.#listeners.push(fn);
  }
}

const logStorage = new AsyncLocalStorage<VenueLog>();

/** Runs `fn` so that every request scope started inside it records its venue exchanges into `log`. */
export function recordVenueExchanges<T>(log: VenueLog, fn: () => Promise<T>): Promise<T> {
  return logStorage.run(log, fn);
}

/**
 * Services whose configuration says the simulator replays recordings (`SIM_REPLAY=on`), by the venue-health registry
 * their venue clients share: only their clients take the simulator's `X-Sim-Source` marks into account.
 */
const replayServices = new WeakSet<object>();

/** Takes the simulator's replay marks into account for the venue clients sharing `service` (`SIM_REPLAY=on`). */
export function acceptSimReplayMarks(service: object): void {
  replayServices.add(service);
}

/** What the simulator replayed per venue endpoint, per service. */
type ReplaySeen = Map<string, { kind: "data" | "instruments"; recording?: string; answers: number; lastAt: number }>;
const replayedByService = new WeakMap<object, ReplaySeen>();

/**
 * Records one venue exchange into the current request's log (or the enclosing {@link recordVenueExchanges} log).
 * The simulator's marks count only for a service that accepts them ({@link acceptSimReplayMarks}); then a replayed
 * exchange is also remembered for `/api/v1/status`.
 */
export function noteVenueExchange(x: VenueExchange, service?: object): void {
  const accepted = service !== undefined && replayServices.has(service);
  const exchange = x.simSource === undefined || accepted ? x : { ...x, simSource: undefined, recording: undefined };
  (storage.getStore()?.venueLog ?? logStorage.getStore())?.note(exchange);
  if (!accepted || (x.simSource !== "replay" && x.simSource !== "replay-instruments")) return;
  const seen: ReplaySeen = replayedByService.get(service) ?? new Map();
  replayedByService.set(service, seen);
  const key = `${x.venue} ${x.endpoint}`;
  const prev = seen.get(key);
  seen.set(key, { kind: x.simSource === "replay" ? "data" : "instruments", recording: x.recording, answers: (prev?.answers ?? 0) + 1, lastAt: Date.now() });
}

/** The venue endpoints whose answers the simulator marked as replayed, for the service owning `service`. */
export function replayedEndpoints(
  service: object,
): Array<{ venue: string; endpoint: string; kind: "data" | "instruments"; recording: string | null; answers: number; lastAt: number }> {
  return [...(replayedByService.get(service) ?? new Map())].map(([key, v]) => {
    const i = key.indexOf(" ");
    return { venue: key.slice(0, i), endpoint: key.slice(i + 1), kind: v.kind, recording: v.recording ?? null, answers: v.answers, lastAt: v.lastAt };
  });
}

/** Runner keys whose latest answer used replayed data, kept per labeller. */
const MAX_REPLAYED_KEYS = 10_000;

/** The label of one request, updated as its venue answers arrive. */
export interface DataSourceTracker {
  /** The answer the request is for (the runner's cache key): a cached or shared replayed answer keeps its label. */
  key(key: string): void;
}

/**
 * Labels answers by data source (`X-Data-Source`, MCP `_meta["marketgate/data-source"]`). In live mode every answer
 * is `live`. In sim mode an answer is `replay` when a venue answer of its request was recorded data (the simulator
 * says so with `X-Sim-Source: replay`, `VenueHttpClient` notes it in the request scope, and `SIM_REPLAY=on` lets the
 * service take it into account), and `simulated` otherwise. Recorded instrument lists (`replay-instruments`) decide
 * which symbols are listed, not the numbers of an answer: they do not make it a replay.
 * The labels of replayed answers are remembered by runner key, so that the cache hit of a replayed answer, or a
 * request sharing another's execution (single-flight, or the answer the runner holds for the tool's TTL), is
 * labelled `replay` too. Venue data the clients keep between requests (instrument lists, candles for a minute,
 * GeckoTerminal pool lists) carries no label of its own.
 */
export class DataSourceLabels {
  readonly #mode: "live" | "sim";
  readonly #replayedKeys = new Map<string, true>();
  readonly #active = new Map<string, Set<() => void>>();

  constructor(dataMode: "live" | "sim") {
    this.#mode = dataMode;
  }

  /**
   * Runs one request's handling: `onLabel` gets the label at once and again whenever it changes; `fn` gets the
   * tracker to give the request's key to. @returns what `fn` resolves to.
   */
  async track<T>(onLabel: (label: DataSource) => void, fn: (tracker: DataSourceTracker) => Promise<T>): Promise<T> {
    if (this.#mode === "live") {
      onLabel("live");
      return fn({ key: () => undefined });
    }
    const log = new VenueLog();
    let key: string | undefined;
    let shared = false;
    let label: DataSource = "simulated";
    onLabel(label);
    const update = () => {
      const next: DataSource = log.replayed || shared || (key !== undefined && log.exchanges.length === 0 && this.#replayedKeys.has(key)) ? "replay" : "simulated";
      if (next !== label) onLabel((label = next));
    };
    const onShared = () => {
      shared = true;
      update();
    };
    log.onNote((x) => {
      if (x.simSource === "replay" && key !== undefined) {
        // Remembered now, not when this request ends: others may be given its answer before then (a paid
        // request settles first; the runner shares the answer meanwhile).
        this.#remember(key);
        for (const other of this.#active.get(key) ?? []) if (other !== onShared) other();
      }
      update();
    });
    const tracker: DataSourceTracker = {
      key: (k) => {
        key = k;
        const peers = this.#active.get(k) ?? new Set();
        peers.add(onShared);
        this.#active.set(k, peers);
        update();
      },
    };
    try {
      return await recordVenueExchanges(log, () =>
        labelStorage.run(
          () => label,
          () => fn(tracker),
        ),
      );
    } finally {
      if (key !== undefined) {
        const peers = this.#active.get(key);
        peers?.delete(onShared);
        if (peers?.size === 0) this.#active.delete(key);
        if (log.replayed) this.#remember(key);
        else if (log.exchanges.length > 0) this.#replayedKeys.delete(key);
      }
    }
  }

  /**
   * The label of an answer served from the response cache under runner key `key` without {@link track} (the
   * cache-hit fast paths). A hit calls no venue, so this is what `track` gives a hit: `replay` when the cached
   * answer was a replay, else the mode's label.
   */
  labelOfHit(key: string): DataSource {
    if (this.#mode === "live") return "live";
    return this.#replayedKeys.has(key) ? "replay" : "simulated";
  }

  #remember(key: string): void {
    this.#replayedKeys.delete(key);
    this.#replayedKeys.set(key, true);
    if (this.#replayedKeys.size > MAX_REPLAYED_KEYS) this.#replayedKeys.delete(this.#replayedKeys.keys().next().value!);
  }

  /** The label of the request being run by {@link track} now (the mode's label outside one). */
  current(): DataSource {
    if (this.#mode === "live") return "live";
    return labelStorage.getStore()?.() ?? "simulated";
  }
}

/** The current label of the request {@link DataSourceLabels.track} is running. */
const labelStorage = new AsyncLocalStorage<() => DataSource>();
