import { z } from "zod";
import { defineTool, type AnyTool } from "../../src/registry/tool.js";
import { isoNow, Timestamp } from "../common.js";
import { CursorParam, page, PageFields, pager } from "../paging.js";
import { AlertId, alertService, alertView, AlertViewBase, beforePayment, ExtendInput, type AlertKindSpec } from "./common.js";

const EvmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte wallet address");

/** Most alerts one answer lists, pages included. */
const MAX_LISTED = 1000;
/**
 * Most alerts one MCP answer lists: an owner view carries the webhook URL (up to 2,048 characters), so 25 stay
 * within a model's context (docs/mcp.md, "Result sizes").
 */
const MCP_MAX_LISTED = 25;

/**
 * The four lifecycle endpoints of one alert kind (docs/alerts.md): read one (free; private fields only
 * with the manage token or an owner signature), cancel (free, manage token or owner signature), list
 * active (free; public fields, or with `wallet` and that wallet's signature its alerts in full), extend
 * (paid, settled before the extension is written; public fields). Creation is the kind's own tool.
 */
export function lifecycleTools(k: AlertKindSpec): AnyTool[] {
  const View = z.object({ ...AlertViewBase, ...k.conditionShape });
  const publicFields = `alert_id, type, symbol, status, ${Object.keys(k.conditionShape).join(", ")}, created_at and expires_at (visibility 'public')`;
  const privateFields = "webhook_url, owner, ended_at, last evaluation, trigger count and deliveries";
  const auth = `An anonymous caller sees only ${publicFields}. The owner view (visibility 'owner') adds ${privateFields}; it needs the manage token (Authorization: Bearer <manage_token>) or a signature by the owner (paying) wallet: X-Wallet-Signature = EIP-191 signature of 'marketgate:read:<alert_id>:<unix_seconds>' and X-Signed-At = those seconds (within 5 minutes).`;

  const get = defineTool({
    name: `${k.name}_get`,
    title: `Get a ${k.label}`,
    method: "GET",
    path: k.itemPath,
    priceUsd: "free",
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Status of a ${k.label}; delivery history for its owner`,
    mcpNote: "An anonymous caller sees only the public fields (visibility public); manage_token, or wallet_signature with signed_at, gives the owner view",
    description: `Record of a ${k.label}: status (active, cancelled, expired) and condition for anyone; for the owner also the webhook URL, owner wallet, end time, last evaluation, trigger count and the latest 10 webhook deliveries with their attempts and response codes. ${auth} Unknown id: 404.`,
    example: { id: k.exampleId },
    input: z.object({ id: AlertId }),
    output: View,
    acceptsCredentials: true,
    stateful: true,
    async handler({ id }, ctx, caller) {
      const svc = alertService(ctx);
      const a = await svc.require(k.kind, id);
      const visibility = (await svc.authorize(a, caller.credentials, "read")) ? "owner" : "public";
      return alertView(svc, a, { visibility, withDeliveries: true });
    },
  });

  const cancel = defineTool({
    name: `${k.name}_cancel`,
    title: `Cancel a ${k.label}`,
    method: "DELETE",
    path: k.itemPath,
    priceUsd: "free",
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Cancel an active ${k.label} (manage token or owner signature)`,
    description: `Cancels an active ${k.label} and its pending webhook retries. Needs the manage token (Authorization: Bearer <manage_token>) or a signature by the owner (paying) wallet: X-Wallet-Signature = EIP-191 signature of 'marketgate:cancel:<alert_id>:<unix_seconds>' and X-Signed-At = those seconds (within 5 minutes). Otherwise 403. Answers the owner view (every field). Cancelling a cancelled alert answers its record again; an expired one: 409.`,
    example: { id: k.exampleId },
    input: z.object({ id: AlertId }),
    output: View.extend({ message: z.string() }),
    acceptsCredentials: true,
    stateful: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    async handler({ id }, ctx, caller) {
      const svc = alertService(ctx);
      const a = await svc.cancel(k.kind, id, caller.credentials);
      return { ...(await alertView(svc, a, { visibility: "owner", withDeliveries: true })), message: `${k.label} ${a.id} is cancelled; no further webhooks will be sent.` };
    },
  });

  /** Pages of a listing, oldest first: the next page starts after the last alert served (created_at, then id). */
  const listPager = pager(
    `${k.name}s_list`,
    (input: { wallet?: string | undefined }) => [input.wallet?.toLowerCase() ?? null],
    z.strictObject({ created_ms: z.number().int(), id: z.string().max(120) }),
  );

  const list = defineTool({
    name: `${k.name}s_list`,
    title: `List active ${k.label}s`,
    method: "GET",
    path: k.listPath,
    priceUsd: "free",
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Active ${k.label}s (public fields), or one owner wallet's in full`,
    description: `Active ${k.label}s only, oldest first. Without wallet: every active ${k.label} with its public fields only (${publicFields}), never the owner, webhook or deliveries. With wallet (the owner, paying wallet): that wallet's alerts in the owner view (every field but deliveries), which needs a signature by that wallet: X-Wallet-Signature = EIP-191 signature of 'marketgate:list:<wallet in lowercase>:<unix_seconds>' and X-Signed-At = those seconds (within 5 minutes); without it 403, since the filter alone would tell who owns which alert. limit caps the alerts per answer (default and maximum ${MAX_LISTED}; over MCP ${MCP_MAX_LISTED}); truncated says more follow, and next_cursor (sent back as cursor) reads the next page.`,
    mcpNote: `At most ${MCP_MAX_LISTED} alerts per call; when truncated, call again with cursor = next_cursor`,
    mcpMaxima: { limit: MCP_MAX_LISTED },
    example: {},
    input: z
      .object({
        wallet: EvmAddress.optional().describe("owner wallet address filter; needs that wallet's signature"),
        limit: z.number().int().min(1).max(MAX_LISTED).optional().describe(`alerts, oldest first (default ${MAX_LISTED})`),
        cursor: CursorParam,
      })
      .superRefine(listPager.refine),
    output: z.object({ count: z.number().int(), wallet_filter: z.string().nullable(), alerts: z.array(View), ...PageFields, timestamp: Timestamp }),
    acceptsCredentials: true,
    stateful: true,
    async handler(input, ctx, caller) {
      const { wallet } = input;
      const svc = alertService(ctx);
      if (wallet) await svc.requireWallet(wallet, caller.credentials);
      const visibility = wallet ? "owner" : "public";
      const after = listPager.decode(input);
      // Listed oldest first by (created_at, id): the page starts after the cursor's alert.
      const all = await svc.listActive(k.kind, wallet);
      const rest = after ? all.filter((a) => a.createdAt > after.created_ms || (a.createdAt === after.created_ms && a.id > after.id)) : all;
      const paged = page(rest, Math.min(input.limit ?? rest.length, MAX_LISTED), (last) => listPager.encode(input, { created_ms: last.createdAt, id: last.id }));
      const alerts = await Promise.all(paged.items.map((a) => alertView(svc, a, { visibility, withDeliveries: false })));
      return { count: alerts.length, wallet_filter: wallet?.toLowerCase() ?? null, alerts, truncated: paged.truncated, next_cursor: paged.next_cursor, timestamp: isoNow(ctx) };
    },
  });

  const extend = defineTool({
    name: `${k.name}_extend`,
    title: `Extend a ${k.label}`,
    method: "POST",
    path: `${k.itemPath}/extend`,
    priceUsd: k.extendPriceUsd,
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Add hours to an active ${k.label}`,
    description: `Adds add_hours (1 to 168) to an active ${k.label}'s expiry; the remaining lifetime is capped at 168 h. Anyone may pay to extend (it only lengthens the alert), so the answer has the public fields only (visibility 'public'). Checked before payment: unknown id 404, not active 409, already at the cap 400. The payment settles before the extension is written.`,
    example: { id: k.exampleId, add_hours: 24 },
    input: ExtendInput,
    output: View.extend({ previous_expires_at: z.string(), added_hours: z.number(), message: z.string() }),
    paymentFlow: "upfront",
    stateful: true,
    // Only lengthens an alert: not destructive (MCP defaults destructiveHint to true when absent).
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    checkBeforePayment: async ({ id, add_hours }, ctx) => void (await beforePayment(() => alertService(ctx).extension(k.kind, id, add_hours))),
    async handler({ id, add_hours }, ctx) {
      const svc = alertService(ctx);
      const before = (await svc.require(k.kind, id)).expiresAt;
      const { alert, addedMs } = await svc.extend(k.kind, id, add_hours);
      const added = Math.round((addedMs / 3_600_000) * 1000) / 1000;
      return {
        ...(await alertView(svc, alert, { visibility: "public", withDeliveries: false })),
        previous_expires_at: new Date(before).toISOString(),
        added_hours: added,
        message: `${k.label} ${alert.id} now expires at ${new Date(alert.expiresAt).toISOString()}${added < add_hours ? ` (capped: ${added} h added, 168 h remaining at most)` : ""}.`,
      };
    },
  });

  return [get, cancel, list, extend];
}
