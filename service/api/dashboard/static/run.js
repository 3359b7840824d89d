// Run page: progress (live while the run is queued or running), pass@k / pass^k curves with
// bootstrap bands, verdict breakdown, per-problem pass-rate histogram and a sortable problem table.
import {
  FINISHED_STATUSES, VERDICTS, VERDICT_COLORS, api, boot, bracket, clear, coverage, downloadButton, elapsed, errorText, flagBadge,
  h, num, pct, problemFinished, problemPath, renderPager, renderProgress, statusBadge, toCsv, verdictBadge, when,
} from "./common.js";
import { barChart, curveChart, kGrid, stackedBar } from "./charts.js";

const POLL_MS = 1500;
const REFRESH_EVERY = 5; // while running, re-read per-problem results every 5th poll (~7.5 s)
const PAGE_SIZE = 50;
// How the curves get their k grid: the server's curves give the estimates at every k = 1..n_min,
// bootstrap intervals come from the server on a grid only (charts.js kGrid: every k up to 10, then ~15
// log-spaced k up to n_min, <= 25 values, under the API's 32). Once the band arrives, each curve is
// drawn through the grid points only, with the band's own estimates, so it never leaves its band. The figures (pass@1, pass@n, pass^n, downloads) use the server's default interval (no
// options), the bracket the CLI, the runs list and `passk report` show. The band uses fewer resamples
// (25 k at 10,000 resamples on 1,000 problems take seconds) and its caption says so.
const BAND_RESAMPLES = 2000;

const { run_id: runId, problem_count: problemCount, flags: flagMeanings = {} } = boot();
const HACK_LINKS = 12; // flagged samples linked per flag at first ("more…" pages on)
const el = (id) => document.getElementById(id);

const state = {
  run: null,
  rows: [], // per-problem rows for the table
  nMin: 0,
  curves: null, // {at, hat} arrays over k
  metrics: null, // default interval at k = 1 and n_min: the figures
  band: null, // the k grid at BAND_RESAMPLES: the curve's band
  tableK: null,
  sort: { key: "index", dir: 1 },
  search: "",
  filter: "all",
  page: 0,
  polls: 0,
  lastDone: -1,
};

// ---------- run header, progress, verdicts ----------

function renderLabels(run) {
  el("run-name").textContent = run.display_name || run.model;
  clear(el("run-labels"),
    run.display_name ? h("span", { class: "muted" }, `model ${run.model} · `) : null,
    (run.tags || []).map((t) => h("span", { class: "tag" }, t)),
    run.archived ? h("span", { class: "badge tiny" }, "archived") : null,
    run.note ? h("span", { class: "muted run-note" }, ` ${run.note}`) : null);
}

function fillEditForm(run) {
  el("edit-name").value = run.display_name || "";
  el("edit-tags").value = (run.tags || []).join(", ");
  el("edit-note").value = run.note || "";
  el("edit-archived").checked = !!run.archived;
}

el("run-edit").addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = {
    display_name: el("edit-name").value.trim() || null,
    tags: el("edit-tags").value.split(",").map((t) => t.trim()).filter(Boolean),
    note: el("edit-note").value.trim() || null,
    archived: el("edit-archived").checked,
  };
  el("edit-status").textContent = "saving…";
  try {
    const run = await api(`/v1/runs/${runId}`, { method: "PATCH", body });
    state.run = { ...state.run, ...run };
    renderLabels(run);
    fillEditForm(run);
    el("edit-status").textContent = "saved";
  } catch (error) {
    el("edit-status").textContent = errorText(error);
  }
});

// ---------- downloads (built in the page from what it already fetched) ----------

const PROBLEM_COLUMNS = ["problem_id", "n", "c", "pass_at_1", "pass_at_k", "k", "distinct_programs", "total", "pending",
  "passed", "failed", "error", "timeout", "memory", "crashed", "compile_error", "sandbox_error"];
const METRIC_COLUMNS = ["k", "metric", "estimate", "ci_low", "ci_high", "interval", "standard_error", "method_used",
  "fallback_reason", "confidence", "resamples", "problems", "dataset_problems", "subset", "effective_problems", "warning"];
const fileBase = () => `passk-${runId.slice(0, 8)}`;

function problemRecords() {
  return state.rows.map((r) => ({
    problem_id: r.problem_id, n: r.n, c: r.c, pass_at_1: r.p1, pass_at_k: passAtOf(r, state.tableK), k: state.tableK,
    distinct_programs: r.distinct, total: r.total, pending: r.pending, ...r.by_verdict,
  }));
}

