import type { Config } from "../config.js";
import type { IngestionService } from "../ingestion/service.js";
import type { FundingSnapshot } from "./funding-feed.js";
import { LiveHub } from "./hub.js";
import { StreamLimits } from "./limits.js";
import { RESUME_MAX_EVENTS } from "./resume.js";

/** The live streams of one process: the topic hub, the stream limits and the settings the transports read. */
export interface LiveStreams {
  hub: LiveHub;
  limits: StreamLimits;
  settings: Config["live"];
}

/** Wires the live streams from the configuration: the hub over the stores (or none with `STREAMS=off`) and the limits. */
export function createLiveStreams(
  config: Config,
  deps: { ingestion?: IngestionService; readFunding: (symbol: string) => Promise<FundingSnapshot>; now: () => number },
): LiveStreams {
  const s = config.live;
  return {
    hub: new LiveHub({
      ingestion: deps.ingestion,
      readFunding: deps.readFunding,
      now: deps.now,
      fundingPollMs: s.fundingPollMs,
      resume: { windowMs: s.resumeWindowMs, maxEvents: RESUME_MAX_EVENTS },
    }),
    limits: new StreamLimits(s.maxStreams, s.maxPerWallet),
    settings: s,
  };
}
