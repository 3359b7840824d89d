// Leaderboard: completed runs of one dataset as rows, pass@k (or pass^k) with intervals for a few k
// as columns, sortable; the pass@k curves of the ticked runs overlaid on one chart. Every row is one
// run: runs with different sampling settings are never pooled, and runs over a subset of the dataset's
// problems are ranked in a table of their own. It opens on the dataset last chosen here in this project,
// else the one of the viewer's own latest run (the server's `default_dataset_id`).
import {
  api, boot, bracket, clear, coverage, eachLimited, errorText, h, num, pct, samplingText,
} from "./common.js";
import { curveChart, kGrid } from "./charts.js";

const KS = [1, 5, 10, 100];
const MAX_RUNS = 100;
const CHART_DEFAULT = 6;
const BAND_RESAMPLES = 2000; // the chart's bands, as on the run page (the table's brackets use the server's default)
const COLORS = ["#2f6fd0", "#d9822b", "#2e9d5b", "#b8336a", "#7b5ea7", "#3d405b", "#c9a227", "#1b998b"];

const data = boot();
const params = new URLSearchParams(location.search);
const el = (id) => document.getElementById(id);
const remembered = `passk.leaderboard.dataset.${data.project_id}`;
const readable = (id) => id && data.datasets.some((d) => d.id === id);
const storage = { get: (k) => { try { return localStorage.getItem(k); } catch { return null; } },
  set: (k, v) => { try { localStorage.setItem(k, v); } catch { /* private mode: not remembered */ } } };
const state = {
  datasetId: [params.get("dataset_id"), storage.get(remembered), data.default_dataset_id, data.datasets[0] && data.datasets[0].id]
    .find(readable) || "",
  metric: params.get("metric") === "pass_hat_k" ? "pass_hat_k" : "pass_at_k",
  temperature: params.get("temperature") || "",
  sort: { key: "k1", dir: -1 },
  rows: [],
  charted: new Set(),
};
el("lb-dataset").value = state.datasetId;
el("lb-metric").value = state.metric;

const isSubset = (run) => Boolean(run.coverage && run.coverage.subset);
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

function visibleRows(subset) {
  const rows = state.rows.filter((r) => isSubset(r.run) === subset && (!state.temperature || temperatureOf(r.run) === state.temperature));
  const { key, dir } = state.sort;
  return rows.slice().sort((a, b) => {
    const x = sortValue(a, key), y = sortValue(b, key);
    if (x === y) return 0;
    if (x === null || x === undefined || Number.isNaN(x)) return 1;
    if (y === null || y === undefined || Number.isNaN(y)) return -1;
    return (typeof x === "string" ? x.localeCompare(y) : x - y) * dir;
  });
}

// The scores come right after the run's name: on a phone pass@1 is on screen without scrolling sideways.
function header(id) {
  const name = state.metric === "pass_at_k" ? "pass@" : "pass^";
  const th = (key, label, cls) => h("th", { "data-sort": key, class: cls, tabindex: 0,
    "aria-sort": state.sort.key === key ? (state.sort.dir > 0 ? "ascending" : "descending") : "none",
    onclick: () => sortBy(key), onkeydown: (e) => { if (e.key === "Enter") sortBy(key); } }, label);
  clear(el(id),
    h("th", { class: "narrow-col" }, h("span", { class: "sr-only" }, "on chart")),
    th("name", "Run"),
    KS.map((k) => th(`k${k}`, `${name}${k}`, "num")),
    th("temperature", "Temp.", "num"), h("th", {}, "Sampling"), h("th", {}, "Problems"),
    h("th", { class: "num" }, "n"));
}

function sortBy(key) {
  const firstDir = key === "name" ? 1 : -1;
  state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: firstDir };
  render();
}

function rowOf(row) {
  const run = row.run;
  const box = h("input", { type: "checkbox", "aria-label": `Show ${run.model} on the chart`,
    onchange: (e) => { if (e.target.checked) state.charted.add(run.id); else state.charted.delete(run.id); renderChart(); } });
  box.checked = state.charted.has(run.id);
  return h("tr", { dataset: { runId: run.id } },
    h("td", { class: "narrow-col" }, box),
    h("td", { class: "run-cell" }, h("a", { href: `/runs/${run.id}` }, run.display_name || run.model),
      run.display_name ? h("div", { class: "muted tiny" }, run.model) : null,
      h("div", { class: "mono muted tiny" }, run.id.slice(0, 8))),
    KS.map((k) => {
      const m = row.byK.get(k);
      if (!m) return h("td", { class: "num muted", title: row.error || `k=${k} exceeds this run's samples per problem` }, "–");
      const interval = m[state.metric];
      return h("td", { class: "num score-cell", dataset: { k } },
        h("strong", { class: "estimate" }, pct(interval.estimate, 2)), h("div", {}, bracket(interval)));
    }),
    h("td", { class: "num mono" }, temperatureOf(run)),
    h("td", { class: "mono small sampling-cell" }, samplingText(run.sampling) || "–"),
    h("td", { class: "small" }, coverage(run)),
    h("td", { class: "num" }, row.curves ? num(row.curves.nMin) : "–"));
}

