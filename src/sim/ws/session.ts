/**
 * Contract between the websocket hub and the per-venue protocol sessions (one session per connection).
 */
import type { Clock } from "../clock.js";
import type { PerpModel } from "../perp-model.js";
import type { Tape } from "../tape.js";
import type { WsReplayTrack } from "./replay.js";

/** How a session talks to its socket; every send honours the venue's faults (silence, late pongs). */
export interface ConnIO {
  /** Connection id as the venue prints it (Bybit `conn_id`, OKX `connId`). */
  readonly connId: string;
  /** Sends a data frame (dropped while silenced). */
  sendData(text: string): void;
  /** Sends a reply (ack, error); dropped while silenced. */
  sendReply(text: string): void;
  /** Sends an application-level pong (delayed by `late_pong`, dropped while silenced). */
  sendPong(text: string): void;
  /** Wall-clock ms since the connection opened. */
  elapsed(): number;
  /** Closes the connection with a close frame. */
  close(code: number, reason: string): void;
}

/** Shared, read-only things a session needs. */
export interface SessionEnv {
  readonly perp: PerpModel;
  readonly tape: Tape;
  readonly clock: Clock;
  /** Recorded frames for this connection's path when replay is on for the venue. */
  readonly replay?: WsReplayTrack;
}

/** One connection's protocol state machine. */
export interface Session {
  /** A text (or binary, decoded) frame from the client. */
  onMessage(text: string): void;
  /**
   * Periodic push: send what the tape scheduled in [cursor, `now` + 1) for every subscription (sim clock `now`),
   * and replayed frames due by `elapsedMs` (wall time since the connection opened).
   */
  tick(now: number, elapsedMs: number): void;
  /** The start of a plausible data frame, cut short (for the `malformed` fault). */
  malformedSample(): string;
}

/** Replay cursor shared by the sessions: pushes recorded frames whose offset is due, for subscribed keys. */
export class ReplayCursor {
  #idx = 0;
  #startedAt: number | undefined;

  constructor(private readonly track: WsReplayTrack) {}

  /** Keys the recording covers (a session serves them from the recording where the model serves nothing). */
  covers(key: string): boolean {
    return this.track.keys.has(key);
  }

  /** Starts the replay clock (first subscription). */
  start(elapsedMs: number): void {
    this.#startedAt ??= elapsedMs;
  }

  /** Frames due at `elapsedMs` whose key passes `subscribed`, in recorded order. */
  due(elapsedMs: number, subscribed: (key: string) => boolean): Array<{ key: string; text: string; inner: string }> {
    const out: Array<{ key: string; text: string; inner: string }> = [];
    if (this.#startedAt === undefined) return out;
    const t = elapsedMs - this.#startedAt;
    const frames = this.track.frames;
    while (this.#idx < frames.length) {
      const f = frames[this.#idx];
      if (!f || f.offsetMs > t) break;
      this.#idx += 1;
      if (subscribed(f.key)) out.push({ key: f.key, text: f.text, inner: f.inner });
    }
    return out;
  }
}

/** Splits `items` into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
