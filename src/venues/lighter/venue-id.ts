import type { PerpVenue } from "../perp/types.js";

/**
 * Lighter's venue key in answers, metrics, settings and errors (`lighter`).
 *
 * Cast while `PERP_VENUES` (src/venues/perp/types.ts) does not list it yet: once the wiring adds `"lighter"` there,
 * this becomes `"lighter" as const satisfies PerpVenue` and every use type-checks as the literal.
 */
export const LIGHTER = "lighter" as PerpVenue;
