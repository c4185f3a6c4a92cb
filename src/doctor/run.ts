/**
 * `marketgate doctor`: runs every check of the registry (`checks.ts`) once against the configured venues and
 * classifies each outcome from what the venue HTTP client saw (`VenueLog` of the request scope) and what the
 * client or its parser threw:
 * - `unreachable` / `timeout`: the last attempt at an endpoint got no answer (connection refused, DNS, reset; or
 *   no answer within `UPSTREAM_TIMEOUT_MS` / `REQUEST_DEADLINE_MS`);
 * - `http`: the last attempt at an endpoint answered an HTTP error status (also when the client tolerated it, as
 *   OKX's best-effort mark and index prices);
 * - `shape`: the parser refused the payload; `field` is the zod path of the first issue (`symbols`, `0.markPrice`);
 * - `empty`: the answer parsed to nothing; `error`: anything else the client threw (its error code and message);
 * - `skipped`: the check needs another of its venue (the instrument list) that failed.
 */
import type { Config } from "../config.js";
import { Metrics } from "../core/metrics.js";
import { recordVenueExchanges, runInScope, VenueLog, type VenueExchange } from "../core/request-scope.js";
import { AppError } from "../errors.js";
import { logger as rootLogger, type Logger } from "../lib/log.js";
import { scrubUrls } from "../lib/redact.js";
import { VERSION } from "../version.js";
import { DOCTOR_CHECKS, doctorClients, type DoctorCheck, type DoctorClients } from "./checks.js";

/** Why a check failed. */
export type FailureKind = "unreachable" | "timeout" | "http" | "shape" | "empty" | "error";

/** The outcome of one check. */
export interface CheckResult {
  readonly id: string;
  readonly venue: string;
  readonly endpoint: string;
  readonly status: "ok" | "fail" | "skipped";
  /** Wall time of the check (every call it made, retries and budget waits included). */
  readonly latencyMs: number;
  readonly failure?: {
    readonly kind: FailureKind;
    /** One line for operators, starting with what failed (`unreachable: …`, `HTTP 503 from …`, `shape change at …`). */
    readonly message: string;
    /** `shape`: the zod path of the field that broke (`symbols`, `0.markPrice`; `(root)` for the whole body). */
    readonly field?: string;
    /** `http`: the status of the failed answer. */
    readonly httpStatus?: number;
  };
}

/** A whole run. */
export interface DoctorReport {
  readonly ranAt: string;
  readonly dataMode: Config["dataMode"];
  readonly ok: boolean;
  readonly results: readonly CheckResult[];
}

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /** Checks to run (default the whole registry). */
  checks?: readonly DoctorCheck[];
  log?: Logger;
  /** Clock of the backfill window (default `Date.now`). */
  now?: () => number;
}

/** The venue's last exchange with each endpoint it called, in call order. */
function lastPerEndpoint(exchanges: readonly VenueExchange[]): VenueExchange[] {
  const last = new Map<string, VenueExchange>();
  for (const x of exchanges) {
    last.delete(`${x.venue} ${x.endpoint}`);
    last.set(`${x.venue} ${x.endpoint}`, x);
  }
  return [...last.values()];
}

/** The zod path and issue of a parser's error (`invalidShape` details, or a stream parser's `prefix: path: issue; …`). */
function shapeIssue(err: AppError): { field: string; issue: string } | undefined {
  const first = Array.isArray(err.details) ? err.details[0] : typeof err.details === "string" ? err.details.split("; ")[0] : undefined;
  if (typeof first !== "string" || !/unexpected shape/.test(err.message)) return undefined;
  const parts = first.split(": ");
  // invalidShape: "<path>: <issue>"; stream parsers: "<event>: <path>: <issue>".
  const [field, ...issue] = Array.isArray(err.details) || parts.length < 3 ? parts : parts.slice(1);
  return { field: field === "" || field === undefined ? "(root)" : field, issue: issue.join(": ") };
}

