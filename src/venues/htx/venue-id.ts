import type { PerpVenue } from "../perp/types.js";

/** HTX's venue key in answers, metrics, settings and errors (`htx`; listed in `PERP_VENUES`, src/venues/perp/types.ts). */
export const HTX = "htx" as const satisfies PerpVenue;