/** Metrics over the k grid with the default interval, fetched when a download asks for them. */
const downloadMetrics = () => api(`/v1/runs/${runId}/metrics`, { params: { k: (state.nMin ? kGrid(state.nMin) : [1]).join(",") } });

function metricRecords(m) {
  if (!m) return [];
  const cover = m.coverage || {};
  return m.metrics.flatMap((x) => ["pass_at_k", "pass_hat_k"].map((name) => ({
    k: x.k, metric: name, estimate: x[name].estimate, ci_low: x[name].ci_low, ci_high: x[name].ci_high,
    interval: x[name].label, standard_error: x[name].standard_error, method_used: x[name].method_used,
    fallback_reason: x[name].fallback_reason, confidence: x[name].confidence, resamples: x[name].resamples,
    problems: m.problems, dataset_problems: cover.dataset_problems, subset: cover.subset,
    effective_problems: x[name].effective_problems, warning: x[name].warning,
  })));
}

clear(el("downloads"),
  h("span", { class: "muted small" }, "Download:"),
  downloadButton("problems CSV", () => ({ name: `${fileBase()}-problems.csv`, type: "text/csv", text: toCsv(problemRecords(), PROBLEM_COLUMNS) }), { id: "dl-problems-csv" }),
  downloadButton("problems JSON", () => ({ name: `${fileBase()}-problems.json`, type: "application/json", text: JSON.stringify({ run_id: runId, problems: problemRecords() }, null, 2) }), { id: "dl-problems-json" }),
  downloadButton("metrics CSV", async () => ({ name: `${fileBase()}-metrics.csv`, type: "text/csv", text: toCsv(metricRecords(await downloadMetrics()), METRIC_COLUMNS) }), { id: "dl-metrics-csv" }),
  downloadButton("metrics JSON", async () => ({ name: `${fileBase()}-metrics.json`, type: "application/json", text: JSON.stringify(await downloadMetrics(), null, 2) }), { id: "dl-metrics-json" }));

// ---------- reward hacks: shown first, whenever a sample was flagged ----------

const hacks = { key: "", generation: 0 };

function renderHacks(counts) {
  const section = el("reward-hacks");
  const total = counts ? counts.samples : 0;
  section.hidden = !total;
  if (!total) return;
  const key = JSON.stringify(counts);
  if (key === hacks.key) return; // unchanged since the last poll: keep the lists (and any "more…" opened)
  hacks.key = key;
  const generation = ++hacks.generation;
  clear(el("hacks-lead"),
    h("strong", { id: "hacks-total" }, num(total)), ` sample${total === 1 ? "" : "s"} did what only a forger does`,
    counts.passed ? [" · ", h("strong", { class: "hacks-passed" }, num(counts.passed)), " of them passed anyway (their verdicts count in the figures)"] : null,
    " · ", h("a", { href: `/v1/runs/${runId}/samples?flagged=true`, class: "small" }, "all flagged samples (JSON)"));
  const flagged = Object.entries(counts.by_flag || {}).filter(([, n]) => n);
  clear(el("hacks-list"), flagged.map(([name, n]) =>
    h("li", { dataset: { flag: name } },
      h("strong", { class: "hack-count" }, num(n)), " ", flagBadge(name, flagMeanings), " ",
      h("span", { class: "hack-what" }, flagMeanings[name] || ""),
      h("div", { class: "hack-samples" }))));
  for (const [name] of flagged) loadFlagged(name, null, generation).catch(console.warn);
}

/** Links to a flag's samples (each opens its problem page with the sample selected), a page at a time. */
async function loadFlagged(name, cursor, generation) {
  const page = await api(`/v1/runs/${runId}/samples`, { params: { flag: name, limit: HACK_LINKS, cursor } });
  const box = generation === hacks.generation && el("hacks-list").querySelector(`li[data-flag="${name}"] .hack-samples`);
  if (!box) return; // the counts moved on meanwhile: a newer list is on its way
  box.querySelector(".more")?.remove();
  box.append(...page.items.map((sample) =>
    h("a", { class: "hack-sample", href: `${problemPath(runId, sample.problem_id)}?sample=${sample.id}`, dataset: { sampleId: sample.id } },
      h("span", { class: "mono" }, `${sample.problem_id} #${sample.index}`), " ", verdictBadge(sample.verdict, sample.state))));
  if (page.next_cursor) {
    box.append(h("button", { type: "button", class: "link more", onclick: () => loadFlagged(name, page.next_cursor, generation).catch(console.warn) }, "more…"));
  }
}

