/**
 * `npm run fuzz [-- --requests 10000 --seed 1]`: the larger fuzz run (loopback only, stops by itself).
 * Prints the status counts of both stacks and every 5xx; exits 1 on any 5xx, an unanswered request, a
 * dead process or `/metrics` beyond its bound.
 */
import "../../src/supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { parseArgs } from "node:util";

// Thousands of hostile requests would flood the terminal with expected warnings.
process.env.LOG_LEVEL ??= "error";
const { fuzzBothStacks } = await import("./stacks.js");
const { METRICS_BOUND_BYTES, problems } = await import("./verdict.js");

const { values } = parseArgs({ options: { requests: { type: "string", default: "10000" }, seed: { type: "string", default: "1" } } });
const total = Number(values.requests);
const seed = Number(values.seed);
const started = Date.now();
const { paid, free } = await fuzzBothStacks(seed, Math.ceil(total * 0.7), Math.floor(total * 0.3));
for (const [name, r] of Object.entries({ paid, free })) {
  console.log(`${name}: sent ${r.sent}, unsendable ${r.unsendable}, statuses ${JSON.stringify(r.statuses)}`);
  console.log(`  /metrics ${r.metricsBytesBefore} -> ${r.metricsBytesAfter} bytes (bound ${METRICS_BOUND_BYTES}), route labels ${r.routeLabels}, alive ${r.alive}`);
  for (const f of r.failures.slice(0, 20))
    console.log(
      `  FAIL ${f.status} ${f.request.method} ${f.request.path.slice(0, 200)} (headers ${JSON.stringify(f.request.headers).length} B, body ${f.request.body?.length ?? 0} B) ${f.body.slice(0, 200)}`,
    );
}
const all = [...problems(paid), ...problems(free)];
console.log(`seed ${seed}, ${total} requests in ${((Date.now() - started) / 1000).toFixed(1)} s: ${all.length ? all.join("; ") : "no 5xx, process alive, /metrics bounded"}`);
process.exit(all.length ? 1 : 0);
