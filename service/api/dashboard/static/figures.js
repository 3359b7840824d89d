// Run page panels for what the samples carried besides their verdicts: cost, latency, tokens and
// calibration (GET /v1/runs/{id}/metrics; bootstrap intervals on the same resampled problems as pass@k,
// latency percentiles with Woodruff's interval).
// Shown only where the data exist; loaded once the run has finished problems.
import { ApiError, api, boot, clear, h, num, pct } from "./common.js";
import { curveChart, s, unitSquare } from "./charts.js";
import { figureText, fmt, ms } from "./figures-format.js";

const { run_id: runId } = boot();
const el = (id) => document.getElementById(id);
const RESAMPLES = 2000;
const RETRY_MS = 10_000;


function stat(id, label, f, show, sub) {
  return h("div", { class: "stat", id },
    h("div", { class: "label" }, label),
    h("div", { class: "value" }, f && f.estimate !== null ? show(f.estimate) : "–"),
    h("div", { class: "sub" }, f ? `[${f.ci_low === null ? "–" : show(f.ci_low)}, ${f.ci_high === null ? "∞" : show(f.ci_high)}]` : "", sub ? h("br") : null, sub || null));
}

/** Reliability diagram: accuracy against mean confidence per bin, the diagonal is calibrated. */
export function reliabilityDiagram(container, bins) {
  const { svg, x, y } = unitSquare({ cls: "reliability", ariaLabel: "reliability diagram",
    xLabel: "stated confidence", yLabel: "share that passed" });
  const filled = bins.filter((b) => b.count > 0);
  const most = Math.max(1, ...filled.map((b) => b.count));
  const bars = s("g", { class: "bins" });
  for (const b of bins) {
    // the bin's range as a faint bar of its accuracy, so gaps to the diagonal read as bars
    if (!b.count) continue;
    bars.append(s("rect", { x: x(b.low).toFixed(1), width: Math.max(1, x(b.high) - x(b.low) - 1).toFixed(1), y: y(b.accuracy).toFixed(1),
      height: (y(0) - y(b.accuracy)).toFixed(1), class: "bin-bar" }));
  }
  svg.append(bars);
  svg.append(s("polyline", { points: filled.map((b) => `${x(b.mean_confidence).toFixed(1)},${y(b.accuracy).toFixed(1)}`).join(" "), class: "reliability-line" }));
  const dots = s("g", { class: "dots" });
  for (const b of filled) {
    dots.append(s("circle", { cx: x(b.mean_confidence).toFixed(1), cy: y(b.accuracy).toFixed(1), r: (2.5 + 4 * Math.sqrt(b.count / most)).toFixed(1), class: "bin-dot" },
      s("title", {}, `${num(b.count)} samples stated ${(100 * b.mean_confidence).toFixed(1)}% on average; ${(100 * b.accuracy).toFixed(1)}% passed`)));
  }
  svg.append(dots);
  clear(container, svg);
}

