import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { createWebhookSender } from "../../src/alerts/webhook/send.js";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  newWebhookSecret,
  signStandardWebhook,
  signWebhook,
  standardWebhookKey,
  verifyWebhookSignature,
} from "../../src/alerts/webhook/sign.js";
import { forbiddenAddressReason, forbiddenHostnameReason, parseWebhookUrl, resolveWebhookTarget, type WebhookTargetPolicy } from "../../src/alerts/webhook/target.js";
import { AppError } from "../../src/errors.js";
import { appError } from "../helpers/errors.js";
import { VERSION } from "../../src/version.js";
import { startHttpsReceiver, type HttpsReceiver } from "../../src/sandbox/https-receiver.js";

function details(e: AppError): { field?: string; reason?: string; address?: string } {
  return e.details as { field?: string; reason?: string; address?: string };
}

/** A lookup answering from a table, counting calls per name. */
function fakeDns(table: Record<string, Array<{ address: string; family: 4 | 6 }>>) {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return answer;
  };
  return { lookup, calls };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("forbiddenAddressReason", () => {
  it.each([
    // IPv4
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.254", "cgnat"],
    ["100.100.100.200", "cloud_metadata"],
    ["127.0.0.1", "loopback"],
    ["127.8.9.10", "loopback"],
    ["169.254.1.1", "link_local"],
    ["169.254.169.254", "cloud_metadata"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.0.0.8", "reserved"],
    ["192.0.2.1", "reserved"],
    ["192.88.99.1", "reserved"],
    ["192.168.1.1", "private"],
    ["198.18.0.1", "reserved"],
    ["198.19.255.254", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.254", "reserved"],
    ["255.255.255.255", "broadcast"],
    // IPv6
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link_local"],
    ["febf::1", "link_local"],
    ["fe80::1%eth0", "link_local"],
    ["fc00::1", "unique_local"],
    ["fd12:3456::1", "unique_local"],
    ["fd00:ec2::254", "cloud_metadata"],
    ["ff02::1", "multicast"],
    ["ff0e::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["2001:db8:ffff::1", "reserved"],
    ["100::1", "discard"],
    ["2001::1", "teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
    ["2001:2::1", "reserved"],
    ["fec0::1", "site_local"],
    ["::2", "reserved"],
    ["::1.2.3.4", "reserved"], // IPv4-compatible (deprecated), not IPv4-mapped
    ["4000::1", "reserved"], // outside 2000::/3
    // IPv4-mapped: the embedded address is judged
    ["::ffff:10.0.0.1", "ipv4_mapped:private"],
    ["::ffff:7f00:1", "ipv4_mapped:loopback"],
    ["::ffff:127.0.0.1", "ipv4_mapped:loopback"],
    ["::ffff:169.254.169.254", "ipv4_mapped:cloud_metadata"],
    ["::ffff:0.0.0.0", "ipv4_mapped:unspecified"],
    ["0:0:0:0:0:ffff:c0a8:101", "ipv4_mapped:private"],
    // NAT64 64:ff9b::/96
    ["64:ff9b::a00:1", "nat64:private"],
    ["64:ff9b::10.0.0.1", "nat64:private"],
    ["64:ff9b::7f00:1", "nat64:loopback"],
    ["64:ff9b::a9fe:a9fe", "nat64:cloud_metadata"],
    ["64:ff9b:1::1", "reserved"], // local-use NAT64 prefix (RFC 8215)
    // 6to4 2002::/16
    ["2002:a00:1::1", "6to4:private"],
    ["2002:c0a8:101::", "6to4:private"],
    ["2002:7f00:1::1", "6to4:loopback"],
    ["2002:a9fe:a9fe::1", "6to4:cloud_metadata"],
    // not addresses at all
    ["not-an-ip", "invalid"],
    ["", "invalid"],
    ["0177.0.0.1", "invalid"],
    ["[::1]", "invalid"],
  ])("%s → %s", (address, reason) => {
    expect(forbiddenAddressReason(address, false)).toBe(reason);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "11.0.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "172.15.255.255",
    "172.32.0.1",
    "192.169.0.1",
    "198.17.255.255",
    "198.20.0.1",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("allows public %s", (address) => {
    expect(forbiddenAddressReason(address, false)).toBeNull();
    expect(forbiddenAddressReason(address, true)).toBeNull();
  });

  it("allows loopback only with allowLoopback, and nothing else with it", () => {
    for (const a of ["127.0.0.1", "127.255.0.1", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1"]) {
      expect(forbiddenAddressReason(a, true), a).toBeNull();
      expect(forbiddenAddressReason(a, false), a).toMatch(/loopback$/);
    }
    expect(forbiddenAddressReason("10.0.0.1", true)).toBe("private");
    expect(forbiddenAddressReason("169.254.169.254", true)).toBe("cloud_metadata");
    expect(forbiddenAddressReason("0.0.0.0", true)).toBe("unspecified");
    // Loopback reached through a translator stays refused: that loopback is someone else's.
    expect(forbiddenAddressReason("64:ff9b::7f00:1", true)).toBe("nat64:loopback");
    expect(forbiddenAddressReason("2002:7f00:1::1", true)).toBe("6to4:loopback");
  });
});

describe("forbiddenHostnameReason", () => {
  it.each([
    ["metadata.google.internal", false, "cloud_metadata"],
    ["METADATA.Google.Internal.", false, "cloud_metadata"],
    ["metadata", true, "cloud_metadata"],
    ["db.internal", false, "internal_name"],
    ["printer.local", true, "internal_name"],
    ["localhost", false, "loopback"],
    ["localhost", true, null],
    ["api.localhost", true, "loopback"],
    ["intranet", false, "single_label"],
    ["hooks.example.com", false, null],
    ["internal.example.com", false, null],
  ] as const)("%s (allowLoopback %s) → %s", (name, allowLoopback, reason) => {
    expect(forbiddenHostnameReason(name, allowLoopback)).toBe(reason);
  });
});

describe("parseWebhookUrl", () => {
  it("accepts absolute https URLs with any port (resolveWebhookTarget judges ports), path and query", () => {
    expect(parseWebhookUrl("https://hooks.example.com/mg?x=1").href).toBe("https://hooks.example.com/mg?x=1");
    expect(parseWebhookUrl("https://hooks.example.com:8443/a").port).toBe("8443");
    expect(parseWebhookUrl("https://[2606:4700::1]/h").hostname).toBe("[2606:4700::1]");
    expect(parseWebhookUrl("https://example.com/" + "a".repeat(2048 - 20)).href).toHaveLength(2048);
  });

  it.each([
    ["http://hooks.example.com/", "not_https"],
    ["ftp://hooks.example.com/", "not_https"],
    ["file:///etc/passwd", "not_https"],
    ["https://user:pass@hooks.example.com/", "credentials"],
    ["https://user@hooks.example.com/", "credentials"],
    ["https://:pass@hooks.example.com/", "credentials"],
    ["https://", "invalid_url"],
    ["https://:443/", "invalid_url"],
    ["/relative/path", "invalid_url"],
    ["not a url", "invalid_url"],
    ["", "invalid_url"],
    ["https://hooks.example.com/\nx", "invalid_url"],
    ["https://example.com/" + "a".repeat(2048 - 19), "too_long"],
    ["https://hooks.example.com/#frag", "fragment"],
    ["https://hooks.example.com/#", "fragment"],
  ])("rejects %j (%s)", async (raw, reason) => {
    const e = await appError(() => parseWebhookUrl(raw));
    expect(e.code).toBe("BAD_REQUEST");
    expect(details(e)).toEqual({ field: "webhook_url", reason });
  });
});

describe("resolveWebhookTarget", () => {
  const url = (s: string) => parseWebhookUrl(s);

  it("returns the first address when every address is public", async () => {
    const dns = fakeDns({
      "hooks.example.com": [
        { address: "2606:4700:4700::1111", family: 6 },
        { address: "1.1.1.1", family: 4 },
      ],
    });
    await expect(resolveWebhookTarget(url("https://hooks.example.com/x"), { allowLoopback: false, lookup: dns.lookup })).resolves.toEqual({
      address: "2606:4700:4700::1111",
      family: 6,
    });
    expect(dns.calls).toEqual(["hooks.example.com"]);
  });

  it("refuses a name when ANY of its records is forbidden", async () => {
    const dns = fakeDns({
      "mixed.example.com": [
        { address: "93.184.215.14", family: 4 },
        { address: "10.0.0.5", family: 4 },
      ],
    });
    const e = await appError(() => resolveWebhookTarget(url("https://mixed.example.com/"), { allowLoopback: false, lookup: dns.lookup }));
    expect(e.code).toBe("BAD_REQUEST");
    expect(e.message).toMatch(/forbidden address/);
    expect(details(e)).toEqual({ field: "webhook_url", reason: "private", address: "10.0.0.5" });
  });

  it("refuses a name resolving to an IPv4-mapped private address", async () => {
    const dns = fakeDns({ "mapped.example.com": [{ address: "::ffff:192.168.1.1", family: 6 }] });
    const e = await appError(() => resolveWebhookTarget(url("https://mapped.example.com/"), { allowLoopback: false, lookup: dns.lookup }));
    expect(details(e)).toMatchObject({ reason: "ipv4_mapped:private", address: "::ffff:192.168.1.1" });
  });

  it("reports names that do not resolve (error or empty answer) as unresolvable", async () => {
    const dns = fakeDns({ "empty.example.com": [] });
    for (const host of ["nxdomain.example.com", "empty.example.com"]) {
      const e = await appError(() => resolveWebhookTarget(url(`https://${host}/`), { allowLoopback: false, lookup: dns.lookup }));
      expect(e.code).toBe("BAD_REQUEST");
      expect(details(e)).toEqual({ field: "webhook_url", reason: "unresolvable" });
    }
  });

  it("judges IP literals directly, without DNS", async () => {
    const dns = fakeDns({});
    const policy = (allowLoopback: boolean): WebhookTargetPolicy => ({ allowLoopback, lookup: dns.lookup });
    expect(details(await appError(() => resolveWebhookTarget(url("https://[::1]:8443/"), policy(false))))).toMatchObject({ reason: "loopback", address: "::1" });
    expect(details(await appError(() => resolveWebhookTarget(url("https://169.254.169.254/latest/meta-data"), policy(true))))).toMatchObject({
      reason: "cloud_metadata",
    });
    // The URL parser turns "0x7f.1" into 127.0.0.1 before the guard sees it.
    expect(details(await appError(() => resolveWebhookTarget(url("https://0x7f.1/"), policy(false))))).toMatchObject({ reason: "loopback", address: "127.0.0.1" });
    expect(details(await appError(() => resolveWebhookTarget(url("https://[::ffff:a00:1]/"), policy(true))))).toMatchObject({ reason: "ipv4_mapped:private" });
    await expect(resolveWebhookTarget(url("https://[::1]/"), policy(true))).resolves.toEqual({ address: "::1", family: 6 });
    await expect(resolveWebhookTarget(url("https://8.8.8.8/"), policy(false))).resolves.toEqual({ address: "8.8.8.8", family: 4 });
    expect(dns.calls).toEqual([]);
  });

  it("allows only the listed ports (443 by default) on public targets, refusing a name's port before DNS", async () => {
    const dns = fakeDns({ "hooks.example.com": [{ address: "93.184.215.14", family: 4 }] });
    const strict: WebhookTargetPolicy = { allowLoopback: false, lookup: dns.lookup };
    for (const raw of ["https://93.184.216.34:22/", "https://93.184.216.34:80/", "https://[2606:4700::1]:6379/", "https://hooks.example.com:8443/"]) {
      const e = await appError(() => resolveWebhookTarget(url(raw), strict));
      expect(e.code, raw).toBe("BAD_REQUEST");
      expect(e.message).toMatch(/port \d+ is not allowed .*WEBHOOK_ALLOWED_PORTS/);
      expect(e.details, raw).toEqual({ field: "webhook_url", reason: "port_not_allowed", port: Number(new URL(raw).port), allowed_ports: [443] });
    }
    expect(dns.calls).toEqual([]);
    await expect(resolveWebhookTarget(url("https://93.184.216.34/"), strict)).resolves.toEqual({ address: "93.184.216.34", family: 4 });
    await expect(resolveWebhookTarget(url("https://93.184.216.34:443/"), strict)).resolves.toEqual({ address: "93.184.216.34", family: 4 });
    await expect(resolveWebhookTarget(url("https://hooks.example.com/"), strict)).resolves.toEqual({ address: "93.184.215.14", family: 4 });
    // More ports are a setting (WEBHOOK_ALLOWED_PORTS), and the list replaces the default.
    const wider: WebhookTargetPolicy = { ...strict, allowedPorts: [443, 8443] };
    await expect(resolveWebhookTarget(url("https://hooks.example.com:8443/"), wider)).resolves.toEqual({ address: "93.184.215.14", family: 4 });
    expect(details(await appError(() => resolveWebhookTarget(url("https://93.184.216.34:22/"), wider)))).toMatchObject({ reason: "port_not_allowed", port: 22 });
    expect(details(await appError(() => resolveWebhookTarget(url("https://93.184.216.34/"), { ...strict, allowedPorts: [8443] })))).toMatchObject({ port: 443 });
  });

  it("lets loopback targets use any port under allowLoopback, and nothing else", async () => {
    const dns = fakeDns({
      localhost: [
        { address: "127.0.0.1", family: 4 },
        { address: "::1", family: 6 },
      ],
      "local.marketgate.test": [{ address: "127.0.0.1", family: 4 }],
      "public.marketgate.test": [{ address: "93.184.215.14", family: 4 }],
      "mixed.marketgate.test": [
        { address: "127.0.0.1", family: 4 },
        { address: "93.184.215.14", family: 4 },
      ],
    });
    const sandbox: WebhookTargetPolicy = { allowLoopback: true, lookup: dns.lookup };
    await expect(resolveWebhookTarget(url("https://127.0.0.1:22/"), sandbox)).resolves.toEqual({ address: "127.0.0.1", family: 4 });
    await expect(resolveWebhookTarget(url("https://[::1]:54321/"), sandbox)).resolves.toEqual({ address: "::1", family: 6 });
    await expect(resolveWebhookTarget(url("https://localhost:54321/"), sandbox)).resolves.toMatchObject({ address: "127.0.0.1" });
    await expect(resolveWebhookTarget(url("https://local.marketgate.test:54321/"), sandbox)).resolves.toEqual({ address: "127.0.0.1", family: 4 });
    for (const raw of ["https://93.184.216.34:22/", "https://public.marketgate.test:22/", "https://mixed.marketgate.test:22/"]) {
      expect(details(await appError(() => resolveWebhookTarget(url(raw), sandbox))), raw).toMatchObject({ reason: "port_not_allowed", port: 22 });
    }
  });

  it("refuses internal names before resolving them", async () => {
    const dns = fakeDns({ "metadata.google.internal": [{ address: "8.8.8.8", family: 4 }] });
    for (const [host, reason] of [
      ["metadata.google.internal", "cloud_metadata"],
      ["vault.internal", "internal_name"],
      ["localhost", "loopback"],
    ]) {
      const e = await appError(() => resolveWebhookTarget(url(`https://${host}/`), { allowLoopback: false, lookup: dns.lookup }));
      expect(details(e)).toEqual({ field: "webhook_url", reason });
    }
    expect(dns.calls).toEqual([]);
  });
});

describe("webhook signatures", () => {
  const secret = "whsec_test_vector";
  const ts = 1_700_000_000;
  const body = '{"event":"liquidation","qty":1.5}';

  it("signs HMAC-SHA256 over `${timestamp}.${body}`", () => {
    const expected = "sha256=" + createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex");
    expect(signWebhook(secret, ts, body)).toBe(expected);
    // Same vector from `openssl dgst -sha256 -hmac`.
    expect(expected).toBe("sha256=e821eb57442109b08f77c148ef72d372f861be536dd8081f846297abdebfb001");
  });

  it("verifies good signatures and refuses altered ones", () => {
    const sig = signWebhook(secret, ts, body);
    const at = { nowSec: ts };
    expect(verifyWebhookSignature(secret, ts, body, sig, at)).toBe(true);
    expect(verifyWebhookSignature(secret, String(ts), body, sig, at)).toBe(true);
    expect(verifyWebhookSignature("whsec_other", ts, body, sig, at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body.replace("1.5", "15"), sig, at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts + 1, body, sig, at)).toBe(false);
    expect(verifyWebhookSignature(secret, `${ts}.5`, body, sig, at)).toBe(false);
    expect(verifyWebhookSignature(secret, "", body, sig, at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, sig.slice(0, -1), at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, sig.replace("sha256=", "sha1="), at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, "", at)).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, "sha256=" + "0".repeat(64), at)).toBe(false);
  });

  it("refuses timestamps outside the tolerance of a given nowSec", () => {
    const sig = signWebhook(secret, ts, body);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts + 300 })).toBe(true);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts - 300 })).toBe(true);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts + 301 })).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts - 301 })).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts + 11, toleranceSec: 10 })).toBe(false);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: ts + 10, toleranceSec: 10 })).toBe(true);
    expect(verifyWebhookSignature(secret, ts, body, sig, { nowSec: NaN })).toBe(false);
  });

  it("checks freshness against the system clock by default: old and future timestamps are refused without nowSec", () => {
    const now = Math.floor(Date.now() / 1000);
    const fresh = now - 5;
    expect(verifyWebhookSignature(secret, fresh, body, signWebhook(secret, fresh, body))).toBe(true);
    // A correctly signed delivery captured long ago (the fixed vector above) or 10 minutes ago: a replay.
    expect(verifyWebhookSignature(secret, ts, body, signWebhook(secret, ts, body))).toBe(false);
    const old = now - 600;
    expect(verifyWebhookSignature(secret, String(old), body, signWebhook(secret, old, body))).toBe(false);
    const future = now + 600;
    expect(verifyWebhookSignature(secret, future, body, signWebhook(secret, future, body))).toBe(false);
    // The tolerance still applies to the system clock.
    expect(verifyWebhookSignature(secret, old, body, signWebhook(secret, old, body), { toleranceSec: 900 })).toBe(true);
  });

  it("makes fresh random secrets: whsec_ and 32 bytes in standard base64 (Standard Webhooks)", () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardWebhookKey(a)).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it("signs the Standard Webhooks way: v1,base64(HMAC-SHA256(decoded key, `${id}.${timestamp}.${body}`))", () => {
    const std = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const key = Buffer.from("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "base64");
    const expected = "v1," + createHmac("sha256", key).update(`msg_1.${ts}.${body}`).digest("base64");
    expect(signStandardWebhook(std, "msg_1", ts, body)).toBe(expected);
    // The library's own signer agrees.
    expect(new Webhook(std).sign("msg_1", new Date(ts * 1000), body)).toBe(expected);
    // A base64url secret of the earlier format has the same key bytes once translated to standard base64.
    const bytes = Buffer.from("00ff10fbee", "hex");
    expect(standardWebhookKey("whsec_" + bytes.toString("base64url"))).toEqual(bytes);
  });
});

