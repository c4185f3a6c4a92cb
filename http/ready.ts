/**
 * `GET /ready`: whether this replica can serve paid traffic now, per component, for load balancers and
 * orchestrators (the checks: `src/doctor/readiness.ts`). 200 when every configured component is ok, else 503.
 */
import type { RequestHandler } from "express";
import type { Readiness, ReadinessReport } from "../src/doctor/readiness.js";

/** The `/ready` route: 200 when every configured component is ok, else 503; never cached by clients. Without `readiness`, 200 with no components. */
export function readyRoute(readiness: Readiness | undefined): RequestHandler {
  return async (_req, res, next) => {
    try {
      const report: ReadinessReport = readiness ? await readiness.check() : { status: "ready", checked_at: new Date().toISOString(), components: {} };
      res.setHeader("Cache-Control", "no-store");
      res.status(report.status === "ready" ? 200 : 503).json(report);
    } catch (err) {
      next(err);
    }
  };
}
