import { DEFAULT_CIRCUIT_POLICY, VenueCircuit, type CircuitPolicy, type CircuitStateName } from "./circuit.js";

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
  /** The venue's circuit breaker (see {@link CircuitStateName}); `closed` before any call. */
  circuit: CircuitStateName;
}

/**
 * Tracks the outcome of upstream calls per venue for `/api/v1/status`, and holds each venue's circuit
 * breaker: one per venue key, shared by every client of that venue (Binance futures and spot are one venue).
 */
export class VenueHealth {
  private readonly states = new Map<string, Omit<VenueState, "circuit">>();
  private readonly circuits = new Map<string, VenueCircuit>();
  private circuitPolicy: CircuitPolicy = DEFAULT_CIRCUIT_POLICY;

  constructor(venues: readonly string[] = []) {
    for (const v of venues) this.state(v);
  }

  private state(venue: string): Omit<VenueState, "circuit"> {
    let s = this.states.get(venue);
    if (!s) {
      s = { venue, reachable: null, last_ok_at: null, last_error_at: null, last_error: null, requests: 0, errors: 0 };
      this.states.set(venue, s);
    }
    return s;
  }

  /**
   * Sets when circuits open and how long they stay open. Circuits already created are replaced (closed):
   * call it while wiring, before traffic.
   */
  configureCircuits(policy: CircuitPolicy): void {
    this.circuitPolicy = policy;
    this.circuits.clear();
  }

  /** The circuit breaker of `venue` (created closed on first use; the venue joins the snapshot). */
  circuit(venue: string): VenueCircuit {
    let c = this.circuits.get(venue);
    if (!c) {
      this.state(venue);
      c = new VenueCircuit(venue, this.circuitPolicy);
      this.circuits.set(venue, c);
    }
    return c;
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
    return [...this.states.values()].map((s) => ({ ...s, circuit: this.circuits.get(s.venue)?.state ?? "closed" }));
  }
}
