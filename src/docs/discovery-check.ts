import "../supported-node.js"; // first: refuses an unsupported Node before anything native loads
import {
  attachProbePayload,
  checkEndpointSchema,
  checkL2ForOpenAPI,
  checkL4ForOpenAPI,
  getL3ForProbe,
  getOpenAPI,
  getProbe,
  getWarningsForFavicon,
  getWarningsForL2,
  getWarningsForL3,
  getWarningsForL4,
  getWarningsForLegacyWellKnown,
  getWarningsForOpenAPI,
  isOpenApiParseFailure,
  probeLegacyWellKnown,
  type HttpMethod,
  type OpenApiSource,
} from "@agentcash/discovery";

/*
 * The discovery checks x402scan and agentcash run on an origin (`@agentcash/discovery`, the library behind
 * `npx @agentcash/discovery <origin>`), plus the probe x402scan makes of each resource a well-known document
 * lists: OpenAPI profile (security, x-payment-info, contact, guidance), every operation's advisories, the
 * favicon, and for every listed resource the unpaid 402 (x402 v2 PaymentRequired with input and output
 * schemas, MPP challenges). `npm run discovery-check -- <url>` runs them against a deployment.
 */

/** One finding, with where it was found (an operation, a probed URL). */
export interface Finding {
  code: string;
  severity: "error" | "warn" | "info";
  message: string;
  hint?: string;
  path?: string;
  where?: string;
}

/** What {@link runDiscoveryChecks} found. */
export interface DiscoveryReport {
  origin: string;
  /** Operations read from `/openapi.json`. */
  routes: number;
  /** Resources of `/.well-known/x402.json` probed, with the status each answered. */
  probes: Array<{ url: string; method: string; status: number | null }>;
  findings: Finding[];
  errors: number;
}

type Warning = { code: string; severity: string; message: string; hint?: string; path?: string };

function tag(where: string | undefined, ws: readonly Warning[]): Finding[] {
  return ws.map((w) => ({
    code: w.code,
    severity: w.severity as Finding["severity"],
    message: w.message,
    ...(w.hint ? { hint: w.hint } : {}),
    ...(w.path ? { path: w.path } : {}),
    ...(where ? { where } : {}),
  }));
}

/** A discovery item of `/.well-known/x402.json` as far as probing needs it. */
interface ListedResource {
  resource: string;
  method?: string;
  body?: Record<string, unknown>;
  probe?: boolean;
}

/** The probeable resources of `/.well-known/x402.json`, or undefined when the document cannot be read. */
async function listedResources(origin: string): Promise<ListedResource[] | undefined> {
  try {
    const res = await fetch(`${origin}/.well-known/x402.json`, { headers: { accept: "application/json" } });
    if (!res.ok) return undefined;
    const doc = (await res.json()) as { items?: ListedResource[] };
    return Array.isArray(doc.items) ? doc.items.filter((i) => typeof i?.resource === "string" && i.probe !== false) : undefined;
  } catch {
    return undefined;
  }
}

