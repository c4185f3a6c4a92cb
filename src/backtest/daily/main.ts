/**
 * `npm run backtest:daily -- --data <folder> [--refit [--train-months N]] [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--reps N] [--fit-latest]`:
 * the daily backtest of cascade risk on a folder of Coinalyze-format CSV files (docs/methods/cascade-risk.md,
 * "The daily backtest"). Without `--refit` it scores the shipped coefficients and thresholds; with it, walk-forward (each
 * month scored by the fit on the N months before it, default 12). Prints a short table, then, as its last line, one
 * JSON object (the result). `--fit-latest` also prints the fit on the last N months of the folder (what the
 * walk-forward would use for the month after the data: the shipped model of src/analytics/cascade-risk.ts).
 */
import "../../supported-node.js"; // first: refuses an unsupported Node before anything native loads
import { fitLatest, runDailyBacktest } from "./evaluate.js";
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

const positiveInt = (name: string): number | undefined => {
  const raw = opt(name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!(Number.isInteger(n) && n > 0)) fail(`${name} must be a positive integer, got '${raw}'`);
  return n;
};

const data = opt("--data");
if (!data) fail("--data <folder> is required (e.g. ../shared/data/real/coinalyze-daily)");
const day = (name: string): string | undefined => {
  const v = opt(name);
  if (v !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(v)) fail(`${name} must be YYYY-MM-DD, got '${v}'`);
  return v;
};
const from = day("--from");
const to = day("--to");
const reps = positiveInt("--reps");
const trainMonths = positiveInt("--train-months") ?? 12;
const refit = args.includes("--refit");

const started = Date.now();
try {
  const panel = loadPanel(data);
  const { result } = runDailyBacktest(panel, { from, to, refit, trainMonths, bootstrapReps: reps });
  const seconds = (Date.now() - started) / 1000;
  const line = (label: string, value: string) => process.stdout.write(`${label.padEnd(34)}${value}\n`);
  line("panel", `${panel.days[0]}..${panel.days[panel.days.length - 1]}, ${panel.symbols.size} symbols with liquidations`);
  line("scored", `${result.from}..${result.to}: ${result.days} days, ${result.symbol_days} symbol-days (${result.mode})`);
  line("model", result.more.model);
  for (const [k, v] of Object.entries(result.spearman)) {
    const key = k as keyof typeof result.spearman;
    line(`spearman ${k}`, `${v} [${result.ci95.spearman[key].join(", ")}], top-decile precision ${result.precision_at_top_decile[key]}`);
  }
  const lead = result.more.lead_vs_best;
  line("lead over the best baseline", `${lead.lead} [${lead.ci_low}, ${lead.ci_high}] over ${lead.baseline}`);
  const noLiq = result.more.without_liquidations;
  line("without liquidation history", `${noLiq.spearman}, lead over turnover ${noLiq.lead_vs_turnover.lead} [${noLiq.lead_vs_turnover.ci_low}, ${noLiq.lead_vs_turnover.ci_high}]`);
  for (const [k, v] of Object.entries(result.more.alternatives ?? {})) {
    line(`alternative ${k}`, `${v.spearman}, lead over the model ${v.lead_vs_model.lead} [${v.lead_vs_model.ci_low}, ${v.lead_vs_model.ci_high}]`);
  }
  for (const [k, v] of Object.entries(result.levels)) {
    const ci = result.ci95.levels[k as keyof typeof result.levels];
    line(`level ${k}`, `share ${v.share} [${ci.share.join(", ")}], next-day liq ${v.next_day_liq_pct_oi}% of OI [${ci.next_day_liq_pct_oi.join(", ")}]`);
  }
  for (const [m, v] of Object.entries(result.more.spearman_by_month)) line(`month ${m}`, `model ${v.model}, ${lead.baseline} ${v[lead.baseline as keyof typeof v]}`);
  line("runtime", `${seconds.toFixed(1)} s`);
  if (args.includes("--fit-latest")) {
    const latest = fitLatest(panel, trainMonths);
    process.stdout.write(`latest fit (${trainMonths} months, ${latest.rows} rows, ${latest.symbols} symbols): ${JSON.stringify(latest.model)}\n`);
  }
  process.stdout.write(`${JSON.stringify({ ...result, runtime_s: Math.round(seconds * 10) / 10 })}\n`);
} catch (err) {
  if (err instanceof PanelError || err instanceof Error) fail(err.message);
  throw err;
}
