/**
 * One webhook delivery attempt: guard the URL, POST the signed body over HTTPS to the vetted
 * address, report what happened. Retries and scheduling belong to the caller.
 */
import { request } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { rootCertificates } from "node:tls";
import { AppError } from "../../errors.js";
import { VERSION } from "../../version.js";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  TIMESTAMP_HEADER,
  signStandardWebhook,
  signWebhook,
} from "./sign.js";
import { parseWebhookUrl, resolveWebhookTarget, type ResolvedAddress, type WebhookTargetPolicy } from "./target.js";

/** The outcome of one attempt. */
export interface DeliveryAttempt {
  /** True only for a 2xx answer. */
  ok: boolean;
  /** HTTP status received, or null when none was (refused, network/TLS error, timeout before headers). */
  status: number | null;
  /**
   * Why it failed, for logs and the caller's delivery log: `refused: <reason>`, `timeout after <n> ms`,
   * `redirect not followed`, `HTTP <status>`, or the network/TLS error message. Absent when ok.
   */
  error?: string;
  /** Wall time of the attempt in milliseconds, guard and DNS included. */
  durationMs: number;
}

/** What to deliver. */
export interface WebhookRequest {
  /** Caller-supplied URL; parsed and guarded again at every attempt. */
  url: string;
  /** JSON body, sent verbatim (UTF-8) and signed. */
  body: string;
  /** The webhook's shared secret (`whsec_<base64>`), used to sign both ways. */
  secret: string;
  /** Unix seconds put in the timestamp header and signed. */
  timestampSec: number;
  /** Delivery id header value (the same across retries of one event). */
  deliveryId: string;
  /** Event header value. */
  event: string;
  /** Extra headers (e.g. `X-Marketgate-Data-Source: simulated`); cannot override the signed ones. */
  headers?: Record<string, string>;
}

/** Sends single attempts; see {@link createWebhookSender}. */
export interface WebhookSender {
  /** Makes one attempt. Never throws: every failure is reported in the result. */
  send(req: WebhookRequest): Promise<DeliveryAttempt>;
}

/** Response bytes read (and discarded) at most; a receiver sending more has its response cut. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * Creates a sender. Each `send`:
 * - parses the URL and runs {@link resolveWebhookTarget} under `opts.policy` (refusal → `ok: false`,
 *   `status: null`, `error: "refused: <reason>"`, no connection made);
 * - POSTs with `node:https` (no agent, no redirects followed) to the vetted address only: a custom
 *   `lookup` returns it, so a DNS change after the check cannot move the connection; the certificate
 *   is still verified against the URL's host name (SNI `servername`);
 * - sends `Content-Type: application/json`, `User-Agent` (default `marketgate/<version>`), the marketgate
 *   signature, timestamp, delivery and event headers, and the Standard Webhooks `webhook-id`,
 *   `webhook-timestamp` and `webhook-signature` (sign.ts);
 * - gives up after `opts.timeoutMs` (default 5000 ms) counted from the start, DNS, connect, TLS and
 *   response headers included (`error: "timeout after <n> ms"`);
 * - reads at most 64 KiB of the response body and discards it.
 *
 * `opts.ca` is an extra trusted CA certificate (PEM), added to Node's bundled roots: tests only.
 */
export function createWebhookSender(opts: { policy: WebhookTargetPolicy; timeoutMs?: number; ca?: string | Buffer; userAgent?: string }): WebhookSender {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const userAgent = opts.userAgent ?? `marketgate/${VERSION}`;
  const ca = opts.ca === undefined ? undefined : [...rootCertificates, opts.ca];

  return {
    async send(req) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const timeoutError = `timeout after ${timeoutMs} ms`;
      try {
        const url = parseWebhookUrl(req.url);
        // DNS may hang far longer than the deadline: race it (the lookup itself cannot be cancelled).
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), timeoutMs);
        });
        const target = await Promise.race([resolveWebhookTarget(url, opts.policy), deadline]).finally(() => clearTimeout(timer));
        if (target === "timeout") return { ok: false, status: null, error: timeoutError, durationMs: elapsed() };
        const result = await post(url, target, req, { userAgent, ca, remainingMs: Math.max(1, timeoutMs - elapsed()), timeoutError });
        return { ...result, durationMs: elapsed() };
      } catch (err) {
        if (err instanceof AppError && err.code === "BAD_REQUEST") {
          const reason = (err.details as { reason?: unknown } | undefined)?.reason;
          return { ok: false, status: null, error: `refused: ${typeof reason === "string" ? reason : err.message}`, durationMs: elapsed() };
        }
        return { ok: false, status: null, error: errorText(err), durationMs: elapsed() };
      }
    },
  };
}