function renderRun(run) {
  const first = state.run === null;
  state.run = run;
  if (first) { renderLabels(run); fillEditForm(run); }
  statusBadge(el("run-status"), run.status);
  const s = run.sampling || {};
  const order = ["temperature", "top_p", "max_tokens", "seed"];
  const rank = (key) => (order.includes(key) ? order.indexOf(key) : order.length);
  const parts = Object.entries(s).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
  const timing = run.finished_at
    ? `finished ${when(run.finished_at)} after ${elapsed(run.started_at || run.created_at, run.finished_at)}`
    : run.started_at ? `running for ${elapsed(run.started_at)}` : `queued ${when(run.created_at)}`;
  clear(el("run-meta"),
    h("span", { class: "mono" }, parts.join(" · ") || "no sampling parameters"), " · ",
    `limits ${run.time_limit_s} s, ${num(run.memory_mb)} MB`, run.cache ? " · cache on" : " · cache off", " · ",
    h("span", { title: run.created_at }, timing));
  const p = run.progress;
  renderHacks(p.reward_hacks);
  renderProgress(el("progress-bar"), p);
  const share = p.total ? (100 * p.done) / p.total : 0;
  el("progress-text").textContent = `${num(p.done)} / ${num(p.total)} samples (${share.toFixed(share < 10 && share > 0 ? 1 : 0)}%) · ${num(p.passed)} passed`;
  el("progress-text").dataset.done = p.done;
  const verdictParts = VERDICTS.map((v) => ({ key: v, label: v.replace("_", " "), count: p.by_verdict[v] || 0, color: VERDICT_COLORS[v] }));
  const pending = (p.by_state.queued || 0) + (p.by_state.leased || 0);
  if (pending) verdictParts.push({ key: "pending", label: "not run yet", count: pending, color: VERDICT_COLORS.queued });
  if (p.by_state.cancelled) verdictParts.push({ key: "cancelled", label: "cancelled", count: p.by_state.cancelled, color: VERDICT_COLORS.cancelled });
  stackedBar(el("verdict-chart"), verdictParts, p.total);
}

// ---------- per-problem data, curves, histogram ----------

function histogramBins(rows) {
  const labels = ["0%", "0–10", "10–20", "20–30", "30–40", "40–50", "50–60", "60–70", "70–80", "80–90", "90–100", "100%"];
  const counts = new Array(12).fill(0);
  for (const r of rows) {
    if (!r.finished || !r.n) continue;
    if (r.c === 0) counts[0]++;
    else if (r.c === r.n) counts[11]++;
    else counts[Math.min(10, Math.floor((10 * r.c) / r.n) + 1)]++;
  }
  return labels.map((label, i) => ({
    label, count: counts[i],
    title: i === 0 ? "never passed" : i === 11 ? "always passed" : `pass rate in (${label.replace("–", "%, ")}%)`,
    color: `hsl(${Math.round((i / 11) * 130)}, 55%, 48%)`,
  }));
}

/** The server's curves (pass@k and pass^k for k = 1..n_min over finished problems) in the chart's shape. */
function curvesOf(curves) {
  return curves ? { at: curves.pass_at_k, hat: curves.pass_hat_k, nMin: curves.n_min, problems: curves.problems } : null;
}

// no bounds (every problem scored alike): the band pinches to the estimate there
const bandPoint = (k, interval) => ({ k, est: interval.estimate, lo: interval.ci_low ?? interval.estimate, hi: interval.ci_high ?? interval.estimate });

