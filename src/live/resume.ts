import type { LiveEvent } from "./types.js";

/**
 * Most events one resume replays, whatever the window: the newest are kept. A stream-minute costs 0.002
 * USD while `/liquidation/recent` sells up to 1,000 liquidations for 0.03, so a resume is a reconnect, not
 * a cheap way to buy the store.
 */
export const RESUME_MAX_EVENTS = 200;

/** How much a resume (`Last-Event-ID`) replays. */
export interface ResumeLimits {
  /**
   * Only events of this last span are replayed, ms (`LIVE_RESUME_WINDOW_SEC`): liquidations by their time,
   * CVD buckets by their end. A client away for less than this gets everything it missed.
   */
  windowMs: number;
  /** At most this many events are replayed, the newest ({@link RESUME_MAX_EVENTS}). */
  maxEvents: number;
}

/** The limits when none are configured: 10 minutes, {@link RESUME_MAX_EVENTS} events. */
export const DEFAULT_RESUME_LIMITS: ResumeLimits = { windowMs: 600_000, maxEvents: RESUME_MAX_EVENTS };

/** What a feed tells {@link boundReplay} about one resume. */
export interface ReplayRequest {
  /** The client's `Last-Event-ID`. */
  lastEventId: string;
  /** The events after it that the window holds, oldest first. */
  events: LiveEvent[];
  /** Whether held events between `lastEventId` and the window were left out (the resume point is older than the window). */
  beforeWindow: boolean;
  /** Epoch ms where the window starts. */
  windowStart: number;
  /** Where the rest can be bought (`GET /cvd/history/BTC?period=24h`). */
  rest: string;
}

/**
 * The replay of a resume within `limits`: `req.events` cut to the newest `limits.maxEvents`, preceded by a
 * `replay_truncated` event (no id) when anything after the client's `Last-Event-ID` was left out, saying
 * which id the replay starts with (`oldest_id_served`, null when none) and where to buy the rest.
 */
export function boundReplay(req: ReplayRequest, limits: ResumeLimits): LiveEvent[] {
  const cut = req.events.length > limits.maxEvents;
  const events = cut ? req.events.slice(req.events.length - limits.maxEvents) : req.events;
  if (!cut && !req.beforeWindow) return events;
  const windowSec = Math.round(limits.windowMs / 1000);
  const truncated: LiveEvent = {
    event: "replay_truncated",
    data: {
      reason: `a resume replays at most the last ${windowSec} s and ${limits.maxEvents} events; earlier events after your Last-Event-ID were not replayed`,
      last_event_id: req.lastEventId,
      oldest_id_served: events[0]?.id ?? null,
      window_start: new Date(req.windowStart).toISOString(),
      window_sec: windowSec,
      max_events: limits.maxEvents,
      rest: req.rest,
    },
  };
  return [truncated, ...events];
}
