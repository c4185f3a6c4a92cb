import { loadConfig } from "../../src/config.js";
import { createService, type Service } from "../../src/service.js";
import { simEnv } from "../../src/sandbox/sim-env.js";
import { startSimulator, type RunningSimulator } from "../../src/sim/server.js";
import { json } from "./json.js";

/** A response read for assertions. */
export interface GotResponse {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/** The service in sim mode with payments off (no PAY_TO), on loopback, plus its simulator. */
export interface FreeStack {
  service: Service;
  url: string;
  sim: RunningSimulator;
  /** `GET url + path`, body parsed as JSON. */
  get(path: string): Promise<GotResponse>;
  close(): Promise<void>;
}

/** Starts a simulator and a payment-free service pointed at it. */
export async function startFreeStack(env: Record<string, string> = {}): Promise<FreeStack> {
  const sim = await startSimulator({ seed: 11 });
  const config = loadConfig({ HOST: "127.0.0.1", PORT: "0", ...simEnv(sim), ...env });
  const service = await createService({ config });
  const l = await service.listen();
  return {
    service,
    url: l.url,
    sim,
    get: async (path) => {
      const res = await fetch(`${l.url}${path}`);
      return { status: res.status, headers: res.headers, body: await json(res) };
    },
    close: async () => {
      await l.close();
      await sim.close();
    },
  };
}