function renderCurves() {
  const curves = state.curves;
  if (!curves) {
    clear(el("curve-chart"), h("p", { class: "muted" }, "Curves appear once all samples of at least one problem have finished."));
    return;
  }
  const bands = { at: [], hat: [] };
  // The band's grid once it arrived (the figures' k are the whole grid when n_min <= 2); until then the
  // curves alone, at every k. Each curve is drawn through its band's points only (charts.js drawnPoints).
  const source = state.band || (state.metrics && kGrid(curves.nMin).length <= 2 ? state.metrics : null);
  for (const m of (source && source.metrics) || []) {
    if (m.k > curves.nMin) continue;
    bands.at.push(bandPoint(m.k, m.pass_at_k));
    bands.hat.push(bandPoint(m.k, m.pass_hat_k));
  }
  const first = source && source.metrics[0] ? source.metrics[0].pass_at_k : null;
  const method = first ? (first.method_used || first.method || "bootstrap").replace("bca", "BCa bootstrap").replace("percentile", "percentile bootstrap") : "bootstrap";
  el("curve-caption").textContent = `k = 1 … ${curves.nMin} over ${num(curves.problems)} problems; band: ${first && first.label && first.method_used !== "none" ? first.label : `${Math.round(100 * (first ? first.confidence : 0.95))} % ${method}`} interval`;
  curveChart(el("curve-chart"), {
    kmax: curves.nMin,
    title: "pass@k and pass^k over k",
    series: [
      { key: "pass_at_k", label: "pass@k", color: "#2f6fd0", values: curves.at, band: bands.at },
      { key: "pass_hat_k", label: "pass^k", color: "#d9822b", values: curves.hat, band: bands.hat },
    ],
  });
}

function renderStats() {
  const m = state.metrics;
  const byK = new Map(((m && m.metrics) || []).map((x) => [x.k, x]));
  const first = byK.get(1);
  const last = byK.get(state.nMin);
  el("stat-pass1").textContent = first ? pct(first.pass_at_k.estimate, 2) : "–";
  clear(el("stat-pass1-ci"), first ? bracket(first.pass_at_k) : "");
  el("stat-passn-label").textContent = `pass@${state.nMin || "n"}`;
  el("stat-hatn-label").textContent = `pass^${state.nMin || "n"}`;
  el("stat-passn").textContent = last ? pct(last.pass_at_k.estimate, 2) : "–";
  clear(el("stat-passn-ci"), last ? bracket(last.pass_at_k) : "");
  el("stat-hatn").textContent = last ? pct(last.pass_hat_k.estimate, 2) : "–";
  clear(el("stat-hatn-ci"), last ? bracket(last.pass_hat_k) : "");
  const finished = state.rows.filter((r) => r.finished).length;
  el("stat-problems").textContent = num(state.rows.length || problemCount);
  const covered = m && m.coverage ? m.coverage : state.run && state.run.coverage;
  clear(el("stat-problems-sub"),
    covered ? coverage({ coverage: covered }) : null, covered ? " · " : null,
    finished === state.rows.length ? "all finished" : `${num(finished)} finished`);
  if (m && m.n_min !== null && m.n_min !== undefined) {
    el("stat-n").textContent = m.n_min === m.n_max ? num(m.n_min) : `${num(m.n_min)}–${num(m.n_max)}`;
    el("stat-n-sub").textContent = m.excluded_sandbox_errors ? `${num(m.excluded_sandbox_errors)} sandbox errors excluded` : `${num(m.samples)} samples counted`;
  } else if (state.run) {
    const problems = state.rows.length || problemCount;
    el("stat-n").textContent = `≈${num(Math.round(state.run.sample_count / Math.max(problems, 1)))}`;
    el("stat-n-sub").textContent = "";
  }
  const note = el("metrics-note");
  const lines = m ? [m.note, ...(m.warnings || [])].filter(Boolean) : [];
  note.hidden = !lines.length;
  clear(note, lines.map((line, i) => [i ? h("br") : null, line]));
}

/** The table's k: the one chosen if still on the grid, else 10 (or the largest k of the grid). */
function tableKFor(nMin) {
  const ks = nMin ? kGrid(nMin) : [1];
  if (state.tableK !== null && ks.includes(state.tableK)) return state.tableK;
  return ks.includes(10) ? 10 : ks[ks.length - 1];
}

/** Per-problem results with the server's pass@k at 1 and at the table's k (asked again when n_min moved it). */
async function fetchProblems() {
  const ks = (nMin) => [...new Set([1, tableKFor(nMin)])].join(",");
  const asked = ks(state.nMin);
  const result = await api(`/v1/runs/${runId}/problems`, { params: { k: asked } });
  const want = ks(result.curves ? result.curves.n_min : 0);
  return want === asked ? result : api(`/v1/runs/${runId}/problems`, { params: { k: want } });
}

