/**
 * Kill-and-restart across OS processes: a webhook retry pending in SQLite when process A is SIGKILLed
 * is sent by process B started on the same DATA_DIR, with the same delivery id and a valid signature.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../../src/alerts/webhook/sign.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../src/sandbox/https-receiver.js";
import { cleanupAfterEach, tempDir } from "../helpers/scratch.js";
import { freeServiceProcesses } from "../helpers/service-process.js";
import { until } from "../helpers/wait.js";

interface AttemptView {
  at: string;
  status: number | null;
  error?: string;
}
interface DeliveryView {
  delivery_id: string;
  event: string;
  status: string;
  delivered_at: string | null;
  next_attempt_at: string | null;
  attempts: AttemptView[];
}
interface AlertView {
  alert_id: string;
  status: string;
  webhook_url?: string;
  visibility: string;
  trigger_count: number;
  deliveries: DeliveryView[];
}

async function getAlert(url: string, id: string, token?: string): Promise<{ status: number; body: AlertView }> {
  const res = await fetch(`${url}/liquidation/alert/${id}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
  return { status: res.status, body: (await res.json()) as AlertView };
}

describe("alert durability across a kill -9", () => {
  const cleanup = cleanupAfterEach();
  let sim: RunningSimulator;
  let receiver: HttpsReceiver;

  beforeAll(async () => {
    [sim, receiver] = await Promise.all([startSimulator({ seed: 11 }), startHttpsReceiver()]);
  });
  afterAll(async () => {
    await receiver?.close();
    await sim?.close();
  });
  // After cleanupAfterEach: its afterEach runs first, so processes are gone before their directories are removed.
  const startProcess = freeServiceProcesses();

  it("a retry pending when process A is killed is delivered by process B with the same delivery id", async () => {
    const dataDir = tempDir(cleanup, "mg-alert-data-");
    const caFile = join(tempDir(cleanup, "mg-alert-ca-"), "receiver-ca.pem");
    writeFileSync(caFile, receiver.ca);
    const env: Record<string, string> = {
      ...simEnv(sim),
      HOST: "127.0.0.1",
      PORT: "0",
      DATA_DIR: dataDir,
      STREAMS: "off",
      ALERTS: "on",
      ALERT_EVAL_CRON: "* * * * * *",
      ALERT_DISPATCH_POLL_MS: "50",
      WEBHOOK_RETRY_BASE_MS: "1500",
      WEBHOOK_ALLOW_LOOPBACK: "true",
      WEBHOOK_EXTRA_CA_FILE: caFile,
    };
    receiver.respond(() => ({ status: 500, body: "not yet" }));

    // Process A: create the alert; its first delivery fails with 500.
    const a = await startProcess(env);
    const hook = receiver.url("/hook");
    const res = await fetch(`${a.url}/liquidation/alert`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ symbol: "BTC", threshold_pct: 0.0001, webhook_url: hook, expires_in_hours: 2 }),
    });
    const created = (await res.json()) as { alert_id: string; manage_token: string; webhook_secret: string; status: string; webhook_url: string };
    expect(res.status, JSON.stringify(created)).toBe(200);
    expect(created.alert_id).toMatch(/^alert_liq_btc_\d+_1$/);
    expect(created).toMatchObject({ status: "active", webhook_url: hook });
    expect(created.manage_token).toMatch(/^mgt_/);
    expect(created.webhook_secret).toMatch(/^whsec_/);
    const id = created.alert_id;

    const [first] = await receiver.waitFor(1, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; process A stderr:\n${a.stderr()}`);
    });
    const deliveryId = first!.headers[DELIVERY_HEADER.toLowerCase()] as string;
    expect(deliveryId).toMatch(/^dlv_/);
    expect(JSON.parse(first!.body)).toMatchObject({ event: "liquidation_alert", alert_id: id, symbol: "BTC" });
    // The 500 is in SQLite (A records it right after the answer, well before its 1.5 s retry): kill A now.
    const pendingInA = await until("process A to record the failed attempt", async () => {
      const d = (await getAlert(a.url, id, created.manage_token)).body.deliveries?.[0];
      return d && d.attempts.length >= 1 ? d : undefined;
    });
    await a.kill();
    const seenBeforeKill = receiver.requests.length;
    expect(pendingInA).toMatchObject({ delivery_id: deliveryId, status: "pending", delivered_at: null });
    expect(pendingInA.attempts[0]).toMatchObject({ status: 500, error: "HTTP 500" });
    expect(pendingInA.next_attempt_at).not.toBeNull();

    // Process B on the same DATA_DIR; the receiver now accepts.
    receiver.respond(() => ({ status: 200 }));
    const b = await startProcess(env);
    const got = await receiver.waitFor(seenBeforeKill + 1, 30_000).catch((e: Error) => {
      throw new Error(`${e.message}; process B stderr:\n${b.stderr()}`);
    });
    const retry = got[seenBeforeKill]!;
    expect(retry.headers[DELIVERY_HEADER.toLowerCase()]).toBe(deliveryId);
    expect(retry.headers["x-marketgate-data-source"]).toBe("simulated");
    expect(retry.body).toBe(first!.body); // the payload was fixed at trigger time
    const ts = retry.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
    const sig = retry.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    expect(verifyWebhookSignature(created.webhook_secret, ts, retry.body, sig, { nowSec: Math.floor(Date.now() / 1000) })).toBe(true);
    expect(verifyWebhookSignature("whsec_not_the_secret", ts, retry.body, sig)).toBe(false);
    // Every request was that one delivery (cooldown: no second trigger in A or B).
    expect(new Set(got.map((r) => r.headers[DELIVERY_HEADER.toLowerCase()]))).toEqual(new Set([deliveryId]));

    const view = await until("process B to record the delivery", async () => {
      const r = await getAlert(b.url, id, created.manage_token);
      return r.body.deliveries?.[0]?.status === "delivered" ? r : undefined;
    });
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ alert_id: id, status: "active", webhook_url: hook, visibility: "owner", trigger_count: 1 });
    expect(view.body.deliveries).toHaveLength(1);
    const d = view.body.deliveries[0]!;
    expect(d).toMatchObject({ delivery_id: deliveryId, event: "liquidation_alert", status: "delivered", next_attempt_at: null });
    expect(d.delivered_at).not.toBeNull();
    expect(d.attempts.map((x) => x.status)).toEqual([...Array<number>(seenBeforeKill).fill(500), 200]);

    // Without the token only the public fields are shown: no webhook, no deliveries.
    const anon = await getAlert(b.url, id);
    expect(anon.body).toMatchObject({ alert_id: id, status: "active", visibility: "public" });
    expect(anon.body).not.toHaveProperty("webhook_url");
    expect(anon.body).not.toHaveProperty("deliveries");

    await b.kill();
  }, 120_000);
});
