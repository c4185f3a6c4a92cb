/** Per-venue reachability as seen by the adapters' real calls (passive: no probes spend venue budget). */
export interface VenueState {
  venue: string;
  /** true after a successful call, false after a failed one, null before any call. */
  reachable: boolean | null;
  last_ok_at: string | null;
  last_error_at: string | null;
  last_error: string | null;
  requests: number;
  errors: number;
}

/** Tracks the outcome of upstream calls per venue for `/api/v1/status`. */
export class VenueHealth {
  private readonly states = new Map<string, VenueState>();

  constructor(venues: readonly string[] = []) {
    for (const v of venues) this.state(v);
  }

  private state(venue: string): VenueState {
    let s = this.states.get(venue);
    if (!s) {
      s = { venue, reachable: null, last_ok_at: null, last_error_at: null, last_error: null, requests: 0, errors: 0 };
      this.states.set(venue, s);
    }
    return s;
  }

  /** Records a successful upstream response. */
  ok(venue: string, at = new Date()): void {
    const s = this.state(venue);
    s.requests++;
    s.reachable = true;
    s.last_ok_at = at.toISOString();
  }

  /** Records a failed upstream call with a short, caller-safe reason (no URLs or keys). */
  fail(venue: string, reason: string, at = new Date()): void {
    const s = this.state(venue);
    s.requests++;
    s.errors++;
    s.reachable = false;
    s.last_error_at = at.toISOString();
    s.last_error = reason;
  }

  /** A snapshot of every venue's state. */
  snapshot(): VenueState[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }
}