async function loadResults() {
  const result = await fetchProblems();
  state.rows = result.problems.map((p, i) => ({
    index: i + 1,
    problem_id: p.problem_id,
    n: p.n,
    c: p.c,
    total: p.total,
    pending: p.pending,
    by_verdict: p.by_verdict,
    finished: problemFinished(p),
    p1: p.n ? p.c / p.n : null,
    passAt: p.pass_at_k,
    distinct: p.distinct_programs ?? null,
  }));
  state.curves = curvesOf(result.curves);
  state.nMin = state.curves ? state.curves.nMin : 0;
  setupKSelect();
  const bins = histogramBins(state.rows);
  el("histogram-caption").textContent = `c / n · never passed: ${num(bins[0].count)} · always passed: ${num(bins[11].count)}`;
  barChart(el("histogram-chart"), { bins, xLabel: "share of a problem's samples that passed (%)", yLabel: "problems" });
  renderTable();
  renderCurves();
  if (state.nMin) {
    const grid = kGrid(state.nMin);
    const figures = [...new Set([1, state.nMin])];
    const band = grid.length > figures.length
      ? api(`/v1/runs/${runId}/metrics`, { params: { k: grid.join(","), resamples: BAND_RESAMPLES } }).catch(() => null)
      : Promise.resolve(null);
    try {
      state.metrics = await api(`/v1/runs/${runId}/metrics`, { params: { k: figures.join(",") } });
    } catch (error) {
      state.metrics = null;
      const note = el("metrics-note");
      note.hidden = false;
      note.textContent = `Metrics unavailable: ${errorText(error)}`;
    }
    renderStats();
    state.band = await band;
  } else {
    state.metrics = null;
    state.band = null;
    renderStats();
  }
  renderCurves();
}

// ---------- problem table ----------

function setupKSelect() {
  const select = el("problem-k");
  const ks = state.nMin ? kGrid(state.nMin) : [1];
  state.tableK = tableKFor(state.nMin);
  const current = [...select.options].map((o) => Number(o.value));
  if (current.join() !== ks.join()) clear(select, ks.map((k) => h("option", { value: k }, k)));
  select.value = String(state.tableK);
  el("pk-header").textContent = `pass@${state.tableK}`;
}

/** A problem's pass@k from the server's per-problem estimates (null where k > n). */
const passAtOf = (r, k) => r.passAt[String(k)] ?? null;

function visibleRows() {
  const q = state.search.trim().toLowerCase();
  let rows = state.rows.filter((r) => {
    if (q && !r.problem_id.toLowerCase().includes(q)) return false;
    switch (state.filter) {
      case "unsolved": return r.finished && r.n > 0 && r.c === 0;
      case "partial": return r.c > 0 && r.c < r.n;
      case "solved": return r.finished && r.n > 0 && r.c === r.n;
      case "pending": return r.pending > 0;
      default: return true;
    }
  });
  const k = state.tableK;
  for (const r of rows) r.pk = passAtOf(r, k);
  const { key, dir } = state.sort;
  rows = rows.slice().sort((a, b) => {
    const x = a[key], y = b[key];
    if (x === y) return a.index - b.index;
    if (x === null || x === undefined) return 1; // blanks last either way
    if (y === null || y === undefined) return -1;
    return (typeof x === "string" ? x.localeCompare(y, undefined, { numeric: true }) : x - y) * dir;
  });
  return rows;
}

function miniVerdicts(r) {
  const total = Math.max(r.total, 1);
  const segs = VERDICTS.filter((v) => r.by_verdict[v]).map((v) =>
    h("span", { class: "seg", style: { width: `${(100 * r.by_verdict[v]) / total}%`, background: VERDICT_COLORS[v] }, title: `${v}: ${r.by_verdict[v]}` }));
  return h("div", { class: "mini-bar", title: VERDICTS.filter((v) => r.by_verdict[v]).map((v) => `${v} ${r.by_verdict[v]}`).join(", ") }, segs);
}