/** "message (CODE)" unless the message already names the code (Node's syscall errors do). */
function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}

function post(
  url: URL,
  target: ResolvedAddress,
  req: WebhookRequest,
  o: { userAgent: string; ca: Array<string | Buffer> | undefined; remainingMs: number; timeoutError: string },
): Promise<Omit<DeliveryAttempt, "durationMs">> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const isLiteral = isIP(host) !== 0;
  const body = Buffer.from(req.body, "utf8");

  // net calls this for names only (IP literals were vetted as they are). With autoSelectFamily
  // (default since Node 20) it asks for `all` addresses, otherwise for one.
  const pinnedLookup: LookupFunction = (hostname, options, cb) => {
    if (hostname !== host) return cb(new Error(`unexpected lookup of ${hostname}`), "", 0);
    if (options.all) cb(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  };

  return new Promise((resolve) => {
    let settled = false;
    let received: Omit<DeliveryAttempt, "durationMs"> | undefined;
    const finish = (r: Omit<DeliveryAttempt, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };

    const r = request({
      method: "POST",
      hostname: host,
      port: url.port || 443,
      path: `${url.pathname}${url.search}`,
      agent: false,
      // Only ever hand out the vetted address: the socket connects to what was checked.
      lookup: pinnedLookup,
      // SNI must be a name (RFC 6066); for IP literals Node checks the certificate's IP SANs instead.
      ...(isLiteral ? {} : { servername: host }),
      rejectUnauthorized: true,
      ...(o.ca ? { ca: o.ca } : {}),
      headers: {
        ...req.headers,
        Host: url.host,
        "Content-Type": "application/json",
        "Content-Length": String(body.length),
        "User-Agent": o.userAgent,
        [SIGNATURE_HEADER]: signWebhook(req.secret, req.timestampSec, req.body),
        [TIMESTAMP_HEADER]: String(req.timestampSec),
        [DELIVERY_HEADER]: req.deliveryId,
        [EVENT_HEADER]: req.event,
        // Standard Webhooks, beside the marketgate headers (sign.ts).
        [STANDARD_ID_HEADER]: req.deliveryId,
        [STANDARD_TIMESTAMP_HEADER]: String(req.timestampSec),
        [STANDARD_SIGNATURE_HEADER]: signStandardWebhook(req.secret, req.deliveryId, req.timestampSec, req.body),
      },
    });

    const timer = setTimeout(() => {
      // Once the status is in, it decides; the deadline then only cuts the body short.
      finish(received ?? { ok: false, status: null, error: o.timeoutError });
      r.destroy();
    }, o.remainingMs);

    r.on("error", (err) => finish({ ok: false, status: null, error: errorText(err) }));
    r.on("response", (res) => {
      const status = res.statusCode ?? 0;
      // The status decides the outcome; the body is only drained (up to the cap) so the exchange ends cleanly.
      const outcome: Omit<DeliveryAttempt, "durationMs"> =
        status >= 200 && status < 300
          ? { ok: true, status }
          : status >= 300 && status < 400
            ? { ok: false, status, error: "redirect not followed" }
            : { ok: false, status, error: `HTTP ${status}` };
      received = outcome;
      let seen = 0;
      res.on("data", (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) {
          finish(outcome);
          res.destroy();
        }
      });
      res.on("end", () => finish(outcome));
      res.on("error", () => finish(outcome));
      res.on("close", () => finish(outcome));
    });
    r.end(body);
  });
}
