import { z } from "zod";
import { defineTool, type AnyTool } from "../../src/registry/tool.js";
import { isoNow, Timestamp } from "../common.js";
import { AlertId, alertService, alertView, AlertViewBase, beforePayment, ExtendInput, type AlertKindSpec } from "./common.js";

const EvmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "expected a 0x-prefixed 20-byte wallet address");

/**
 * The four lifecycle endpoints of one alert kind (spec 4.1 / 4.7): read one (free), cancel (free, manage
 * token or owner signature), list active (free, optional `wallet`), extend (paid, settled before the
 * extension is written). Creation is the kind's own tool.
 */
export function lifecycleTools(k: AlertKindSpec): AnyTool[] {
  const View = z.object({ ...AlertViewBase, ...k.conditionShape });
  const auth = "The full webhook URL is shown only with the manage token (Authorization: Bearer <manage_token>) or an owner-wallet signature (X-Wallet-Signature over 'marketgate:read:<alert_id>:<X-Signed-At>'); otherwise its origin.";

  const get = defineTool({
    name: `${k.name}_get`,
    title: `Get a ${k.label}`,
    method: "GET",
    path: k.itemPath,
    priceUsd: "free",
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Status and delivery history of a ${k.label}`,
    description: `Full record of a ${k.label}: status (active, cancelled, expired), timestamps, last evaluation, trigger count and the latest 10 webhook deliveries with their attempts and response codes. ${auth} Unknown id: 404.`,
    example: { id: k.exampleId },
    input: z.object({ id: AlertId }),
    output: View,
    acceptsCredentials: true,
    stateful: true,
    async handler({ id }, ctx, caller) {
      const svc = alertService(ctx);
      const a = await svc.require(k.kind, id);
      return alertView(svc, a, { full: (await svc.authorize(a, caller.credentials, "read")) !== null, withDeliveries: true });
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
    description: `Cancels an active ${k.label} and its pending webhook retries. Needs the manage token (Authorization: Bearer <manage_token>) or a signature by the owner (paying) wallet: X-Wallet-Signature = EIP-191 signature of 'marketgate:cancel:<alert_id>:<unix_seconds>' and X-Signed-At = those seconds (within 5 minutes). Otherwise 403. Cancelling a cancelled alert answers its record again; an expired one: 409.`,
    example: { id: k.exampleId },
    input: z.object({ id: AlertId }),
    output: View.extend({ message: z.string() }),
    acceptsCredentials: true,
    stateful: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    async handler({ id }, ctx, caller) {
      const svc = alertService(ctx);
      const a = await svc.cancel(k.kind, id, caller.credentials);
      return { ...(await alertView(svc, a, { full: true, withDeliveries: true })), message: `${k.label} ${a.id} is cancelled; no further webhooks will be sent.` };
    },
  });

  const list = defineTool({
    name: `${k.name}s_list`,
    title: `List active ${k.label}s`,
    method: "GET",
    path: k.listPath,
    priceUsd: "free",
    cacheTtlSec: 0,
    tags: ["alerts"],
    summary: `Active ${k.label}s, optionally of one owner wallet`,
    description: `Active ${k.label}s only (oldest first), optionally filtered by the owner (paying) wallet. Webhook URLs are reduced to their origin.`,
    example: {},
    input: z.object({ wallet: EvmAddress.optional().describe("owner wallet address filter") }),
    output: z.object({ count: z.number().int(), wallet_filter: z.string().nullable(), alerts: z.array(View), timestamp: Timestamp }),
    stateful: true,
    async handler({ wallet }, ctx) {
      const svc = alertService(ctx);
      const alerts = await Promise.all((await svc.listActive(k.kind, wallet)).map((a) => alertView(svc, a, { full: false, withDeliveries: false })));
      return { count: alerts.length, wallet_filter: wallet?.toLowerCase() ?? null, alerts, timestamp: isoNow(ctx) };
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
    description: `Adds add_hours (1 to 168) to an active ${k.label}'s expiry; the remaining lifetime is capped at 168 h. Anyone may pay to extend (it only lengthens the alert). Checked before payment: unknown id 404, not active 409, already at the cap 400. The payment settles before the extension is written.`,
    example: { id: k.exampleId, add_hours: 24 },
    input: ExtendInput,
    output: View.extend({ previous_expires_at: z.string(), added_hours: z.number(), message: z.string() }),
    paymentFlow: "upfront",
    stateful: true,
    annotations: { readOnlyHint: false, idempotentHint: false },
    precheck: async ({ id, add_hours }, ctx) => void (await beforePayment(() => alertService(ctx).extension(k.kind, id, add_hours))),
    async handler({ id, add_hours }, ctx) {
      const svc = alertService(ctx);
      const before = (await svc.require(k.kind, id)).expiresAt;
      const { alert, addedMs } = await svc.extend(k.kind, id, add_hours);
      const added = Math.round((addedMs / 3_600_000) * 1000) / 1000;
      return {
        ...(await alertView(svc, alert, { full: false, withDeliveries: false })),
        previous_expires_at: new Date(before).toISOString(),
        added_hours: added,
        message: `${k.label} ${alert.id} now expires at ${new Date(alert.expiresAt).toISOString()}${added < add_hours ? ` (capped: ${added} h added, 168 h remaining at most)` : ""}.`,
      };
    },
  });

  return [get, cancel, list, extend];
}
