import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../alerts/webhook/sign.js";
import type { HttpsReceiver } from "./https-receiver.js";

/** What the alert walk-through did, for tests. */
export interface AlertDemoResult {
  alertId: string;
  createStatus: number;
  webhookVerified: boolean;
  deliveryStatus: string;
  cancelStatus: number;
  spentAtomic: bigint;
}

/**
 * The sandbox's alert walk-through: pays for a liquidation alert whose webhook is the local HTTPS
 * `receiver`, runs one evaluation round (`round`, instead of waiting for the 30 s schedule), shows the
 * signed webhook and checks its signature with the alert's `webhook_secret`, reads the alert's record
 * with its manage token, then cancels it.
 */
export async function runAlertDemo(opts: {
  baseUrl: string;
  payer: DevAccount;
  receiver: HttpsReceiver;
  round: () => Promise<void>;
  balanceOf: (address: `0x${string}`) => Promise<bigint>;
  print?: (line: string) => void;
}): Promise<AlertDemoResult> {
  const print = opts.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const pay = wrapFetchWithPayment(fetch, new x402Client().register("eip155:8453", new ExactEvmScheme(privateKeyToAccount(opts.payer.privateKey))));
  const before = await opts.balanceOf(opts.payer.address);
  const webhookUrl = opts.receiver.url("/marketgate-hook");

  const res = await pay(`${opts.baseUrl}/liquidation/alert`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ symbol: "BTC", threshold_pct: 1, webhook_url: webhookUrl, expires_in_hours: 24 }),
  });
  const created = (await res.json()) as { alert_id: string; webhook_secret: string; manage_token: string; expires_at: string };
  print(`POST /liquidation/alert -> ${res.status} (0.06 USDC): ${created.alert_id}, expires ${created.expires_at}`);
  print(`  webhook_secret ${created.webhook_secret}`);
  print(`  manage_token   ${created.manage_token}`);

  const seen = opts.receiver.requests.length;
  await opts.round();
  const [hook] = (await opts.receiver.waitFor(seen + 1, 10_000)).slice(seen);
  const ts = hook!.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
  const signature = hook!.headers[SIGNATURE_HEADER.toLowerCase()] as string;
  const verified = verifyWebhookSignature(created.webhook_secret, ts, hook!.body, signature);
  print(`\nwebhook received at ${webhookUrl}`);
  print(`  ${SIGNATURE_HEADER}: ${signature}`);
  print(`  ${TIMESTAMP_HEADER}: ${ts}   ${DELIVERY_HEADER}: ${hook!.headers[DELIVERY_HEADER.toLowerCase()] as string}`);
  print(`  ${hook!.body}`);
  print(`  signature verified with webhook_secret: ${verified}`);

  const auth = { authorization: `Bearer ${created.manage_token}` };
  const record = (await (await fetch(`${opts.baseUrl}/liquidation/alert/${created.alert_id}`, { headers: auth })).json()) as {
    trigger_count: number;
    deliveries: Array<{ status: string; attempts: Array<{ status: number | null }> }>;
  };
  const delivery = record.deliveries[0];
  print(`\nGET /liquidation/alert/${created.alert_id} (free): trigger_count ${record.trigger_count}, delivery ${delivery?.status} (HTTP ${delivery?.attempts.at(-1)?.status})`);
  const cancel = await fetch(`${opts.baseUrl}/liquidation/alert/${created.alert_id}`, { method: "DELETE", headers: auth });
  print(`DELETE /liquidation/alert/${created.alert_id} (free, manage token) -> ${cancel.status} ${((await cancel.json()) as { status: string }).status}`);
  const spent = before - (await opts.balanceOf(opts.payer.address));
  print(`alerts cost ${formatUnits(spent, 6)} USDC`);
  return { alertId: created.alert_id, createStatus: res.status, webhookVerified: verified, deliveryStatus: delivery?.status ?? "none", cancelStatus: cancel.status, spentAtomic: spent };
}
