import { request } from "node:http";
import type { PaymentPayload } from "@x402/core/types";
import type { AnyTool } from "../../src/registry/tool.js";
import { generateRequests, type FuzzRequest } from "./generator.js";

/** A request that got a 5xx (or no answer at all), kept for the report. */
export interface FuzzFailure {
  request: FuzzRequest;
  status: number | "no_answer";
  body: string;
}

/** What a fuzz run saw. */
export interface FuzzReport {
  sent: number;
  /** Requests the HTTP client itself refused to send (invalid header bytes and the like). */
  unsendable: number;
  /** Count per status code. */
  statuses: Record<string, number>;
  failures: FuzzFailure[];
  metricsBytesBefore: number;
  metricsBytesAfter: number;
  /** Distinct values of the `route` label in `/metrics` after the run. */
  routeLabels: number;
  /** `/health` answered 200 after the run. */
  alive: boolean;
}

/** Header values must be visible latin-1 without CR/LF; keep the hostile content otherwise. */
function headerSafe(v: string): string {
  return v.replace(/[^\x20-\x7e]/g, "?");
}

function send(base: URL, req: FuzzRequest): Promise<{ status: number; body: string } | "unsendable" | { noAnswer: string }> {
  return new Promise((resolve) => {
    let r;
    try {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, headerSafe(v)]));
      r = request({ host: base.hostname, port: base.port, method: req.method, path: req.path, headers, agent: false, timeout: 30_000 }, (res) => {
        // An open event stream (free streams when payments are off) never ends: its status is the answer.
        if (String(res.headers["content-type"]).startsWith("text/event-stream")) {
          resolve({ status: res.statusCode ?? 0, body: "" });
          return res.destroy();
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8").slice(0, 500) }));
        res.on("error", (err) => resolve({ noAnswer: String(err) }));
      });
    } catch {
      return resolve("unsendable");
    }
    // Node's client hands the answer to a CONNECT to this event, not to the response callback.
    r.on("connect", (res, socket) => {
      resolve({ status: res.statusCode ?? 0, body: "" });
      socket.destroy();
    });
    r.on("timeout", () => r.destroy(new Error("timeout")));
    r.on("error", (err) => resolve({ noAnswer: `${(err as NodeJS.ErrnoException).code ?? ""} ${err.message}` }));
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

async function metricsText(base: string): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}

/**
 * Sends `count` seeded hostile requests to a running service (`baseUrl`) with `concurrency` in flight,
 * and reports statuses, every 5xx or unanswered request, `/metrics` growth and liveness.
 */
export async function runFuzz(opts: {
  baseUrl: string;
  seed: number;
  count: number;
  concurrency?: number;
  tools: readonly AnyTool[];
  valid?: PaymentPayload;
}): Promise<FuzzReport> {
  const base = new URL(opts.baseUrl);
  const report: FuzzReport = { sent: 0, unsendable: 0, statuses: {}, failures: [], metricsBytesBefore: 0, metricsBytesAfter: 0, routeLabels: 0, alive: false };
  report.metricsBytesBefore = (await metricsText(opts.baseUrl)).length;
  const it = generateRequests(opts.seed, opts.count, opts.tools, opts.valid);
  const worker = async () => {
    for (let next = it.next(); !next.done; next = it.next()) {
      const req = next.value;
      // One connection per request (agent: false): what a hostile request leaves on its socket cannot fail the next.
      const res = await send(base, req);
      if (res === "unsendable") {
        report.unsendable++;
        continue;
      }
      report.sent++;
      const status = "noAnswer" in res ? "no_answer" : res.status;
      report.statuses[String(status)] = (report.statuses[String(status)] ?? 0) + 1;
      if (status === "no_answer" || status >= 500) report.failures.push({ request: req, status, body: "noAnswer" in res ? res.noAnswer : res.body });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  const text = await metricsText(opts.baseUrl);
  report.metricsBytesAfter = text.length;
  report.routeLabels = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1])).size;
  report.alive = (await fetch(`${opts.baseUrl}/health`).catch(() => undefined))?.status === 200;
  return report;
}
