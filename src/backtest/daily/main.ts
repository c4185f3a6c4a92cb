/**
 * `npm run backtest:daily -- --data <folder> [--from YYYY-MM-DD] [--fit-all] [--reps N]`: the daily walk-forward
 * backtest of cascade risk on a folder of Coinalyze-format CSV files (docs/methods/liquidation-heatmap.md,
 * "Daily backtest"). Prints a short table, then, as its last line, one JSON object (the result).
 * `--fit-all` also prints the model fitted on every usable day (the production coefficients of
 * src/analytics/cascade-risk.ts) and the raw features' medians (its `fill`).
 */
import "../../supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { runDailyBacktest } from "./evaluate.js";
import { loadPanel, PanelError } from "./panel.js";

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

function fail(message: string): never {
  process.stderr.write(`backtest:daily: ${message}\n`);
  process.exit(2);
}

const data = opt("--data");
if (!data) fail("--data <folder> is required (e.g. ../shared/data/real/coinalyze-daily)");
const from = opt("--from");
if (from !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(from)) fail(`--from must be YYYY-MM-DD, got '${from}'`);
const repsArg = opt("--reps");
const reps = repsArg === undefined ? undefined : Number(repsArg);
if (reps !== undefined && !(Number.isInteger(reps) && reps > 0)) fail(`--reps must be a positive integer, got '${repsArg}'`);

const started = Date.now();
try {
  const panel = loadPanel(data);
  const { result, fitter, firstRowDay } = runDailyBacktest(panel, { from, bootstrapReps: reps });
  const seconds = (Date.now() - started) / 1000;
  const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(34)}${value}\n`);
  line("panel", `${panel.days[0]}..${panel.days[panel.days.length - 1]}, ${panel.symbols.size} symbols with liquidations`);
  line("scored", `${result.from}..${result.to}: ${result.days} days, ${result.symbol_days} symbol-days`);
  for (const [k, v] of Object.entries(result.spearman)) line(`spearman ${k}`, `${v} [${result.ci95.spearman[k as keyof typeof result.spearman].join(", ")}]`);
  for (const [k, v] of Object.entries(result.levels)) {
    const ci = result.ci95.levels[k as keyof typeof result.levels];
    line(`level ${k}`, `share ${v.share} [${ci.share.join(", ")}], next-day liq ${v.next_day_liq_pct_oi}% of OI [${ci.next_day_liq_pct_oi.join(", ")}]`);
  }
  for (const [k, v] of Object.entries(result.precision_at_top_decile)) {
    line(`top-decile precision ${k}`, `${v} [${result.ci95.precision_at_top_decile[k as keyof typeof result.precision_at_top_decile].join(", ")}]`);
  }
  line("runtime", `${seconds.toFixed(1)} s`);
  if (args.includes("--fit-all")) {
    // Every usable day's rows were added by the walk-forward loop: this is the fit on all of them.
    const all = fitter.fit(`${firstRowDay}..${panel.days[panel.days.length - 2]}`);
    process.stdout.write(`production model (fit on all ${fitter.size} rows): ${JSON.stringify(all)}\n`);
    process.stdout.write(`feature medians (fill): ${JSON.stringify(fitter.medians())}\n`);
  }
  process.stdout.write(`${JSON.stringify({ ...result, runtime_s: Math.round(seconds * 10) / 10 })}\n`);
} catch (err) {
  if (err instanceof PanelError || err instanceof Error) fail(err.message);
  throw err;
}