/** The status a resource answers when fetched as listed (unpaid), or null when unreachable. */
async function statusOf(r: ListedResource): Promise<number | null> {
  const method = (r.method ?? "GET").toUpperCase();
  try {
    const res = await fetch(r.resource, {
      method,
      headers: { accept: "application/json", ...(r.body ? { "content-type": "application/json" } : {}) },
      ...(r.body && method !== "GET" ? { body: JSON.stringify(r.body) } : {}),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return null;
  }
}

/**
 * Runs the checks against `target` (an origin or any URL on it).
 * @returns the findings; `errors` counts those of severity `error` (the ones discovery rejects).
 */
export async function runDiscoveryChecks(target: string): Promise<DiscoveryReport> {
  const origin = new URL(/^https?:\/\//.test(target) ? target : `https://${target}`).origin;
  const findings: Finding[] = [];
  const [openApiResult, favicon] = await Promise.all([getOpenAPI(origin), getWarningsForFavicon(origin)]);
  const raw = openApiResult.isOk() ? openApiResult.value : null;
  findings.push(...tag("/openapi.json", getWarningsForOpenAPI(raw)));
  if (favicon.isOk()) findings.push(...tag(undefined, favicon.value));
  const openApi: OpenApiSource | null = raw && !isOpenApiParseFailure(raw) ? raw : null;
  // Without a readable OpenAPI document agentcash and x402scan find nothing (they only note it): an error here.
  if (!openApi) findings.push({ code: "OPENAPI_UNAVAILABLE", severity: "error", message: `no readable OpenAPI document at ${origin}/openapi.json`, where: "/openapi.json" });
  let routes = 0;
  if (openApi && openApi.routes.length > 0) {
    routes = openApi.routes.length;
    const l2 = checkL2ForOpenAPI(openApi);
    findings.push(...tag("/openapi.json", getWarningsForL2(l2)), ...tag("/openapi.json", getWarningsForL4(checkL4ForOpenAPI(openApi))));
    // Per operation, as the agentcash CLI does: the OpenAPI advisories, with the probe's 402 when it gets one.
    for (const path of [...new Set(l2.routes.map((r) => r.path))]) {
      const url = `${origin}${path}`;
      const result = await checkEndpointSchema({ url });
      if (!result.found) {
        findings.push(...tag(path, getWarningsForL3(null)));
        continue;
      }
      const paid = result.advisories.filter((a) => a.source === "openapi" && (a.authMode === "paid" || a.authMode === "apiKey+paid"));
      if (paid.length) await attachProbePayload(url, paid);
      for (const a of result.advisories) findings.push(...tag(`${a.method} ${path}`, getWarningsForL3(a)));
    }
  }
  const legacy = await probeLegacyWellKnown(origin);
  if (legacy.isOk()) findings.push(...tag(undefined, getWarningsForLegacyWellKnown(legacy.value)));

  // x402scan probes each listed resource and expects an unpaid 402 with usable schemas.
  const probes: DiscoveryReport["probes"] = [];
  const listed = await listedResources(origin);
  if (!listed?.length)
    findings.push({
      code: "X402_DISCOVERY_UNAVAILABLE",
      severity: "error",
      message: `no paid resource listed at ${origin}/.well-known/x402.json`,
      where: "/.well-known/x402.json",
    });
  for (const r of listed ?? []) {
    const method = (r.method ?? "GET").toUpperCase() as HttpMethod;
    const where = `${method} ${r.resource}`;
    const status = await statusOf(r);
    probes.push({ url: r.resource, method, status });
    if (status !== 402) {
      findings.push({
        code: "RESOURCE_NOT_402",
        severity: "error",
        message: `listed resource answered ${status ?? "nothing"} unpaid, not 402`,
        hint: "list URLs that answer 402 when fetched as listed",
        where,
      });
      continue;
    }
    const probe = await getProbe(r.resource, undefined, undefined, method === "GET" ? undefined : r.body);
    if (probe.isErr()) {
      findings.push({ code: "PROBE_FAILED", severity: "error", message: probe.error.message, where });
      continue;
    }
    const path = new URL(r.resource).pathname.replace(/\/+$/, "") || "/";
    findings.push(...tag(where, getWarningsForL3(getL3ForProbe(probe.value, path, method, openApi))));
  }
  return { origin, routes, probes, findings, errors: findings.filter((f) => f.severity === "error").length };
}

/** Prints a report; returns the process exit code (1 when there are errors). */
export function printReport(report: DiscoveryReport, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): number {
  out(`Discovery checks of ${report.origin}: ${report.routes} OpenAPI operations, ${report.probes.length} listed resources probed`);
  for (const p of report.probes) out(`  ${p.status === 402 ? "402" : String(p.status ?? "---")}  ${p.method.padEnd(6)} ${p.url}`);
  const order = { error: 0, warn: 1, info: 2 } as const;
  const sorted = [...report.findings].sort((a, b) => order[a.severity] - order[b.severity]);
  const counts = { error: 0, warn: 0, info: 0 };
  for (const f of sorted) {
    counts[f.severity]++;
    out(`[${f.severity.padEnd(5)}] ${f.code}${f.where ? ` (${f.where})` : ""}: ${f.message}${f.hint ? `\n          hint: ${f.hint}` : ""}`);
  }
  out(`${counts.error} errors, ${counts.warn} warnings, ${counts.info} notes`);
  return counts.error > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = process.argv[2];
  if (!target) {
    process.stderr.write("usage: npm run discovery-check -- <url of a deployment, e.g. https://api.example.com>\n");
    process.exit(2);
  }
  const report = await runDiscoveryChecks(target);
  process.exit(printReport(report));
}