/** Classifies a finished check from its venue exchanges and its outcome. */
function classify(check: DoctorCheck, log: VenueLog, outcome: { value: unknown } | { error: unknown }): CheckResult["failure"] {
  for (const x of lastPerEndpoint(log.exchanges)) {
    if (x.failure === "timeout") return { kind: "timeout", message: `timeout: no answer in time from ${x.endpoint}` };
    if (x.failure === "unreachable") return { kind: "unreachable", message: `unreachable: ${x.endpoint}: ${x.detail ?? "no connection"}` };
    if (x.status !== undefined && x.status >= 400) return { kind: "http", message: `HTTP ${x.status} from ${x.endpoint}`, httpStatus: x.status };
  }
  if ("error" in outcome) {
    const err = outcome.error;
    if (err instanceof AppError) {
      const shape = shapeIssue(err);
      if (shape) return { kind: "shape", field: shape.field, message: `shape change at "${shape.field}": ${shape.issue} (${err.message})` };
      return { kind: "error", message: `error: ${err.code}: ${err.message}` };
    }
    return { kind: "error", message: `error: ${err instanceof Error ? err.message : String(err)}` };
  }
  const v = outcome.value;
  const empty = (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && "trades" in v && Array.isArray(v.trades) && v.trades.length === 0);
  if (empty && !check.allowEmpty) return { kind: "empty", message: "empty: answered, but the parser found nothing in it" };
  return undefined;
}

/** Runs one check in a request scope of the service's deadline, recording its venue exchanges. */
async function runCheck(check: DoctorCheck, clients: DoctorClients, deadlineMs: number): Promise<CheckResult> {
  const log = new VenueLog();
  const started = performance.now();
  const outcome = await recordVenueExchanges(log, () => runInScope({ deadlineMs }, () => check.run(clients))).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  // Messages quote what clients threw, which may include a configured URL and its key: shown redacted.
  const classified = classify(check, log, outcome);
  const failure = classified && { ...classified, message: scrubUrls(classified.message) };
  const latencyMs = Math.round(performance.now() - started);
  return { id: check.id, venue: check.venue, endpoint: check.endpoint, status: failure ? "fail" : "ok", latencyMs, ...(failure ? { failure } : {}) };
}

/**
 * Calls every venue endpoint the service uses once, with `config`'s base URLs, budgets, timeouts and deadline, through
 * the service's clients and parsers. Venues run side by side, the checks of one venue in registry order; a check whose
 * prerequisite failed is skipped. Never throws for a venue failure: it is in the report.
 */
export async function runDoctor(config: Config, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const checks = opts.checks ?? DOCTOR_CHECKS;
  const now = opts.now ?? Date.now;
  const ranAt = new Date(now()).toISOString();
  const clients = doctorClients(config, { metrics: new Metrics(), log: opts.log ?? rootLogger, version: VERSION, now: now() });
  const byVenue = new Map<string, DoctorCheck[]>();
  for (const c of checks) byVenue.set(c.venue, [...(byVenue.get(c.venue) ?? []), c]);
  const results = new Map<string, CheckResult>();
  await Promise.all(
    [...byVenue.values()].map(async (list) => {
      for (const check of list) {
        const pre = check.needs === undefined ? undefined : results.get(check.needs);
        if (pre && pre.status !== "ok") {
          results.set(check.id, { id: check.id, venue: check.venue, endpoint: check.endpoint, status: "skipped", latencyMs: 0 });
          continue;
        }
        results.set(check.id, await runCheck(check, clients, config.requestDeadlineMs));
      }
    }),
  );
  const ordered = checks.map((c) => results.get(c.id)!);
  return { ranAt, dataMode: config.dataMode, ok: ordered.every((r) => r.status === "ok"), results: ordered };
}

/** The report as text: one line per check, then a summary line. */
export function formatReport(report: DoctorReport): string {
  const venueW = Math.max(...report.results.map((r) => r.venue.length));
  const endpointW = Math.max(...report.results.map((r) => r.endpoint.length));
  const lines = report.results.map((r) => {
    const head = `${r.venue.padEnd(venueW)}  ${r.endpoint.padEnd(endpointW)}  `;
    if (r.status === "ok") return `${head}ok    ${String(r.latencyMs).padStart(5)} ms`;
    if (r.status === "skipped") return `${head}skip  needs ${report.results.find((x) => x.venue === r.venue && x.status === "fail")?.endpoint ?? "a failed check"}`;
    return `${head}FAIL  ${r.failure!.message}`;
  });
  const failed = report.results.filter((r) => r.status !== "ok").length;
  lines.push("");
  lines.push(
    failed === 0 ? `all ${report.results.length} checks ok (${report.dataMode} data mode)` : `${failed} of ${report.results.length} checks not ok (${report.dataMode} data mode)`,
  );
  return lines.join("\n");
}
