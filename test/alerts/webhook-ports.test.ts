import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config.js";
import { startFreeStack, type FreeStack } from "../helpers/free-stack.js";
import { json } from "../helpers/json.js";

/** Webhook ports at alert creation through the real service (issue 20, finding 8): 443 unless configured. */
describe("webhook ports at alert creation", () => {
  let strict: FreeStack;
  let wider: FreeStack;
  const create = (s: FreeStack, webhookUrl: string) =>
    fetch(`${s.url}/liquidation/alert`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ symbol: "BTC", webhook_url: webhookUrl, expires_in_hours: 1 }),
    });

  beforeAll(async () => {
    [strict, wider] = await Promise.all([startFreeStack({ STREAMS: "off" }), startFreeStack({ STREAMS: "off", WEBHOOK_ALLOWED_PORTS: "443, 8443" })]);
  });
  afterAll(async () => {
    await Promise.all([strict?.close(), wider?.close()]);
  });

  it("refuses a public IP's other ports with a 400 naming the port and the allowed ones", async () => {
    for (const raw of ["https://93.184.216.34:22/", "https://93.184.216.34:8443/hook", "https://[2606:4700::1]:25/"]) {
      const res = await create(strict, raw);
      expect(res.status, raw).toBe(400);
      const body = await json(res);
      expect(body.error).toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/port \d+ is not allowed/) });
      expect(body.error.details).toEqual({ field: "webhook_url", reason: "port_not_allowed", port: Number(new URL(raw).port), allowed_ports: [443] });
    }
    // The default port is accepted (payments are off here, so the alert is created).
    expect((await create(strict, "https://93.184.216.34/hook")).status).toBe(200);
  });

  it("WEBHOOK_ALLOWED_PORTS allows the listed ports and still refuses the others", async () => {
    expect((await create(wider, "https://93.184.216.34:8443/hook")).status).toBe(200);
    const refused = await create(wider, "https://93.184.216.34:22/");
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.details).toMatchObject({ reason: "port_not_allowed", allowed_ports: [443, 8443] });
  });

  it("WEBHOOK_ALLOWED_PORTS must be a list of TCP ports", () => {
    expect(loadConfig({ WEBHOOK_ALLOWED_PORTS: "8443,443,8443" }).alerts!.webhook.allowedPorts).toEqual([8443, 443]);
    expect(loadConfig({}).alerts!.webhook.allowedPorts).toEqual([443]);
    for (const bad of ["", "0", "65536", "443;8443", "https", "443,"]) {
      expect(() => loadConfig({ WEBHOOK_ALLOWED_PORTS: bad }), bad).toThrow(ConfigError);
    }
  });
});
