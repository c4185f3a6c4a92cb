/**
 * Websocket fault injection for the simulated perp venues (`sim.wsFaults`), keyed by venue.
 *
 * Durations are wall-clock milliseconds (sockets live in real time, whatever the simulator clock says).
 * - `drop`: terminate every open connection of the venue now (no close frame; the client sees code 1006).
 * - `silence`: keep connections open but send nothing (data, acks, app-level and protocol pongs, server pings) for
 *   `ms` (default: until cleared). Data that falls due meanwhile is LOST, like a stalled real stream (a gap).
 * - `late_pong`: delay every pong (app-level `pong` replies and protocol pong frames) by `ms` until cleared.
 * - `malformed`: send `count` unparsable frames (a truncated venue message) to every open connection now.
 * - `refuse`: answer new upgrade requests with HTTP `status` (default 503) for `ms` (default: until cleared).
 */
import { performance } from "node:perf_hooks";
import { PERP_VENUES, type PerpVenue } from "../../venues/perp/types.js";

/** Venues with simulated websockets: every perpetual venue (each has a feed; src/venues/perp/types.ts). */
export type WsVenue = PerpVenue;
export const WS_VENUES: readonly WsVenue[] = PERP_VENUES;

/** A websocket fault (see the module comment). */
export type WsFault =
  | { kind: "drop" }
  | { kind: "silence"; ms?: number }
  | { kind: "late_pong"; ms: number }
  | { kind: "malformed"; count?: number }
  | { kind: "refuse"; ms?: number; status?: number };

/** What the controller needs from one open connection. */
export interface WsFaultTarget {
  readonly venue: WsVenue;
  /** Abort the connection without a close frame. */
  terminate(): void;
  /** Send `count` malformed frames now. */
  sendMalformed(count: number): void;
}

interface VenueState {
  silencedUntil: number;
  pongDelayMs: number;
  refusedUntil: number;
  refuseStatus: number;
  upgrades: number;
}

const now = (): number => performance.now();

function assertMs(name: string, ms: number): void {
  if (Number.isNaN(ms) || ms < 0) throw new RangeError(`${name} must be >= 0 ms, got ${ms}`);
}

/** Holds the websocket fault state of every venue and the open connections faults act on. */
export class WsFaultController {
  readonly #state = new Map<WsVenue, VenueState>();
  readonly #targets = new Set<WsFaultTarget>();

  #venue(venue: WsVenue): VenueState {
    let s = this.#state.get(venue);
    if (!s) {
      s = { silencedUntil: 0, pongDelayMs: 0, refusedUntil: 0, refuseStatus: 503, upgrades: 0 };
      this.#state.set(venue, s);
    }
    return s;
  }

  /** Applies `fault` to `venue`. Returns the number of connections acted on (drop/malformed), else 0. */
  inject(venue: WsVenue, fault: WsFault): number {
    switch (fault.kind) {
      case "drop":
        return this.drop(venue);
      case "silence":
        this.silence(venue, fault.ms);
        return 0;
      case "late_pong":
        this.latePong(venue, fault.ms);
        return 0;
      case "malformed":
        return this.malformed(venue, fault.count);
      case "refuse":
        this.refuse(venue, fault.ms, fault.status);
        return 0;
    }
  }

  /** Terminates every open connection of `venue`; returns how many. */
  drop(venue: WsVenue): number {
    const list = [...this.#targets].filter((t) => t.venue === venue);
    for (const t of list) t.terminate();
    return list.length;
  }

  /** Stops all sending on `venue` for `ms` (default until {@link clear}). */
  silence(venue: WsVenue, ms = Infinity): void {
    assertMs("silence", ms);
    this.#venue(venue).silencedUntil = now() + ms;
  }

  /** Delays every pong on `venue` by `ms` until cleared (0 = no delay). */
  latePong(venue: WsVenue, ms: number): void {
    assertMs("late_pong", ms);
    if (!Number.isFinite(ms)) throw new RangeError("late_pong delay must be finite");
    this.#venue(venue).pongDelayMs = ms;
  }

  /** Sends `count` (default 1) malformed frames to every open connection of `venue`; returns how many connections. */
  malformed(venue: WsVenue, count = 1): number {
    if (!(Number.isInteger(count) && count > 0)) throw new RangeError(`malformed count must be a positive integer, got ${count}`);
    const list = [...this.#targets].filter((t) => t.venue === venue);
    for (const t of list) t.sendMalformed(count);
    return list.length;
  }

  /** Rejects new upgrades on `venue` with HTTP `status` (default 503) for `ms` (default until cleared). */
  refuse(venue: WsVenue, ms = Infinity, status = 503): void {
    assertMs("refuse", ms);
    if (!(Number.isInteger(status) && status >= 400 && status <= 599)) throw new RangeError(`refuse status must be 4xx/5xx, got ${status}`);
    const s = this.#venue(venue);
    s.refusedUntil = now() + ms;
    s.refuseStatus = status;
  }

  /** Clears silence, late pongs and refusals of `venue` (or of every venue). Counters are kept. */
  clear(venue?: WsVenue): void {
    for (const v of venue === undefined ? WS_VENUES : [venue]) {
      const s = this.#venue(v);
      s.silencedUntil = 0;
      s.pongDelayMs = 0;
      s.refusedUntil = 0;
      s.refuseStatus = 503;
    }
  }

  /** True while `venue` is silenced. */
  isSilenced(venue: WsVenue): boolean {
    return this.#venue(venue).silencedUntil > now();
  }

  /** Current pong delay of `venue`, ms. */
  pongDelay(venue: WsVenue): number {
    return this.#venue(venue).pongDelayMs;
  }

  /** HTTP status to refuse an upgrade with, or undefined when upgrades are accepted. */
  refusal(venue: WsVenue): number | undefined {
    const s = this.#venue(venue);
    return s.refusedUntil > now() ? s.refuseStatus : undefined;
  }

  /** Open connections of `venue` (legacy silent Binance paths included). */
  connections(venue: WsVenue): number {
    let n = 0;
    for (const t of this.#targets) if (t.venue === venue) n += 1;
    return n;
  }

  /** Upgrade requests seen for `venue` (refused and 404 ones included). */
  upgrades(venue: WsVenue): number {
    return this.#venue(venue).upgrades;
  }

  /** @internal Called by the hub. */
  countUpgrade(venue: WsVenue): void {
    this.#venue(venue).upgrades += 1;
  }

  /** @internal Called by the hub when a connection opens / closes. */
  register(t: WsFaultTarget): void {
    this.#targets.add(t);
  }

  /** @internal */
  unregister(t: WsFaultTarget): void {
    this.#targets.delete(t);
  }
}
