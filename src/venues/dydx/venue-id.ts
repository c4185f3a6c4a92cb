import type { PerpVenue } from "../perp/types.js";

/** dYdX's venue key in answers, metrics, settings and errors (`dydx`). */
export const DYDX = "dydx" as const satisfies PerpVenue;
