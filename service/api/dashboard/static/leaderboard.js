// Leaderboard: completed runs of one dataset as rows, pass@k (or pass^k) with intervals for a few k
// as columns, sortable; the pass@k curves of the ticked runs overlaid on one chart. Every row is one
// run: runs with different sampling settings are never pooled.
import {
  api, boot, bracket, clear, coverage, eachLimited, errorText, h, num, pct, samplingText,
} from "./common.js";
import { curveChart } from "./charts.js";

const KS = [1, 5, 10, 100];
const MAX_RUNS = 100;
const CHART_DEFAULT = 6;
const COLORS = ["#2f6fd0", "#d9822b", "#2e9d5b", "#b8336a", "#7b5ea7", "#3d405b", "#c9a227", "#1b998b"];

const data = boot();
const params = new URLSearchParams(location.search);
const el = (id) => document.getElementById(id);
const state = {
  datasetId: params.get("dataset_id") || (data.datasets[0] && data.datasets[0].id) || "",
  metric: params.get("metric") === "pass_hat_k" ? "pass_hat_k" : "pass_at_k",
  temperature: params.get("temperature") || "",
  sort: { key: "k1", dir: -1 },
  rows: [],
  charted: new Set(),
};
el("lb-dataset").value = state.datasetId;
el("lb-metric").value = state.metric;

const temperatureOf = (run) => (run.sampling && run.sampling.temperature !== undefined ? String(run.sampling.temperature) : "–");

function syncUrl() {
  const q = new URLSearchParams();
  if (state.datasetId) q.set("dataset_id", state.datasetId);
  if (state.metric !== "pass_at_k") q.set("metric", state.metric);
  if (state.temperature) q.set("temperature", state.temperature);
  history.replaceState(null, "", `/leaderboard?${q}`);
}

function sortValue(row, key) {
  if (key === "name") return (row.run.display_name || row.run.model).toLowerCase();
  if (key === "temperature") return Number(row.run.sampling.temperature ?? NaN);
  const k = Number(key.slice(1));
  const m = row.byK.get(k);
  return m ? m[state.metric].estimate : null;
}

function visibleRows() {
  const rows = state.rows.filter((r) => !state.temperature || temperatureOf(r.run) === state.temperature);
  const { key, dir } = state.sort;
  return rows.slice().sort((a, b) => {
    const x = sortValue(a, key), y = sortValue(b, key);
    if (x === y) return 0;
    if (x === null || x === undefined || Number.isNaN(x)) return 1;
    if (y === null || y === undefined || Number.isNaN(y)) return -1;
    return (typeof x === "string" ? x.localeCompare(y) : x - y) * dir;
  });
}

function header() {
  const name = state.metric === "pass_at_k" ? "pass@" : "pass^";
  const th = (key, label, cls) => h("th", { "data-sort": key, class: cls, tabindex: 0,
    "aria-sort": state.sort.key === key ? (state.sort.dir > 0 ? "ascending" : "descending") : "none",
    onclick: () => sortBy(key), onkeydown: (e) => { if (e.key === "Enter") sortBy(key); } }, label);
  clear(el("leaderboard-head"),
    h("th", { class: "narrow-col" }, h("span", { class: "sr-only" }, "on chart")),
    th("name", "Run"), th("temperature", "Temp.", "num"), h("th", {}, "Sampling"), h("th", {}, "Problems"),
    h("th", { class: "num" }, "n"),
    KS.map((k) => th(`k${k}`, `${name}${k}`, "num")));
}

function sortBy(key) {
  const firstDir = key === "name" ? 1 : -1;
  state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: firstDir };
  render();
}