function render() {
  header("leaderboard-head");
  const full = visibleRows(false);
  const subsets = visibleRows(true);
  clear(el("leaderboard-body"), full.length ? full.map(rowOf) : h("tr", {}, h("td", { colspan: 6 + KS.length, class: "muted empty" },
    state.rows.length ? (subsets.length && !state.rows.some((r) => !isSubset(r.run)) ? "No completed run over all of this dataset's problems yet."
      : "No run at this temperature.") : "No completed run on this dataset yet.")));
  el("leaderboard-subsets").hidden = !state.rows.some((r) => isSubset(r.run));
  header("leaderboard-subset-head");
  clear(el("leaderboard-subset-body"), subsets.length ? subsets.map(rowOf)
    : h("tr", {}, h("td", { colspan: 6 + KS.length, class: "muted empty" }, "No run at this temperature.")));
}

// Legend names: the run's name and temperature, with its id where two would read the same.
function labels(rows) {
  const base = rows.map((r) => `${r.run.display_name || r.run.model} T=${temperatureOf(r.run)}${isSubset(r.run) ? " (subset)" : ""}`);
  return base.map((label, i) => (base.indexOf(label) !== base.lastIndexOf(label) ? `${label} · ${rows[i].run.id.slice(0, 8)}` : label));
}

// A ticked run's band: its interval at every k of the grid, fetched once (BAND_RESAMPLES resamples).
function bandOf(row) {
  if (!row.band) {
    row.band = api(`/v1/runs/${row.run.id}/metrics`, { params: { k: kGrid(row.curves.nMin).join(","), resamples: BAND_RESAMPLES } })
      .then((result) => result.metrics.map((m) => {
        const i = m.pass_at_k; // no bounds (every problem scored alike): the band pinches to the estimate
        return { k: m.k, est: i.estimate, lo: i.ci_low ?? i.estimate, hi: i.ci_high ?? i.estimate };
      }));
  }
  return row.band;
}

let drawing = 0;
async function renderChart() {
  const chosen = state.rows.filter((r) => state.charted.has(r.run.id) && r.curves);
  if (!chosen.length) {
    clear(el("leaderboard-chart"), h("p", { class: "muted" }, "Tick runs in the table to draw their curves."));
    return;
  }
  const turn = ++drawing;
  let bands;
  try {
    bands = await Promise.all(chosen.map(bandOf));
  } catch (error) {
    clear(el("leaderboard-chart"), h("p", { class: "error" }, errorText(error)));
    return;
  }
  if (turn !== drawing) return; // ticked again meanwhile
  const names = labels(chosen);
  curveChart(el("leaderboard-chart"), {
    kmax: Math.max(...chosen.map((r) => r.curves.nMin)),
    title: "pass@k of several runs",
    yLabel: "pass@k (mean over problems)",
    series: chosen.map((r, i) => ({ key: r.run.id, color: COLORS[i % COLORS.length], values: r.curves.at, label: names[i], band: bands[i] })),
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
  state.rows = list.items.map((run) => ({ run, byK: new Map(), curves: null, band: null, error: null }));
  state.charted = new Set(state.rows.filter((r) => !isSubset(r.run)).slice(0, CHART_DEFAULT).map((r) => r.run.id));
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
  // The best full runs by pass@1 on the chart (the table's first rows), not merely the latest.
  state.charted = new Set(visibleRows(false).filter((r) => r.curves).slice(0, CHART_DEFAULT).map((r) => r.run.id));
  render();
  renderChart();
}

el("lb-dataset").addEventListener("change", (e) => { state.datasetId = e.target.value; storage.set(remembered, state.datasetId); load(); });
el("lb-metric").addEventListener("change", (e) => { state.metric = e.target.value; syncUrl(); render(); });
el("lb-temperature").addEventListener("change", (e) => { state.temperature = e.target.value; syncUrl(); render(); });
load();