function renderTable() {
  const rows = visibleRows();
  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  state.page = Math.min(state.page, pages - 1);
  const shown = rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
  el("problem-count").textContent = rows.length === state.rows.length ? `${num(rows.length)}` : `${num(rows.length)} of ${num(state.rows.length)}`;
  clear(el("problems-body"), shown.length ? shown.map((r) =>
    h("tr", { dataset: { problemId: r.problem_id } },
      h("td", { class: "num muted" }, r.index),
      h("td", {}, h("a", { href: problemPath(runId, r.problem_id) }, r.problem_id),
        r.pending ? h("span", { class: "badge status-running tiny" }, `${r.pending} pending`) : null),
      h("td", { class: "num" }, num(r.n)),
      h("td", { class: "num" }, num(r.c)),
      h("td", { class: "num" }, pct(r.p1)),
      h("td", { class: "num" }, pct(r.pk)),
      h("td", { class: "num" }, r.distinct === null ? h("span", { class: "muted", title: "not reported by this server" }, "–") : num(r.distinct)),
      h("td", {}, miniVerdicts(r))))
    : h("tr", {}, h("td", { colspan: 8, class: "muted empty" }, "No problems match.")));
  renderPager(el("problems-pager"), { page: state.page, pages, total: rows.length, label: "problems", onPage: (page) => { state.page = page; renderTable(); } });
  for (const th of document.querySelectorAll("#problems-table th[data-sort]")) {
    th.setAttribute("aria-sort", th.dataset.sort === state.sort.key ? (state.sort.dir > 0 ? "ascending" : "descending") : "none");
  }
}

for (const th of document.querySelectorAll("#problems-table th[data-sort]")) {
  th.tabIndex = 0;
  const sortBy = () => {
    const key = th.dataset.sort;
    // Numbers sort high-first on the first click; names and order low-first.
    const firstDir = ["index", "problem_id"].includes(key) ? 1 : -1;
    state.sort = state.sort.key === key ? { key, dir: -state.sort.dir } : { key, dir: firstDir };
    state.page = 0;
    renderTable();
  };
  th.addEventListener("click", sortBy);
  th.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(); } });
}
el("problem-search").addEventListener("input", (e) => { state.search = e.target.value; state.page = 0; renderTable(); });
el("problem-filter").addEventListener("change", (e) => { state.filter = e.target.value; state.page = 0; renderTable(); });
el("problem-k").addEventListener("change", async (e) => {
  const k = Number(e.target.value);
  state.tableK = k;
  el("pk-header").textContent = `pass@${k}`;
  try {
    // The server's per-problem pass@k at the new k (the page holds only pass@1 and the previous k).
    const result = await api(`/v1/runs/${runId}/problems`, { params: { k } });
    const byId = new Map(result.problems.map((p) => [p.problem_id, p.pass_at_k]));
    for (const r of state.rows) r.passAt = { ...r.passAt, ...(byId.get(r.problem_id) || {}) };
  } catch (error) {
    console.warn(error);
  }
  if (state.tableK === k) renderTable();
});

// ---------- live updates ----------

async function poll() {
  let run;
  try {
    run = await api(`/v1/runs/${runId}`);
  } catch (error) {
    setTimeout(poll, POLL_MS * 2);
    return;
  }
  const wasLive = state.run && !FINISHED_STATUSES.has(state.run.status);
  renderRun(run);
  const finished = FINISHED_STATUSES.has(run.status);
  state.polls++;
  const moved = run.progress.done !== state.lastDone;
  if (finished && wasLive) {
    // The run just ended: final per-problem results and metrics.
    state.lastDone = run.progress.done;
    await loadResults().catch(console.warn);
  } else if (!finished && moved && state.polls % REFRESH_EVERY === 0) {
    state.lastDone = run.progress.done;
    await loadResults().catch(console.warn);
  }
  el("live-indicator").hidden = finished;
  if (!finished && !state.events) setTimeout(poll, POLL_MS);
}

// Live view from the run's events (Server-Sent Events; the browser resumes with Last-Event-ID):
// each finished sample asks for a refresh, at most one every POLL_MS; polling only if events fail.
function follow() {
  const source = new EventSource(`/v1/runs/${runId}/events`);
  state.events = source;
  let pending = null;
  const refresh = (delay) => {
    if (pending) return;
    pending = setTimeout(() => { pending = null; poll(); }, delay);
  };
  source.addEventListener("sample", () => refresh(POLL_MS));
  source.addEventListener("end", () => { source.close(); state.events = null; clearTimeout(pending); pending = null; poll(); });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED && state.events === source) {
      state.events = null;
      setTimeout(poll, POLL_MS);
    }
  };
}

async function start() {
  try {
    const run = await api(`/v1/runs/${runId}`);
    renderRun(run);
    state.lastDone = run.progress.done;
    const live = !FINISHED_STATUSES.has(run.status);
    el("live-indicator").hidden = !live;
    await loadResults();
    if (live) {
      if (window.EventSource) follow();
      else setTimeout(poll, POLL_MS);
    }
  } catch (error) {
    clear(el("curve-chart"), h("p", { class: "error" }, errorText(error)));
  }
}
start();
