// Compare page, "ship or not": the release rule's verdict on top, then quality, cost per success,
// p95 latency and calibration side by side with their intervals, then the minimum detectable
// difference. One GET /v1/compare?rule=... (k = 1) answers all of it.
import { api, boot, clear, errorText, h, pct } from "./common.js";
import { figureText, fmt, ms } from "./figures-format.js";

const data = boot();
const el = (id) => document.getElementById(id);
const params = new URLSearchParams(window.location.search);
const ruleName = params.get("rule") || "";
const VERDICT_TEXT = { pass: "PASS", fail: "FAIL", not_enough_data: "NOT ENOUGH DATA" };

async function fillRules() {
  const select = el("compare-rule");
  try {
    const { items } = await api("/v1/release-rules");
    select.append(...items.map((r) => h("option", { value: r.name }, r.name)));
  } catch (error) { /* the verdict panel says why */ }
  select.value = ruleName;
}

const pp = (x) => (x === null || x === undefined ? "–" : `${x >= 0 ? "+" : "−"}${Math.abs(100 * x).toFixed(1)} pp`);
const rel = (x) => (x === null || x === undefined ? "–" : `${x >= 0 ? "+" : "−"}${Math.abs(100 * x).toFixed(1)}%`);

function intervalText(f, show) {
  if (!f || f.estimate === null || f.estimate === undefined) return "–";
  return `${show(f.estimate)} [${f.ci_low === null ? "–" : show(f.ci_low)}, ${f.ci_high === null ? "∞" : show(f.ci_high)}]`;
}

function verdictBlock(release) {
  const rule = release.rule;
  const when = release.rule_written_before_candidate ? "written before the candidate run" : "written AFTER the candidate run";
  return h("section", { class: `card verdict verdict-${release.verdict}`, id: "release-verdict" },
    h("div", { class: "verdict-head" },
      h("span", { class: `badge verdict-badge verdict-${release.verdict}`, id: "release-verdict-badge" }, VERDICT_TEXT[release.verdict]),
      h("span", {}, " rule ", h("strong", {}, rule.name), h("span", { class: "muted small", title: rule.created_at }, ` · stored ${rule.created_at.slice(0, 19).replace("T", " ")} UTC, ${when}`))),
    h("table", { class: "data", id: "release-clauses" },
      h("thead", {}, h("tr", {}, h("th", {}, "clause"), h("th", {}, "figure"), h("th", { class: "num" }, "estimate [interval]"), h("th", {}, "verdict"))),
      h("tbody", {}, release.clauses.map((c) => h("tr", { class: `clause-${c.verdict}` },
        h("td", {}, c.text),
        h("td", { class: "muted small" }, c.figure),
        h("td", { class: "num mono" }, `${fmt(c.estimate)} [${c.ci_low === null ? "–" : fmt(c.ci_low)}, ${c.ci_high === null ? "∞" : fmt(c.ci_high)}]`),
        h("td", {}, h("span", { class: `badge verdict-badge verdict-${c.verdict}` }, VERDICT_TEXT[c.verdict]), c.reason ? h("div", { class: "muted small" }, c.reason) : null))))),
    release.warnings.length ? h("p", { class: "note" }, release.warnings.join(" · ")) : null);
}

function sideBySide(report) {
  const q = report.metrics.find((m) => m.k === 1) || report.metrics[0];
  const rows = [[`pass@${q.k}`, q.base, q.candidate, q.difference, null, (x) => pct(x), pp]];
  const f = report.figures || {};
  const cur = report.currency ? ` (${report.currency})` : "";
  if (f.cost_per_success) rows.push([`cost per success${cur}`, f.cost_per_success.base, f.cost_per_success.candidate, f.cost_per_success.difference, f.cost_per_success.relative_difference, fmt, fmt]);
  if (f.latency_p95_ms) rows.push(["p95 latency", f.latency_p95_ms.base, f.latency_p95_ms.candidate, f.latency_p95_ms.difference, f.latency_p95_ms.relative_difference, ms, (x) => `${x >= 0 ? "+" : "−"}${ms(Math.abs(x))}`]);
  if (f.brier) rows.push(["Brier score (calibration)", f.brier.base, f.brier.candidate, f.brier.difference, f.brier.relative_difference, (x) => fmt(x, 3), (x) => fmt(x, 3)]);
  return h("table", { class: "data", id: "ship-figures" },
    h("thead", {}, h("tr", {}, h("th", {}, "figure"), h("th", { class: "num" }, "base"), h("th", { class: "num" }, "candidate"),
      h("th", { class: "num" }, "candidate − base"), h("th", { class: "num" }, "relative"))),
    h("tbody", {}, rows.map(([label, b, c, d, r, show, showDiff]) => h("tr", {},
      h("th", {}, label), h("td", { class: "num mono" }, intervalText(b, show)), h("td", { class: "num mono" }, intervalText(c, show)),
      h("td", { class: "num mono" }, intervalText(d, showDiff)), h("td", { class: "num mono" }, r ? intervalText(r, rel) : "")))));
}

function detectability(report) {
  const q = report.metrics.find((m) => m.k === 1) || report.metrics[0];
  const d = q.detectability;
  const more = d.more_problems_needed === null ? "no difference was observed"
    : d.detectable ? "the observed difference is at least that large"
    : `planning for the observed ${pp(d.observed_difference)}: about ${d.problems_needed.toLocaleString("en-US")} problems (${d.more_problems_needed.toLocaleString("en-US")} more)`;
  return h("p", { id: "ship-mdd", title: d.label },
    h("span", { class: "muted small" }, "Planning figure, not a verdict (the interval and p-value above are): "),
    `the smallest difference of pass@${q.k} that ${report.problems} problems detect with ${Math.round(100 * d.power)}% power (${Math.round(100 * d.confidence)}% confidence, discordance ${fmt(d.discordance, 3)}) is `,
    h("strong", {}, `${(100 * d.minimum_detectable_difference).toFixed(1)} pp`), `; ${more}.`,
    report.incremental_cost_per_success !== null && report.incremental_cost_per_success !== undefined && d.observed_difference > 0
      ? ` Each extra success costs ${fmt(report.incremental_cost_per_success, 3)}${report.currency ? " " + report.currency : ""}.` : "");
}

async function load() {
  const panel = el("ship-panel");
  if (!data.base || !data.candidate) return;
  try {
    const report = await api("/v1/compare", { params: { base: data.base, candidate: data.candidate, k: 1, items_limit: 0, resamples: 2000, rule: ruleName || undefined, intersection: data.intersection ? "true" : undefined } });
    clear(panel,
      report.release ? verdictBlock(report.release) : h("p", { class: "muted small" }, "Choose a release rule above for a ship-or-not verdict."),
      h("section", { class: "card" }, h("h2", {}, "Ship or not ", h("span", { class: "muted small" }, "paired over the same problems")), sideBySide(report), detectability(report)));
  } catch (error) {
    clear(panel, h("p", { class: "note", id: "ship-error" }, `Release verdict unavailable: ${errorText(error)}`));
  }
}

fillRules();
load();