describe("webhook delivery over HTTPS", () => {
  const open: HttpsReceiver[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  async function receiver(): Promise<HttpsReceiver> {
    const r = await startHttpsReceiver();
    open.push(r);
    return r;
  }

  const nowSec = () => Math.floor(Date.now() / 1000);
  const secret = "whsec_delivery_test";
  const body = JSON.stringify({ event: "liquidation", symbol: "BTC", side: "long", usd: 1_250_000 });
  const request = (url: string, extra: Partial<{ deliveryId: string; event: string }> = {}) => ({
    url,
    body,
    secret,
    timestampSec: nowSec(),
    deliveryId: "dlv_01",
    event: "liquidation",
    ...extra,
  });

  it("POSTs the signed body with the marketgate headers", async () => {
    const rx = await receiver();
    const sender = createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca });
    const req = request(rx.url("/hooks/liq?team=1"));
    const res = await sender.send(req);
    expect(res).toMatchObject({ ok: true, status: 200 });
    expect(res.error).toBeUndefined();
    expect(res.durationMs).toBeGreaterThanOrEqual(0);

    const [got] = await rx.waitFor(1);
    expect(got!.path).toBe("/hooks/liq?team=1");
    expect(got!.body).toBe(body);
    expect(got!.headers).toMatchObject({
      host: `127.0.0.1:${rx.port}`,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "user-agent": `marketgate/${VERSION}`,
      [DELIVERY_HEADER.toLowerCase()]: "dlv_01",
      [EVENT_HEADER.toLowerCase()]: "liquidation",
      [TIMESTAMP_HEADER.toLowerCase()]: String(req.timestampSec),
    });
    const sig = got!.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    const sentTs = got!.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
    expect(verifyWebhookSignature(secret, sentTs, got!.body, sig, { nowSec: nowSec() })).toBe(true);
    expect(verifyWebhookSignature("whsec_wrong", sentTs, got!.body, sig)).toBe(false);
  });

  it("signs every delivery per Standard Webhooks too: the standardwebhooks package verifies it with the alert's secret", async () => {
    const rx = await receiver();
    const sender = createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca });
    const whsec = newWebhookSecret();
    const req = { ...request(rx.url("/std")), secret: whsec, deliveryId: "dlv_std_1" };
    expect(await sender.send(req)).toMatchObject({ ok: true, status: 200 });
    const [got] = await rx.waitFor(1);
    const headers = got!.headers as Record<string, string>;
    expect(headers).toMatchObject({ "webhook-id": "dlv_std_1", "webhook-timestamp": String(req.timestampSec) });
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(whsec).verify(got!.body, headers)).toEqual(JSON.parse(body));
    // The marketgate header of the same delivery verifies with the same secret string.
    expect(verifyWebhookSignature(whsec, headers[TIMESTAMP_HEADER.toLowerCase()]!, got!.body, headers[SIGNATURE_HEADER.toLowerCase()]!)).toBe(true);
    // Another secret, an altered body or a changed id are refused.
    expect(() => new Webhook(newWebhookSecret()).verify(got!.body, headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(whsec).verify(got!.body.replace("BTC", "ETH"), headers)).toThrow(/No matching signature/);
    expect(() => new Webhook(whsec).verify(got!.body, { ...headers, "webhook-id": "dlv_other" })).toThrow(/No matching signature/);
  });

  it("connects to the vetted address of a name (the system resolver is never asked)", async () => {
    const rx = await receiver();
    // receiver.marketgate.test exists only in this table and in the certificate's SANs.
    const dns = fakeDns({ "receiver.marketgate.test": [{ address: "127.0.0.1", family: 4 }] });
    const sender = createWebhookSender({ policy: { allowLoopback: true, lookup: dns.lookup }, ca: rx.ca, userAgent: "mg-test/1" });
    const res = await sender.send(request(`https://receiver.marketgate.test:${rx.port}/named`));
    expect(res).toMatchObject({ ok: true, status: 200 });
    const [got] = await rx.waitFor(1);
    expect(got!.headers.host).toBe(`receiver.marketgate.test:${rx.port}`);
    expect(got!.headers["user-agent"]).toBe("mg-test/1");
    expect(dns.calls).toEqual(["receiver.marketgate.test"]);
  });

  it("reports a 500 as not ok with its status", async () => {
    const rx = await receiver();
    rx.respond(() => ({ status: 500, body: "boom" }));
    const res = await createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca }).send(request(rx.url("/h")));
    expect(res).toMatchObject({ ok: false, status: 500, error: "HTTP 500" });
  });

  it("does not follow redirects", async () => {
    const rx = await receiver();
    rx.respond(() => ({ status: 302, headers: { Location: rx.url("/elsewhere") } }));
    const res = await createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca }).send(request(rx.url("/h")));
    expect(res).toMatchObject({ ok: false, status: 302, error: "redirect not followed" });
    await sleep(200);
    expect(rx.requests.map((r) => r.path)).toEqual(["/h"]);
  });

  it("gives up after timeoutMs when the receiver is slow", async () => {
    const rx = await receiver();
    rx.respond(() => ({ status: 200, delayMs: 5000 }));
    const started = Date.now();
    const res = await createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca, timeoutMs: 300 }).send(request(rx.url("/slow")));
    const wall = Date.now() - started;
    expect(res).toMatchObject({ ok: false, status: null, error: "timeout after 300 ms" });
    expect(wall).toBeGreaterThanOrEqual(280);
    expect(wall).toBeLessThan(1500);
    expect(res.durationMs).toBeLessThan(1500);
  });

  it("reads at most 64 KiB of a large response", async () => {
    const rx = await receiver();
    rx.respond(() => ({ status: 202, body: "x".repeat(4 * 1024 * 1024) }));
    const res = await createWebhookSender({ policy: { allowLoopback: true }, ca: rx.ca }).send(request(rx.url("/big")));
    expect(res).toMatchObject({ ok: true, status: 202 });
  });

  it("refuses the receiver's self-signed certificate unless its CA is given", async () => {
    const rx = await receiver();
    const res = await createWebhookSender({ policy: { allowLoopback: true } }).send(request(rx.url("/h")));
    expect(res.ok).toBe(false);
    expect(res.status).toBeNull();
    expect(res.error).toMatch(/certificate/i);
    expect(rx.requests).toHaveLength(0);
  });

  it("refuses loopback without allowLoopback and makes no connection", async () => {
    const rx = await receiver();
    const sender = createWebhookSender({ policy: { allowLoopback: false }, ca: rx.ca });
    const res = await sender.send(request(rx.url("/h")));
    expect(res).toMatchObject({ ok: false, status: null, error: "refused: loopback" });
    await sleep(100);
    expect(rx.requests).toHaveLength(0);
    expect(rx.connections).toBe(0);
  });

  it("refuses at send time when DNS rebinds to loopback after the URL was checked", async () => {
    const rx = await receiver();
    let answers = 0;
    const policy: WebhookTargetPolicy = {
      allowLoopback: false,
      allowedPorts: [rx.port],
      lookup: async () => (answers++ === 0 ? [{ address: "93.184.215.14", family: 4 }] : [{ address: "127.0.0.1", family: 4 }]),
    };
    const url = `https://receiver.marketgate.test:${rx.port}/h`;
    // At registration the name looks public…
    await expect(resolveWebhookTarget(parseWebhookUrl(url), policy)).resolves.toEqual({ address: "93.184.215.14", family: 4 });
    // …at delivery it points at loopback: the attempt is refused before any connection.
    const res = await createWebhookSender({ policy, ca: rx.ca }).send(request(url));
    expect(res).toMatchObject({ ok: false, status: null, error: "refused: loopback" });
    expect(answers).toBe(2);
    await sleep(100);
    expect(rx.connections).toBe(0);
  });

  it("refuses at send time a stored URL whose port is not allowed, before DNS and without connecting", async () => {
    const rx = await receiver();
    const dns = fakeDns({ "receiver.marketgate.test": [{ address: "93.184.215.14", family: 4 }] });
    const sender = createWebhookSender({ policy: { allowLoopback: false, lookup: dns.lookup }, ca: rx.ca });
    for (const raw of ["https://93.184.216.34:22/h", `https://receiver.marketgate.test:${rx.port}/h`]) {
      await expect(sender.send(request(raw))).resolves.toMatchObject({ ok: false, status: null, error: "refused: port_not_allowed" });
    }
    expect(dns.calls).toEqual([]);
    expect(rx.connections).toBe(0);
  });

  it("reports bad URLs, unresolvable names and bad header values without throwing", async () => {
    const rx = await receiver();
    const sender = createWebhookSender({ policy: { allowLoopback: true, lookup: fakeDns({}).lookup }, ca: rx.ca });
    await expect(sender.send(request(`http://127.0.0.1:${rx.port}/h`))).resolves.toMatchObject({ ok: false, status: null, error: "refused: not_https" });
    await expect(sender.send(request("https://nowhere.marketgate.test/h"))).resolves.toMatchObject({ ok: false, status: null, error: "refused: unresolvable" });
    const bad = await sender.send(request(rx.url("/h"), { deliveryId: "dlv\r\nX-Injected: 1" }));
    expect(bad).toMatchObject({ ok: false, status: null });
    expect(bad.error).toMatch(/header/i);
    expect(rx.requests).toHaveLength(0);
  });
});
