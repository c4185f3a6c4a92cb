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
  dropped: z.object({ reason: z.string() }).describe("the server closes the stream (slow consumer, shutdown); reconnect with Last-Event-ID to resume"),
} as const;
