import type { PerpVenue } from "../perp/types.js";

/**
 * HTX's venue key in answers, metrics, settings and errors (`htx`).
 *
 * Cast while `PERP_VENUES` (src/venues/perp/types.ts) does not list it yet: once the wiring adds `"htx"` there, this
 * becomes `"htx" as const satisfies PerpVenue` and every use type-checks as the literal.
 */
export const HTX = "htx" as PerpVenue;