function render() {
  header();
  const rows = visibleRows();
  clear(el("leaderboard-body"), rows.length ? rows.map((row) => {
    const run = row.run;
    const box = h("input", { type: "checkbox", "aria-label": `Show ${run.model} on the chart`,
      onchange: (e) => { if (e.target.checked) state.charted.add(run.id); else state.charted.delete(run.id); renderChart(); } });
    box.checked = state.charted.has(run.id);
    return h("tr", { dataset: { runId: run.id } },
      h("td", { class: "narrow-col" }, box),
      h("td", {}, h("a", { href: `/runs/${run.id}` }, run.display_name || run.model),
        run.display_name ? h("div", { class: "muted tiny" }, run.model) : null,
        h("div", { class: "mono muted tiny" }, run.id.slice(0, 8))),
      h("td", { class: "num mono" }, temperatureOf(run)),
      h("td", { class: "mono small sampling-cell" }, samplingText(run.sampling) || "–"),
      h("td", { class: "small" }, coverage(run)),
      h("td", { class: "num" }, row.curves ? num(row.curves.nMin) : "–"),
      KS.map((k) => {
        const m = row.byK.get(k);
        if (!m) return h("td", { class: "num muted", title: row.error || `k=${k} exceeds this run's samples per problem` }, "–");
        const interval = m[state.metric];
        return h("td", { class: "num score-cell", dataset: { k } },
          h("strong", { class: "estimate" }, pct(interval.estimate, 2)), h("div", {}, bracket(interval)));
      }));
  }) : h("tr", {}, h("td", { colspan: 6 + KS.length, class: "muted empty" },
    state.rows.length ? "No run at this temperature." : "No completed run on this dataset yet.")));
}

function renderChart() {
  const chosen = state.rows.filter((r) => state.charted.has(r.run.id) && r.curves);
  if (!chosen.length) {
    clear(el("leaderboard-chart"), h("p", { class: "muted" }, "Tick runs in the table to draw their curves."));
    return;
  }
  const kmax = Math.max(...chosen.map((r) => r.curves.nMin));
  curveChart(el("leaderboard-chart"), {
    kmax,
    title: "pass@k of several runs",
    yLabel: "pass@k (mean over problems)",
    series: chosen.map((r, i) => ({
      key: r.run.id, color: COLORS[i % COLORS.length], values: r.curves.at,
      label: `${r.run.display_name || r.run.model} T=${temperatureOf(r.run)}`,
      // no bounds (null: every problem scored alike): the band pinches to the estimate there
      band: KS.filter((k) => r.byK.has(k)).map((k) => { const m = r.byK.get(k).pass_at_k; return { k, lo: m.ci_low ?? m.estimate, hi: m.ci_high ?? m.estimate }; }),
    })),
  });
}

function temperatures() {
  const select = el("lb-temperature");
  const values = [...new Set(state.rows.map((r) => temperatureOf(r.run)))].sort((a, b) => Number(a) - Number(b));
  clear(select, h("option", { value: "" }, "every temperature"), values.map((t) => h("option", { value: t }, `T = ${t}`)));
  select.value = values.includes(state.temperature) ? state.temperature : "";
}

async function load() {
  syncUrl();
  if (!state.datasetId) {
    clear(el("leaderboard-body"), h("tr", {}, h("td", { class: "muted empty" }, "No dataset yet.")));
    return;
  }
  let list;
  try {
    list = await api("/v1/runs", { params: { dataset_id: state.datasetId, status: "completed", limit: MAX_RUNS } });
  } catch (error) {
    clear(el("leaderboard-body"), h("tr", {}, h("td", { class: "error" }, errorText(error))));
    return;
  }
  state.rows = list.items.map((run) => ({ run, byK: new Map(), curves: null, error: null }));
  state.charted = new Set(state.rows.slice(0, CHART_DEFAULT).map((r) => r.run.id));
  temperatures();
  render();
  await eachLimited(state.rows, 4, async (row) => {
    try {
      const problems = await api(`/v1/runs/${row.run.id}/problems`, { params: { k: 1 } });
      const c = problems.curves; // computed by the server: pass@k and pass^k for k = 1..n_min
      row.curves = c ? { at: c.pass_at_k, hat: c.pass_hat_k, nMin: c.n_min, problems: c.problems } : null;
      const ks = KS.filter((k) => row.curves && k <= row.curves.nMin);
      if (ks.length) {
        const metrics = await api(`/v1/runs/${row.run.id}/metrics`, { params: { k: ks.join(",") } });
        for (const m of metrics.metrics) row.byK.set(m.k, m);
        if (metrics.metrics[0]) el("lb-interval").textContent = metrics.metrics[0].pass_at_k.label;
      }
    } catch (error) {
      row.error = errorText(error);
    }
  });
  render();
  renderChart();
}

el("lb-dataset").addEventListener("change", (e) => { state.datasetId = e.target.value; load(); });
el("lb-metric").addEventListener("change", (e) => { state.metric = e.target.value; syncUrl(); render(); });
el("lb-temperature").addEventListener("change", (e) => { state.temperature = e.target.value; syncUrl(); render(); });
load();
