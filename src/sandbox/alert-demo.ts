import { formatUnits } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import type { DevAccount } from "../payments/local-chain/dev-accounts.js";
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../alerts/webhook/sign.js";
import type { HttpsReceiver } from "./https-receiver.js";

/** Wrapped ether on Base: the token the demo watches by address. */
const WETH_BASE = "0x4200000000000000000000000000000000000006";

/** What the alert walk-through did, for tests. */
export interface AlertDemoResult {
  alertId: string;
  createStatus: number;
  webhookVerified: boolean;
  deliveryStatus: string;
  /** `POST /liquidation/alert/:id/extend` (0.03 USDC). */
  extendStatus: number;
  priceAlertId: string;
  /** `POST /price-alert` (0.04 USDC). */
  priceCreateStatus: number;
  /** `POST /price-alert/:id/extend` (0.02 USDC). */
  priceExtendStatus: number;
  cancelStatus: number;
  priceCancelStatus: number;
  /** `POST /dex/token-alert` (0.04 USDC): a price alert on a token by network and address. */
  tokenCreateStatus: number;
  tokenCancelStatus: number;
  /** What the payer spent on chain: 0.06 + 0.03 + 0.04 + 0.02 + 0.04 USDC. */
  spentAtomic: bigint;
}

/**
 * The sandbox's alert walk-through: pays for a liquidation alert whose webhook is the local HTTPS
 * `receiver`, runs one evaluation round (`round`, instead of waiting for the 30 s schedule), shows the
 * signed webhook and checks it as a receiver would (signature with the alert's `webhook_secret`,
 * timestamp within 5 minutes of this machine's clock, the service's clock being the real one here),
 * reads the alert's full record with its manage token and pays to extend it by 24 h; then pays for a price
 * alert on the same receiver (ETH above a price it will not reach, so it stays quiet) and pays to extend it,
 * and for a price alert on Base WETH by address (`dex_token_alert_create`); then cancels all three. With the market-data calls of `demo.ts` and the top-up of `credits-demo.ts`, the
 * sandbox pays every paid endpoint once.
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
    body: JSON.stringify({ symbol: "BTC", threshold_pct: 0.01, webhook_url: webhookUrl, expires_in_hours: 24 }),
  });
  const created = (await res.json()) as { alert_id: string; webhook_secret: string; manage_token: string; expires_at: string };
  print(`POST /liquidation/alert -> ${res.status} (0.06 USDC): ${created.alert_id}, expires ${created.expires_at}`);
  print(`  webhook_secret ${created.webhook_secret}`);
  print(`  manage_token   ${created.manage_token}`);

  // threshold_pct 0.01: any open interest at risk fires it, so the first round shows a webhook.
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
  const json = { "content-type": "application/json" };
  const extend = await pay(`${opts.baseUrl}/liquidation/alert/${created.alert_id}/extend`, { method: "POST", headers: json, body: JSON.stringify({ add_hours: 24 }) });
  const extended = (await extend.json()) as { expires_at: string };
  print(`POST /liquidation/alert/${created.alert_id}/extend {"add_hours":24} -> ${extend.status} (0.03 USDC): expires ${extended.expires_at}`);

  const priceRes = await pay(`${opts.baseUrl}/price-alert`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ symbol: "ETH", direction: "above", target_price: 1_000_000, webhook_url: webhookUrl, expires_in_hours: 24 }),
  });
  const price = (await priceRes.json()) as { alert_id: string; manage_token: string; expires_at: string };
  print(`\nPOST /price-alert {"symbol":"ETH","direction":"above","target_price":1000000} -> ${priceRes.status} (0.04 USDC): ${price.alert_id}, expires ${price.expires_at}`);
  const priceExtend = await pay(`${opts.baseUrl}/price-alert/${price.alert_id}/extend`, { method: "POST", headers: json, body: JSON.stringify({ add_hours: 24 }) });
  const priceExtended = (await priceExtend.json()) as { expires_at: string };
  print(`POST /price-alert/${price.alert_id}/extend {"add_hours":24} -> ${priceExtend.status} (0.02 USDC): expires ${priceExtended.expires_at}`);

  const tokenPath = "/dex/token-alert";
  const tokenRes = await pay(`${opts.baseUrl}${tokenPath}`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ network: "base", address: WETH_BASE, condition: "above", target_price: 1_000_000, webhook_url: webhookUrl, expires_in_hours: 24 }),
  });
  const token = (await tokenRes.json()) as { alert_id: string; manage_token: string; symbol: string };
  print(
    `POST ${tokenPath} {"network":"base","address":"${WETH_BASE}","condition":"above","target_price":1000000} -> ${tokenRes.status} (0.04 USDC): ${token.alert_id} (${token.symbol})`,
  );

  const cancel = await fetch(`${opts.baseUrl}/liquidation/alert/${created.alert_id}`, { method: "DELETE", headers: auth });
  print(`\nDELETE /liquidation/alert/${created.alert_id} (free, manage token) -> ${cancel.status} ${((await cancel.json()) as { status: string }).status}`);
  const priceCancel = await fetch(`${opts.baseUrl}/price-alert/${price.alert_id}`, { method: "DELETE", headers: { authorization: `Bearer ${price.manage_token}` } });
  print(`DELETE /price-alert/${price.alert_id} (free, manage token) -> ${priceCancel.status} ${((await priceCancel.json()) as { status: string }).status}`);
  const tokenCancel = await fetch(`${opts.baseUrl}/price-alert/${encodeURIComponent(token.alert_id)}`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${token.manage_token}` },
  });
  print(`DELETE /price-alert/${token.alert_id} (free, manage token) -> ${tokenCancel.status}`);
  const spent = before - (await opts.balanceOf(opts.payer.address));
  print(`alerts cost ${formatUnits(spent, 6)} USDC (three creations and two extensions)`);
  return {
    alertId: created.alert_id,
    createStatus: res.status,
    webhookVerified: verified,
    deliveryStatus: delivery?.status ?? "none",
    extendStatus: extend.status,
    priceAlertId: price.alert_id,
    priceCreateStatus: priceRes.status,
    priceExtendStatus: priceExtend.status,
    cancelStatus: cancel.status,
    priceCancelStatus: priceCancel.status,
    tokenCreateStatus: tokenRes.status,
    tokenCancelStatus: tokenCancel.status,
    spentAtomic: spent,
  };
}
