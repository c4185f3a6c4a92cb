import type { PerpVenue } from "../perp/types.js";

/**
 * dYdX's venue key in answers, metrics, settings and errors (`dydx`).
 *
 * Cast while `PERP_VENUES` (src/venues/perp/types.ts) does not list it yet: once the wiring adds `"dydx"` there, this
 * becomes `"dydx" as const satisfies PerpVenue` and every use type-checks as the literal.
 */
export const DYDX = "dydx" as PerpVenue;
