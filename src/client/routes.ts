/*
 * The shapes of the client's route table (src/client/tools.generated.ts, written by `npm run client:generate` from
 * the registry). The table is data only: the client reads it at run time without importing the registry, whose
 * tools import the server (venues, stores, analytics).
 */

/** HTTP method of a tool's route. */
export type RouteMethod = "GET" | "POST" | "DELETE";

/** How to call one registry tool over HTTP. */
export interface ToolRoute {
  readonly method: RouteMethod;
  /** Express-style path; each `:name` segment is the input field of that name. */
  readonly path: string;
  /** Decimal USD charged per call, or `"free"`. */
  readonly priceUsd: string;
  /** The price depends on the input (a credits top-up costs the amount credited: `amount_usd`); `priceUsd` is the minimum. */
  readonly priceField?: string;
  /** Cursor-paged (tools/paging.ts): the input takes `cursor`, the answer has `truncated` and `next_cursor`. */
  readonly paged?: boolean;
  /** The answer's list of items of a paged tool (its first top-level array field), when it has one. */
  readonly items?: string;
  /** The (free) tool acts for a wallet proven by a Sign-In-With-X proof. */
  readonly auth?: "siwx";
  /** The tool reads caller credentials (alerts: manage token, owner-wallet signature) from headers. */
  readonly credentials?: boolean;
}

/** How to open one paid live stream (Server-Sent Events), paid per minute from prepaid credits. */
export interface StreamRoute {
  /** SSE path; `:symbol` when the topic is per symbol. */
  readonly path: string;
  readonly symbol: "required" | "optional";
  /** Decimal USD debited from credits at the start of each stream-minute. */
  readonly pricePerMinuteUsd: string;
  /** The topic's own event names (besides the control events every stream may send). */
  readonly events: readonly string[];
}
