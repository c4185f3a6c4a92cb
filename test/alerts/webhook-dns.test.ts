import { createSocket, type Socket } from "node:dgram";
import { lookup as systemLookup } from "node:dns/promises";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsLookup, resolveWebhookTarget } from "../../src/alerts/webhook/target.js";
import { AppError } from "../../src/errors.js";

/** Answers of the fake DNS server per name: A and AAAA records, `nx` (NXDOMAIN) or `hang` (never answers). */
const ZONE: Record<string, { a?: number[][]; aaaa?: Buffer[] } | "nx" | "hang"> = {
  "ok.example": { a: [[93, 184, 215, 14]], aaaa: [Buffer.from("26062800021fcb07682080daaf6b8b2c", "hex")] },
  "v4only.example": { a: [[93, 184, 215, 15]] },
  "private.example": { a: [[10, 0, 0, 7]] },
  "nx.example": "nx",
};

/** Reads the question name of a DNS query (uncompressed labels from offset 12); returns it and the offset after it. */
function questionName(msg: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let i = 12;
  while (msg[i]! > 0) {
    labels.push(msg.subarray(i + 1, i + 1 + msg[i]!).toString("ascii"));
    i += msg[i]! + 1;
  }
  return { name: labels.join(".").toLowerCase(), end: i + 1 };
}

/**
 * A minimal authoritative DNS server over UDP for {@link ZONE}: A/AAAA answers, NXDOMAIN, an empty
 * NOERROR answer for a missing family, and silence for `hang` and any name ending in `.hang`.
 */
function startFakeDns(): Promise<{ socket: Socket; server: string; queries: string[] }> {
  const socket = createSocket("udp4");
  const queries: string[] = [];
  socket.on("message", (msg, rinfo) => {
    const { name, end } = questionName(msg);
    queries.push(name);
    const entry = ZONE[name] ?? (name.endsWith(".hang") ? "hang" : "nx");
    if (entry === "hang") return;
    const qtype = msg.readUInt16BE(end);
    const question = msg.subarray(12, end + 4);
    const records = entry === "nx" ? [] : qtype === 1 ? (entry.a ?? []).map((o) => Buffer.from(o)) : qtype === 28 ? (entry.aaaa ?? []) : [];
    const header = Buffer.alloc(12);
    header.writeUInt16BE(msg.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180 | (entry === "nx" ? 3 : 0), 2); // response, recursion desired + available, rcode
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((rdata) => {
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question name
      rr.writeUInt16BE(qtype, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(60, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    socket.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  return new Promise((resolve) => socket.bind(0, "127.0.0.1", () => resolve({ socket, server: `127.0.0.1:${(socket.address() as AddressInfo).port}`, queries })));
}

describe("webhook host lookups (c-ares, deadline, in-flight cap)", () => {
  let dns: Awaited<ReturnType<typeof startFakeDns>>;
  beforeAll(async () => {
    dns = await startFakeDns();
  });
  afterAll(() => dns?.socket.close());

  const lookupWith = (o: { timeoutMs?: number; deadlineMs?: number; maxInFlight?: number } = {}) => createDnsLookup({ servers: [dns.server], timeoutMs: 200, tries: 1, ...o });

  it("merges A and AAAA answers, IPv4 first, and treats a family without records (ENODATA, NXDOMAIN) as empty", async () => {
    const lookup = lookupWith();
    expect(await lookup("ok.example")).toEqual([
      { address: "93.184.215.14", family: 4 },
      { address: "2606:2800:21f:cb07:6820:80da:af6b:8b2c", family: 6 },
    ]);
    expect(await lookup("V4ONLY.example.")).toEqual([{ address: "93.184.215.15", family: 4 }]);
    // NXDOMAIN for both families is an empty answer (resolveWebhookTarget calls it unresolvable).
    expect(await lookup("nx.example")).toEqual([]);
  });

  it("answers localhost without DNS (RFC 6761), since c-ares does not read /etc/hosts", async () => {
    const before = dns.queries.length;
    expect(await lookupWith()("localhost")).toEqual([
      { address: "127.0.0.1", family: 4 },
      { address: "::1", family: 6 },
    ]);
    expect(dns.queries.length).toBe(before);
  });

  it("serves resolveWebhookTarget: public names pass, private answers and NXDOMAIN are refused", async () => {
    const policy = { allowLoopback: false, lookup: lookupWith() };
    await expect(resolveWebhookTarget(new URL("https://ok.example/hook"), policy)).resolves.toEqual({ address: "93.184.215.14", family: 4 });
    await expect(resolveWebhookTarget(new URL("https://private.example/"), policy)).rejects.toMatchObject({
      code: "BAD_REQUEST",
      details: { reason: "private", address: "10.0.0.7" },
    });
    await expect(resolveWebhookTarget(new URL("https://nx.example/"), policy)).rejects.toMatchObject({ code: "BAD_REQUEST", details: { reason: "unresolvable" } });
  });

  it("ends a lookup at its deadline, and many hanging lookups neither delay other names nor the thread pool", async () => {
    const deadlineMs = 600;
    // c-ares alone would wait 2 s per try: the deadline must cut it short.
    const lookup = lookupWith({ timeoutMs: 2000, deadlineMs, maxInFlight: 64 });
    const started = performance.now();
    const hanging = Array.from({ length: 50 }, (_, i) =>
      lookup(`n${i}.hang`).then(
        () => "resolved",
        (err: { code?: string }) => ({ code: err.code, ms: performance.now() - started }),
      ),
    );
    // getaddrinfo (dns.lookup) shares libuv's 4 threads: with the old resolver it waited seconds here.
    const t0 = performance.now();
    await systemLookup("localhost");
    expect(performance.now() - t0).toBeLessThan(300);
    const t1 = performance.now();
    expect(await lookup("ok.example")).toHaveLength(2);
    expect(performance.now() - t1).toBeLessThan(300);
    const outcomes = await Promise.all(hanging);
    for (const o of outcomes) {
      expect(o).toMatchObject({ code: "ETIMEOUT" });
      // Each lookup's queries are cancelled at the deadline, whatever c-ares' own retry schedule.
      expect((o as { ms: number }).ms).toBeGreaterThanOrEqual(deadlineMs - 50);
      expect((o as { ms: number }).ms).toBeLessThan(deadlineMs + 400);
    }
  });

  it("refuses lookups beyond the in-flight cap at once with a 503, and frees the slots afterwards", async () => {
    const lookup = lookupWith({ deadlineMs: 400, maxInFlight: 4 });
    const hanging = Array.from({ length: 4 }, (_, i) => lookup(`cap${i}.hang`).catch((err: unknown) => err));
    const t0 = performance.now();
    const refused = await resolveWebhookTarget(new URL("https://ok.example/"), { allowLoopback: false, lookup }).catch((err: unknown) => err);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: "too many webhook host lookups in flight; retry shortly", retryAfterSec: 2 });
    await Promise.all(hanging);
    expect(await lookup("ok.example")).toHaveLength(2);
  });
});
