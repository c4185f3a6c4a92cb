/**
 * The venue families of `GET /ready` (`perp_venues`, `dex_venues`, `cex_venues`): a family is ready when one of its
 * venues answers. A venue counts when the service's own calls to it succeeded recently (the venue health states,
 * `/api/v1/status`); only a family with no recent success is probed, with the doctor's probes (`probes.ts`), one
 * venue at a time in order until one answers: the next venue is tried when a probe fails or has not answered within
 * `hedgeMs`, so a hanging venue costs little time. The venues with small budgets (GeckoTerminal, CoinGecko) are
 * probed only when the others all failed.
 */
import type { Venues } from "../core/context.js";
import type { VenueHealth, VenueState } from "../core/venue-health.js";
import { VENUES } from "../venues/index.js";
import { binanceSpotPrice, coingeckoSimplePrice, dexscreenerTokens, geckoterminalOhlcv, perpFunding, type VenueProbe } from "./probes.js";
import { timed, type ComponentReadiness } from "./readiness-check.js";

/**
 * A family of venues and the probe of each. `scarce`: a small request budget (GeckoTerminal about 30/min,
 * CoinGecko's public plan 5/min), probed only when no other venue of the family answered.
 */
export interface VenueFamily {
  /** The component name in the `/ready` answer. */
  component: string;
  venues: ReadonlyArray<{ venue: string; scarce?: boolean; probe: VenueProbe }>;
}

/** Every family, in answer order. */
export const VENUE_FAMILIES: readonly VenueFamily[] = [
  {
    component: "perp_venues",
    // The venues whose definition says `readinessProbe`, in VENUES order.
    venues: VENUES.filter((v) => v.readinessProbe).map((v) => ({ venue: v.id, probe: perpFunding(v.id) })),
  },
  {
    component: "dex_venues",
    venues: [
      { venue: "dexscreener", probe: dexscreenerTokens },
      { venue: "geckoterminal", scarce: true, probe: geckoterminalOhlcv(1) },
    ],
  },
  {
    component: "cex_venues",
    venues: [
      // Binance spot first: its budget is far larger than CoinGecko's. Binance's health state covers spot and futures.
      { venue: "binance", probe: binanceSpotPrice },
      { venue: "coingecko", scarce: true, probe: coingeckoSimplePrice },
    ],
  },
];

/** What a family check reads, and its bounds (ms). */
export interface VenueFamilyDeps {
  health: VenueHealth;
  venues: Venues;
  /** A venue call that succeeded within this window counts as reachable without a probe. */
  recentMs: number;
  /** Longest wait for one probe. */
  timeoutMs: number;
  /** A probe that has not answered within this long starts the next venue's. */
  hedgeMs: number;
}

type ProbeOutcome = { ok?: { venue: string; latency_ms?: number }; failed: Array<{ venue: string; error: string }> };

/**
 * `ok` through the first venue of the family with a recent success (`via: "recent_call"`); else probed (see the
 * module comment), `ok` with `via: "probe"` if one answers, with the failures seen by then in `failed`; else `fail`.
 */
export async function familyReadiness(f: VenueFamily, deps: VenueFamilyDeps): Promise<ComponentReadiness> {
  const states = new Map(deps.health.snapshot().map((s) => [s.venue, s]));
  const at = Date.now();
  const recent = (s: VenueState | undefined) =>
    s !== undefined && s.reachable === true && s.circuit !== "open" && s.last_ok_at !== null && at - Date.parse(s.last_ok_at) <= deps.recentMs;
  const fresh = f.venues.find((v) => recent(states.get(v.venue)));
  if (fresh) return { status: "ok", venue: fresh.venue, via: "recent_call", last_ok_at: states.get(fresh.venue)!.last_ok_at };
  const first = await probeInOrder(
    f.venues.filter((v) => !v.scarce),
    deps,
  );
  const second = first.ok
    ? undefined
    : await probeInOrder(
        f.venues.filter((v) => v.scarce),
        deps,
      );
  const ok = first.ok ?? second?.ok;
  const failed = [...first.failed, ...(second?.failed ?? [])];
  if (ok) return { status: "ok", venue: ok.venue, via: "probe", latency_ms: ok.latency_ms, ...(failed.length ? { failed } : {}) };
  return { status: "fail", error: `no ${f.component.replace("_venues", "")} venue reachable`, failed };
}

/**
 * Probes `list` one venue at a time until one answers; the next starts when a probe fails or is still running
 * after `hedgeMs`. Resolves at the first success (later answers are ignored) or when all failed; `failed` lists
 * the failures seen by then, in list order.
 */
function probeInOrder(list: VenueFamily["venues"], deps: VenueFamilyDeps): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const failed: Array<{ i: number; venue: string; error: string }> = [];
    const report = () => failed.sort((a, b) => a.i - b.i).map(({ venue, error }) => ({ venue, error }));
    let next = 0;
    let running = 0;
    let done = false;
    const launch = (): void => {
      if (done || next >= list.length) return;
      const i = next++;
      const v = list[i]!;
      running++;
      const hedge = setTimeout(launch, deps.hedgeMs);
      void timed(() => v.probe(deps.venues).then(() => undefined), deps.timeoutMs).then((r) => {
        clearTimeout(hedge);
        running--;
        if (done) return;
        if (r.status === "ok") {
          done = true;
          return resolve({ ok: { venue: v.venue, latency_ms: r.latency_ms }, failed: report() });
        }
        failed.push({ i, venue: v.venue, error: r.error ?? "failed" });
        if (next < list.length) launch();
        else if (running === 0) {
          done = true;
          resolve({ failed: report() });
        }
      });
    };
    if (list.length === 0) return resolve({ failed: [] });
    launch();
  });
}
