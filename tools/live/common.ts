import { z } from "zod";

/** Events every stream may send besides its topic's own (SSE event names; WebSocket `event` field). */
export const CONTROL_EVENTS = {
  debit: z
    .object({
      topic: z.string(),
      minute: z.number().int().describe("1 for the minute paid when the stream opened, then 2, 3, …"),
      price_usd: z.string().describe("debited for this minute"),
      remaining_usd: z.string().describe("credits left after the debit"),
      session: z.string().optional().describe("a fresh X-Credits-Session token (reopen streams with it and Last-Event-ID, no new signature)"),
      receipt: z
        .object({ format: z.literal("jws"), signature: z.string() })
        .optional()
        .describe("the minute's receipt signed by the service (offer-receipt extension, JWS; docs/receipts.md), when receipts are on"),
    })
    .describe("a stream-minute was debited from prepaid credits (sent at the start of each minute)"),
  payment_required: z
    .object({
      topic: z.string(),
      reason: z.string().describe("credits_insufficient_balance or a cap refusal, with details"),
      top_up: z.object({ method: z.literal("POST"), path: z.string(), body: z.object({ amount_usd: z.string() }) }),
    })
    .describe("the next minute could not be paid: the stream closes after this event"),
  gap: z
    .object({ reason: z.string() })
    .describe("the Last-Event-ID is older than what the stores hold (liquidations: 24 h and the newest 1,000; CVD: 7 days): events between it and the replay were not kept"),
  replay_truncated: z
    .object({
      reason: z.string(),
      last_event_id: z.string().describe("the Last-Event-ID the stream was resumed from"),
      oldest_id_served: z.string().nullable().describe("the first event the replay sends (null: none); the events between last_event_id and it were not replayed"),
      window_start: z.string().describe("ISO time: only events of the window from here (liquidation time, CVD bucket end) are replayed"),
      window_sec: z.number().int().describe("the resume window, LIVE_RESUME_WINDOW_SEC"),
      max_events: z.number().int().describe("most events one resume replays (the newest)"),
      rest: z.string().describe("the REST call that sells what was not replayed"),
    })
    .describe(
      "sent first when a resume replays less than what was missed (a Last-Event-ID older than the resume window, or more events than a resume replays): buy the rest over REST",
    ),
  dropped: z.object({ reason: z.string() }).describe("the server closes the stream (slow consumer, shutdown); reconnect with Last-Event-ID to resume"),
} as const;
