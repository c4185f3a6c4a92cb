import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOfflineStack, type OfflineStack } from "../../src/sandbox/offline-stack.js";

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
}

/**
 * The request Scalar's "Send" makes for an operation of the served /openapi.json: path parameters and query
 * parameters filled with their examples, the request body's example as JSON. Undefined when a required
 * parameter has no example (the request could not be made as shown).
 */
function sendRequest(path: string, method: string, op: Doc): { url: string; init: RequestInit } | undefined {
  const params = ((op.parameters ?? []) as Parameter[]).filter((p) => p.in === "path" || p.in === "query");
  if (params.some((p) => p.required && p.example === undefined)) return undefined;
  let url = path;
  const query = new URLSearchParams();
  for (const p of params) {
    if (p.example === undefined) continue;
    if (p.in === "path") url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
    else query.set(p.name, String(p.example));
  }
  const body = op.requestBody?.content?.["application/json"]?.example;
  if (op.requestBody?.required && body === undefined) return undefined;
  return {
    url: query.size ? `${url}?${query}` : url,
    init: { method: method.toUpperCase(), ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) },
  };
}

/* /docs is Scalar over /openapi.json: each operation's price shows, and "Send" with the examples reaches the 402. */
describe("/docs: prices and a working Send", () => {
  let stack: OfflineStack;
  let doc: Doc;
  beforeAll(async () => {
    stack = await startOfflineStack();
    doc = await (await fetch(`${stack.url}/openapi.json`)).json();
  });
  afterAll(async () => {
    await stack?.close();
  });

  const operations = () =>
    Object.entries(doc.paths as Record<string, Record<string, Doc>>).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => ["get", "post", "put", "delete", "patch"].includes(method))
        .map(([method, op]) => ({ path, method, op })),
    );

  it("gives every required path and query parameter, and every required body, an example", () => {
    const missing = operations().flatMap(({ path, method, op }) => [
      ...((op.parameters ?? []) as Parameter[])
        .filter((p) => (p.in === "path" || p.in === "query") && p.required && p.example === undefined)
        .map((p) => `${method} ${path} ${p.name}`),
      ...(op.requestBody?.required && op.requestBody.content?.["application/json"]?.example === undefined ? [`${method} ${path} body`] : []),
    ]);
    expect(missing).toEqual([]);
  });

  it("shows each paid operation's price as a badge, and free ones as free", () => {
    for (const { path, method, op } of operations()) {
      if (!op.operationId || op["x-badges"] === undefined) continue;
      const info = op["x-payment-info"];
      const badge = op["x-badges"][0].name as string;
      if (!info) expect(badge, `${method} ${path}`).toBe("free");
      else if (info.price.mode === "fixed") expect(badge, `${method} ${path}`).toBe(`${info.price.amount} USD`);
      else expect(badge, `${method} ${path}`).toBe(`from ${info.price.min} USD`);
    }
    const paid = operations().filter(({ op }) => op["x-payment-info"]);
    expect(paid.length).toBeGreaterThan(20);
    for (const { op } of paid) expect(op["x-badges"]).toHaveLength(1);
  });

  it("Send on every paid operation, with its examples, answers 402 (the payment requirements), not 400", async () => {
    const outcomes: Record<string, { status: number; error?: { code: string; details?: { field?: string; reason?: string } } }> = {};
    for (const { path, method, op } of operations()) {
      if (!op["x-payment-info"]) continue;
      const req = sendRequest(path, method, op)!;
      const res = await fetch(`${stack.url}${req.url}`, req.init);
      const body = (await res.json()) as { error?: { code: string } };
      outcomes[`${method.toUpperCase()} ${path}`] = { status: res.status, ...(res.status === 402 ? {} : { error: body.error }) };
    }
    expect(Object.keys(outcomes).length).toBeGreaterThan(20);
    // Checked before any payment, so "Send" cannot reach the 402 with an example: the alert webhooks
    // (hooks.example.com does not resolve; the caller's own receiver goes there) and the extension of an
    // alert that does not exist (the caller's own alert id goes there).
    const exceptions = Object.entries(outcomes).filter(([, o]) => o.status !== 402);
    for (const [op, o] of exceptions) {
      if (op.endsWith("/extend")) expect(o, op).toMatchObject({ status: 404, error: { code: "NOT_FOUND" } });
      else expect(o, op).toMatchObject({ status: 400, error: { code: "BAD_REQUEST", details: { field: "webhook_url", reason: "unresolvable" } } });
    }
    expect(exceptions.map(([op]) => op).sort()).toEqual([
      "POST /dex/token-alert",
      "POST /liquidation/alert",
      "POST /liquidation/alert/{id}/extend",
      "POST /price-alert",
      "POST /price-alert/{id}/extend",
    ]);
  }, 120_000);

  it("Send on the quote and on /mcp, with their examples, answers 200", async () => {
    for (const [path, method] of [
      ["/api/v1/quote", "get"],
      ["/mcp", "post"],
    ] as const) {
      const op = doc.paths[path][method];
      const req = sendRequest(path, method, op)!;
      const headers = { ...(req.init.headers as Record<string, string>), accept: "application/json, text/event-stream" };
      const res = await fetch(`${stack.url}${req.url}`, { ...req.init, headers });
      expect(res.status, path).toBe(200);
      const body = (await res.json()) as { price_usd?: string; result?: { tools?: unknown[] } };
      if (path === "/mcp") expect(body.result?.tools?.length).toBeGreaterThan(0);
      else expect(body.price_usd).toBe("0.005");
    }
  });
});