function render(m) {
  const panel = el("figures-panel");
  const stats = [];
  if (m.cost) {
    const c = m.cost;
    const cur = c.currency ? ` (${c.currency})` : "";
    stats.push(stat("stat-cost-per-success", `cost per success${cur}`, c.per_success, fmt, `${num(c.passes)} passes, total ${fmt(c.total)}`));
    stats.push(stat("stat-cost-per-sample", `cost per sample${cur}`, c.mean_per_sample, fmt, `${num(c.samples)} samples`));
  }
  if (m.latency) {
    stats.push(stat("stat-latency-p50", "latency p50", m.latency.p50_ms, ms));
    stats.push(stat("stat-latency-p95", "latency p95", m.latency.p95_ms, ms, `p99 ${figureText(m.latency.p99_ms, ms)}`));
  }
  if (m.tokens) stats.push(stat("stat-tokens", "output tokens / sample", m.tokens.mean_output, (x) => fmt(x, 3), `input ${figureText(m.tokens.mean_input, (x) => fmt(x, 3))}`));
  if (m.steps) stats.push(stat("stat-steps", "steps / sample", m.steps.mean, (x) => fmt(x, 3), `per success ${figureText(m.steps.per_success, (x) => fmt(x, 3))}`));
  if (m.calibration) stats.push(stat("stat-brier", "Brier score", m.calibration.brier, (x) => fmt(x, 3), `ECE ${fmt(m.calibration.ece_equal_width, 3)} (biased)`));
  if (!stats.length) return;
  const level = Math.round(100 * m.confidence);
  const how = m.latency ? `${level}% bootstrap over problems, the same resamples as pass@k; latency percentiles: Woodruff's interval over problems`
    : `${level}% bootstrap over problems, the same resamples as pass@k`;
  const children = [h("h2", {}, "Cost, latency and calibration ", h("span", { class: "muted small", id: "figures-caption" }, `intervals: ${how}`)),
    h("section", { class: "stats" }, stats)];
  const notes = [m.latency && m.latency.p95_ms.note ? `latency p95: ${m.latency.p95_ms.note}` : null,
    m.latency && m.latency.p99_ms.note ? `latency p99: ${m.latency.p99_ms.note}` : null].filter(Boolean);
  if (notes.length) children.push(h("p", { class: "note", id: "figures-notes" }, notes.join(" · ")));
  if (m.calibration) {
    const cal = m.calibration;
    const d = cal.decomposition;
    const diagram = h("div", { id: "reliability-diagram", class: "chart" });
    const table = h("table", { class: "data", id: "calibration-table" },
      h("tbody", {},
        h("tr", {}, h("th", {}, "Brier"), h("td", { class: "num" }, figureText(cal.brier, (x) => fmt(x, 3)))),
        h("tr", {}, h("th", {}, "reliability (lower is better)"), h("td", { class: "num", id: "cal-reliability" }, fmt(d.reliability, 3))),
        h("tr", {}, h("th", {}, "resolution (higher is better)"), h("td", { class: "num" }, fmt(d.resolution, 3))),
        h("tr", {}, h("th", {}, "uncertainty (pass rate)"), h("td", { class: "num" }, fmt(d.uncertainty, 3))),
        h("tr", {}, h("th", {}, "within-bin terms"), h("td", { class: "num" }, fmt(Math.abs(d.within_bin_variance - d.within_bin_covariance) < 1e-12 ? 0 : d.within_bin_variance - d.within_bin_covariance, 3))),
        h("tr", {}, h("th", {}, `ECE, ${cal.bins} equal-width bins (biased up)`), h("td", { class: "num", id: "cal-ece" }, cal.ece ? figureText(cal.ece.interval, (x) => fmt(x, 3)) : fmt(cal.ece_equal_width, 3))),
        cal.ece ? h("tr", {}, h("th", {}, "ECE of a perfectly calibrated model, same N"), h("td", { class: "num", id: "cal-ece-calibrated" }, `${fmt(cal.ece.calibrated.expected, 3)} (95% up to ${fmt(cal.ece.calibrated.high, 3)})`)) : null,
        h("tr", {}, h("th", {}, `ECE, ${cal.bins} equal-count bins (biased up)`), h("td", { class: "num" }, fmt(cal.ece_equal_count, 3))),
        h("tr", {}, h("th", {}, "samples with a confidence"), h("td", { class: "num" }, num(cal.samples)))));
    children.push(h("div", { class: "grid-2" },
      h("div", {}, h("h3", {}, "Reliability diagram"), diagram),
      h("div", {}, h("h3", {}, "Calibration"), table,
        h("p", { class: "muted small" }, "Brier = reliability − resolution + uncertainty (+ within-bin terms when a bin holds different confidences)."),
        cal.ece ? h("p", { class: "muted small", id: "cal-ece-label" }, `ECE: ${cal.ece.label}.`) : null)));
    reliabilityDiagram(diagram, cal.reliability_diagram);
  }
  clear(panel, children);
  panel.hidden = false;
}

// ---------- temperature sweep: this model's completed runs on this dataset at other temperatures ----------

const SWEEP_COLORS = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d"];
const MAX_SWEEP_RUNS = 8;

export function sweepKs(nMin) {
  if (nMin <= 32) return Array.from({ length: nMin }, (_, i) => i + 1);
  const ks = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  for (let i = 1; i <= 15; i++) ks.add(Math.round(Math.exp(Math.log(10) + (i / 15) * Math.log(nMin / 10))));
  ks.add(nMin);
  return [...ks].filter((k) => k <= nMin).sort((a, b) => a - b);
}

/** Values at every k = 1..kmax, linear between the computed grid points (the dots are the exact ones). */
function filled(points, kmax) {
  const out = [];
  for (let k = 1; k <= kmax; k++) {
    const after = points.findIndex((p) => p.k >= k);
    const b = points[after];
    if (b.k === k || after === 0) { out.push(b.v); continue; }
    const a = points[after - 1];
    out.push(a.v + ((b.v - a.v) * (k - a.k)) / (b.k - a.k));
  }
  return out;
}

