import { Router } from "express";
import { match } from "path-to-regexp";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import type { ToolRunner } from "../src/core/runner.js";
import { AppError } from "../src/errors.js";
import { isFree, priceFor, type AnyTool } from "../src/registry/tool.js";
import { sendError } from "./errors.js";
import { inputReader } from "./input.js";
import type { HttpPaymentGate } from "./payment-gate.js";
import type { ClientRateLimiter } from "../src/lib/rate-limit.js";
import { limitByClient } from "./rate-limit.js";

/**
 * `GET /api/v1/quote?path=<request path with query>[&method=GET][&body=<JSON>]` (free): what a request
 * would cost, without running it. Validates the request like the real route (same 400/404), says whether
 * it would be a free cache hit, and returns the exact x402 requirements (and MPP challenges) its 402 would
 * carry. A POST request's JSON body goes in `body`; without it the price is still quoted (it does not
 * depend on the body) and the answer says `input_checked: false`.
 *
 * Every call consumes a point of `limiter` (the free-route budget, per client) before any work: a quote
 * runs the tool's check before payment (venue listings, webhook host DNS) and builds payment requirements, and no
 * cache sits in front of it. Over the budget: 429 with `Retry-After`.
 */
export function quoteRoute(deps: { tools: readonly AnyTool[]; runner: ToolRunner; limiter: ClientRateLimiter; gate?: HttpPaymentGate }): Router {
  const routes = deps.tools.map((tool) => ({ tool, match: match<Record<string, string>>(tool.path, { decode: decodeURIComponent }), read: inputReader(tool) }));
  const router = Router();
  router.get("/api/v1/quote", limitByClient(deps.limiter), async (req, res) => {
    try {
      const raw = typeof req.query.path === "string" ? req.query.path : undefined;
      if (!raw?.startsWith("/"))
        throw new AppError("BAD_REQUEST", "path is required: the request path with its query, e.g. /api/v1/prices?symbols=btc", {
          details: [{ field: "path", message: "must start with /" }],
        });
      const method = (typeof req.query.method === "string" ? req.query.method : "GET").toUpperCase();
      const url = new URL(raw, "http://quote.local");
      let found: { tool: AnyTool; params: Record<string, string>; read: (typeof routes)[number]["read"] } | undefined;
      // First match wins, in registry order, exactly as express routes them.
      for (const r of routes) {
        const m = r.tool.method === method ? r.match(url.pathname) : false;
        if (m) {
          found = { tool: r.tool, params: m.params, read: r.read };
          break;
        }
      }
      if (!found) throw new AppError("NOT_FOUND", `no route ${method} ${url.pathname}`);
      const { tool } = found;
      const bodyRaw = typeof req.query.body === "string" ? req.query.body : undefined;
      const inputChecked = method !== "POST" || bodyRaw !== undefined;
      let input: unknown;
      if (inputChecked) {
        input = found.read({ params: found.params, query: Object.fromEntries(url.searchParams), body: bodyRaw === undefined ? {} : parseBody(bodyRaw) });
        await deps.runner.checkBeforePayment(tool, input, { client: req.ip });
      }
      const base = {
        tool: tool.name,
        method,
        path: url.pathname + url.search,
        price_usd: isFree(tool) ? "0" : inputChecked ? priceFor(tool, input) : tool.priceUsd,
        cache_ttl_sec: tool.cacheTtlSec,
        input_checked: inputChecked,
        // Quoting has no side effects, so it cannot tell whether an interim answer (e.g. CVD warm-up) would answer first.
        ...(tool.interimAnswer ? { interim_possible: "the first request for a symbol that is not streamed yet is answered free with a warm-up body (202)" } : {}),
      };
      if (isFree(tool) || !deps.gate) return res.json({ ...base, charged: false, reason: isFree(tool) ? "free_tool" : "payments_off" });
      if (inputChecked && (await deps.runner.has(tool, input))) return res.json({ ...base, charged: false, reason: "cache_hit" });
      const resource = { url: `${deps.gate.baseUrl(req)}${base.path}`, description: tool.summary, mimeType: "application/json" };
      const pr = { tool, resource, fingerprint: "", target: `${method} ${resource.url}`, priceUsd: base.price_usd };
      const required = await deps.gate.processor.paymentRequired(pr, "Payment required");
      // Every method's challenge, which a 402 offers only as far as its header block has room (http/fit-402.ts).
      const challenges = deps.gate.mpp ? await deps.gate.mpp.challenges(tool, pr.priceUsd, "all") : [];
      res.json({ ...base, charged: true, x402: { payment_required: required, header: encodePaymentRequiredHeader(required) }, mpp: { challenges } });
    } catch (err) {
      sendError(res, err);
    }
  });
  return router;
}

/** The `body` parameter of a POST quote: a JSON object. @throws AppError BAD_REQUEST otherwise. */
function parseBody(raw: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    v = undefined;
  }
  if (!v || typeof v !== "object" || Array.isArray(v))
    throw new AppError("BAD_REQUEST", "body must be the JSON object the POST request would send", { details: [{ field: "body", message: "not a JSON object" }] });
  return v as Record<string, unknown>;
}