async function loadSweep(m) {
  const run = await api(`/v1/runs/${runId}`);
  const list = await api("/v1/runs", { params: { dataset_id: run.dataset_id, model: run.model, limit: 100 } });
  const done = list.items.filter((r) => r.status === "completed" && typeof (r.sampling || {}).temperature === "number");
  const others = done.filter((r) => r.id !== runId).slice(0, MAX_SWEEP_RUNS - 1);
  if (!done.some((r) => r.id === runId) || !others.length) return;
  if (new Set([run, ...others].map((r) => r.sampling.temperature)).size < 2) return;
  const ids = [runId, ...others.map((r) => r.id)].join(",");
  let sweep;
  try {
    sweep = await api("/v1/sweeps", { params: { runs: ids, k: sweepKs(m.n_min || 1).join(","), resamples: RESAMPLES } });
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422) return;
    sweep = await api("/v1/sweeps", { params: { runs: ids, k: 1, resamples: RESAMPLES } }); // another run has fewer samples
  }
  const kmax = Math.max(...sweep.ks);
  const series = sweep.runs.map((r, i) => ({
    key: r.run_id,
    label: `T=${r.temperature}${r.run_id === runId ? " (this run)" : ""}`,
    color: SWEEP_COLORS[i % SWEEP_COLORS.length],
    values: filled(r.curve.map((p) => ({ k: p.k, v: p.pass_at_k.estimate })), kmax),
    band: r.curve.map((p) => ({ k: p.k, est: p.pass_at_k.estimate, lo: p.pass_at_k.ci_low ?? p.pass_at_k.estimate, hi: p.pass_at_k.ci_high ?? p.pass_at_k.estimate })),
  }));
  const chart = h("div", { id: "sweep-chart", class: "chart chart-tall" });
  const byRun = new Map(sweep.runs.map((r, i) => [r.run_id, i]));
  const shown = sweep.best.filter((b) => b.k === 1 || b.k === kmax || [5, 10, 100].includes(b.k));
  const table = h("table", { class: "data", id: "sweep-best" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, "k"), h("th", {}, "best temperature"), h("th", { class: "num" }, "chance it is best"),
      h("th", { class: "num" }, "margin over runner-up"), h("th", { class: "num" }, "envelope (best pass@k)"))),
    h("tbody", {}, shown.map((b) => h("tr", { "data-k": b.k },
      h("td", { class: "num" }, b.k),
      h("td", {}, b.tie ? `tie: ${b.tied_run_ids.map((id) => `T=${sweep.runs[byRun.get(id)].temperature}`).join(", ")}` : `T=${b.best_temperature}`),
      h("td", { class: "num" }, b.tie ? b.tied_run_ids.map((id) => pct(b.probability_best[byRun.get(id)])).join(" / ") : pct(b.probability_best[byRun.get(b.best_run_id)])),
      h("td", { class: "num mono" }, `${pct(b.margin)} [${pct(b.margin_ci_low)}, ${pct(b.margin_ci_high)}]`),
      h("td", { class: "num mono" }, b.envelope_ci_low === null ? pct(b.envelope) : `${pct(b.envelope)} [${pct(b.envelope_ci_low)}, ${pct(b.envelope_ci_high)}]`)))));
  const panel = el("sweep-panel");
  clear(panel,
    h("h2", {}, `Temperature sweep: ${run.model} `, h("span", { class: "muted small" }, `${sweep.runs.length} runs on ${num(sweep.problems)} shared problems; each temperature is its own curve, never pooled`)),
    chart, table,
    h("p", { class: "muted small" }, "The envelope's interval holds for all temperatures at once (the largest of their lower bounds at level 1 − α/runs to the largest upper bound), so it covers the best temperature's pass@k whichever that is."),
    sweep.warnings.length ? h("p", { class: "note" }, sweep.warnings.join(" · ")) : null);
  panel.hidden = false;
  curveChart(chart, { kmax, series, title: "pass@k by temperature" });
}

async function load() {
  let m;
  try {
    m = await api(`/v1/runs/${runId}/metrics`, { params: { k: 1, resamples: RESAMPLES } });
  } catch (error) {
    m = null;
  }
  if (m && m.problems > 0) render(m);
  if (m && !m.partial && m.status === "completed") loadSweep(m).catch((error) => console.warn(error));
  if (!m || m.partial || !["completed", "failed", "cancelled"].includes(m.status)) setTimeout(load, RETRY_MS);
}

load();
