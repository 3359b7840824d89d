// Compare page: two runs on the same problems, side by side. The paired difference, its interval
// and p-value, and per-problem wins and losses all come from GET /v1/compare (paired over problems).
import { api, boot, bracket, clear, downloadButton, errorText, h, hasBounds, num, pct, problemPath, renderPager, toCsv, when } from "./common.js";
import { forestPlot, scatterPlot } from "./charts.js";

const PAGE_SIZE = 50;
const data = boot();
const datasets = new Map((data.datasets || []).map((d) => [d.id, d.name]));
const el = (id) => document.getElementById(id);
const result = el("compare-result");
const baseSelect = el("compare-base");
const candidateSelect = el("compare-candidate");

const signedPp = (x) => (x === null || x === undefined ? "–" : `${x >= 0 ? "+" : "−"}${Math.abs(100 * x).toFixed(1)}`);
export const pValue = (p) => (p === null || p === undefined ? "–" : p < 0.001 ? "< 0.001" : p.toFixed(3));
const value = (x) => (x !== null && typeof x === "object" ? x.estimate ?? x.pass_at_k ?? null : x);

function runLabel(run) {
  const t = run.sampling && run.sampling.temperature !== undefined ? ` · T=${run.sampling.temperature}` : "";
  const dataset = datasets.get(run.dataset_id) || run.dataset_id.slice(0, 8);
  const tags = run.tags && run.tags.length ? ` · ${run.tags.join(", ")}` : "";
  return `${run.display_name || run.model}${t} · ${dataset}${tags} · ${when(run.created_at)} · ${run.id.slice(0, 8)}`;
}

// The pickers are searchable: typing narrows both lists (the chosen runs stay).
el("compare-search").addEventListener("input", (e) => {
  const q = e.target.value.trim().toLowerCase();
  for (const select of [baseSelect, candidateSelect]) {
    for (const option of select.options) {
      option.hidden = Boolean(q && option.value && option.value !== select.value && !option.textContent.toLowerCase().includes(q));
    }
  }
});

async function fillSelectors() {
  const list = await api("/v1/runs", { params: { limit: 200 } });
  const runs = list.items;
  for (const id of [data.base, data.candidate]) {
    if (id && !runs.some((r) => r.id === id)) {
      try { runs.push(await api(`/v1/runs/${id}`)); } catch (error) { /* shown by the compare call */ }
    }
  }
  for (const select of [baseSelect, candidateSelect]) {
    select.append(...runs.map((run) => h("option", { value: run.id }, runLabel(run))));
  }
  baseSelect.value = data.base;
  candidateSelect.value = data.candidate;
  return new Map(runs.map((r) => [r.id, r]));
}

function runCard(role, side, run) {
  const n = side.n_min === null || side.n_min === undefined ? null : side.n_min === side.n_max ? num(side.n_min) : `${num(side.n_min)}–${num(side.n_max)}`;
  const sampling = Object.entries(side.sampling || {}).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ");
  return h("section", { class: `card run-card ${role}` },
    h("div", { class: "role" }, role),
    h("h3", {}, h("a", { href: `/runs/${side.run_id}` }, side.model)),
    h("div", { class: "mono muted small" }, sampling || "no sampling parameters"),
    h("div", { class: "muted small" },
      `${num(side.problems)} problems`, n ? ` · n = ${n}` : "", side.status && side.status !== "completed" ? ` · ${side.status}` : "",
      run ? ` · ${datasets.get(run.dataset_id) || ""} · ${num(run.sample_count)} samples · created ${when(run.created_at)}` : ""));
}

function metricsTable(report) {
  return h("table", { class: "data", id: "compare-metrics" },
    h("thead", {}, h("tr", {},
      h("th", {}, "metric"), h("th", { class: "num" }, "base"), h("th", { class: "num" }, "candidate"),
      h("th", { class: "num" }, "difference (pp)"), h("th", { class: "num" }, "p-value"), h("th", { class: "num" }, "correlation"))),
    h("tbody", {}, report.metrics.map((m) => {
      const d = m.difference;
      const cls = d.ci_low > 0 ? "delta-pos" : d.ci_high < 0 ? "delta-neg" : "";
      const pTitle = m.p_value_method ? `${m.p_value_method}${m.p_value_exact ? ", exact" : `, ${num(m.permutations)} permutations`}` : "";
      return h("tr", { dataset: { k: m.k } },
        h("td", {}, `pass@${m.k}`),
        h("td", { class: "num base-cell" }, pct(m.base.estimate), " ", bracket(m.base)),
        h("td", { class: "num candidate-cell" }, pct(m.candidate.estimate), " ", bracket(m.candidate)),
        h("td", { class: `num diff ${cls}`, title: `${d.method_used || d.method || "bootstrap"} interval; ${d.standard_error === null ? (d.standard_error_note || "no standard error") : `standard error ${(100 * d.standard_error).toFixed(1)} pp`}` },
          signedPp(d.estimate), " ", h("span", { class: "muted small" }, hasBounds(d) ? `[${signedPp(d.ci_low)}, ${signedPp(d.ci_high)}] ${d.label || ""}` : "no interval")),
        h("td", { class: "num p-value", title: pTitle }, pValue(m.p_value)),
        h("td", { class: "num" }, m.correlation === null || m.correlation === undefined ? "–" : m.correlation.toFixed(2)));
    })));
}

function mcnemarBlock(m) {
  if (!m) return null;
  const p = (x) => (x === null || x === undefined ? "–" : pValue(x));
  return h("div", { class: "mcnemar", id: "compare-mcnemar" },
    h("h2", {}, "McNemar ", h("span", { class: "muted small" }, "(one sample per problem in both runs: discordant problems)")),
    h("dl", { class: "facts" },
      [["candidate only passes", num(m.wins)], ["base only passes", num(m.losses)], ["exact p", p(m.exact_p)],
        ["χ² p", p(m.chi2_p)], ["χ² p (corrected)", p(m.chi2_corrected_p)]].map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v)))));
}

function perProblem(report, runs) {
  const items = report.per_problem.items.map((item) => ({
    problem_id: item.problem_id, base: value(item.base), candidate: value(item.candidate), delta: value(item.delta),
  }));
  const k = report.per_problem.k ?? (report.metrics.length ? report.metrics[0].k : 1);
  const state = { filter: "all", search: "", page: 0, dir: -1 };
  const body = h("tbody", { id: "per-problem-body" });
  const pager = h("div", { class: "pager", id: "per-problem-pager" });
  const kind = (it) => (it.delta > 0 ? "win" : it.delta < 0 ? "loss" : "tie");
  const render = () => {
    const q = state.search.trim().toLowerCase();
    const rows = items
      .filter((it) => (state.filter === "all" || `${kind(it)}s` === state.filter) && (!q || it.problem_id.toLowerCase().includes(q)))
      .sort((a, b) => (a.delta - b.delta) * state.dir || a.problem_id.localeCompare(b.problem_id, undefined, { numeric: true }));
    const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    clear(body, rows.length ? rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE).map((it) =>
      h("tr", { class: kind(it), dataset: { problemId: it.problem_id } },
        h("td", {}, it.problem_id),
        h("td", { class: "num" }, h("a", { href: problemPath(report.base.run_id, it.problem_id) }, pct(it.base))),
        h("td", { class: "num" }, h("a", { href: problemPath(report.candidate.run_id, it.problem_id) }, pct(it.candidate))),
        h("td", { class: `num ${it.delta > 0 ? "delta-pos" : it.delta < 0 ? "delta-neg" : "muted"}` }, signedPp(it.delta)),
        h("td", {}, h("span", { class: `badge ${kind(it) === "win" ? "v-passed" : kind(it) === "loss" ? "v-failed" : ""}` }, kind(it)))))
      : h("tr", {}, h("td", { colspan: 5, class: "muted empty" }, "No problems match.")));
    renderPager(pager, { page: state.page, pages, total: rows.length, label: "problems", onPage: (p) => { state.page = p; render(); } });
  };
  const deltaHeader = h("th", { class: "num sortable-th", "aria-sort": "descending", tabindex: 0, onclick: () => {
    state.dir = -state.dir;
    deltaHeader.setAttribute("aria-sort", state.dir < 0 ? "descending" : "ascending");
    render();
  } }, "Δ (pp)");
  const controls = h("div", { class: "filters" },
    h("input", { type: "search", placeholder: "Filter by problem id…", "aria-label": "Filter problems", oninput: (e) => { state.search = e.target.value; state.page = 0; render(); } }),
    h("select", { id: "per-problem-filter", "aria-label": "Show", onchange: (e) => { state.filter = e.target.value; state.page = 0; render(); } },
      h("option", { value: "all" }, "All problems"),
      h("option", { value: "wins" }, "Candidate better"),
      h("option", { value: "losses" }, "Candidate worse"),
      h("option", { value: "ties" }, "Ties")));
  const table = h("table", { class: "data sortable" },
    h("thead", {}, h("tr", {}, h("th", {}, "Problem"), h("th", { class: "num" }, `base pass@${k}`), h("th", { class: "num" }, `candidate pass@${k}`), deltaHeader, h("th", {}, ""))),
    body);
  render();
  return { table, controls, pager, items, k };
}

async function compare(runs) {
  if (!data.base || !data.candidate) return;
  clear(result, h("p", { class: "muted" }, "Comparing…"));
  let report;
  try {
    report = await api("/v1/compare", {
      params: { base: data.base, candidate: data.candidate, k: data.k, intersection: data.intersection ? "true" : "" },
    });
  } catch (error) {
    clear(result, h("p", { class: "error card" }, `Cannot compare these runs: ${errorText(error)}`));
    return;
  }
  const pp = perProblem(report, runs);
  const forest = h("div", { id: "compare-forest", class: "chart" });
  const scatter = h("div", { id: "compare-scatter", class: "chart" });
  const dropped = Array.isArray(report.dropped_problems) ? report.dropped_problems.length : report.dropped_problems || 0;
  const { wins, losses, ties } = report.per_problem;
  clear(result,
    h("div", { class: "runs-pair" }, runCard("base", report.base, runs.get(report.base.run_id)), runCard("candidate", report.candidate, runs.get(report.candidate.run_id))),
    report.warnings && report.warnings.length ? h("ul", { class: "warnings", id: "compare-warnings" }, report.warnings.map((w) => h("li", {}, typeof w === "string" ? w : JSON.stringify(w)))) : null,
    h("div", { class: "compare-grid" },
      h("div", { class: "compare-main" },
      h("section", { class: "card" },
        h("h2", {}, "Paired difference ", h("span", { class: "muted small" },
          `candidate − base over ${num(report.problems)} ${report.intersection ? "shared " : ""}problems` +
          `${dropped ? `, ${num(dropped)} dropped` : ""}${report.partial ? " (unfinished problems left out)" : ""}` +
          ` · ${Math.round(100 * (report.confidence || 0.95))}% paired ${report.method === "percentile" ? "percentile" : "BCa"} bootstrap`)),
        metricsTable(report),
        forest,
        mcnemarBlock(report.mcnemar)),
      // Under the paired table, in the same column: no blank area beside the taller scatter card.
      h("section", { class: "card flush" },
        h("div", { class: "table-head" }, h("h2", {}, "Wins and losses by problem ",
          report.per_problem.items_truncated ? h("span", { class: "muted small" }, `(first ${num(pp.items.length)} of ${num(report.per_problem.items_total)})`) : null), pp.controls,
          h("span", { class: "downloads" }, h("span", { class: "muted small" }, "Download:"),
            downloadButton("problems CSV", () => ({ name: `passk-compare-${report.base.run_id.slice(0, 8)}-${report.candidate.run_id.slice(0, 8)}.csv`, type: "text/csv",
              text: toCsv(pp.items, ["problem_id", "base", "candidate", "delta"]) }), { id: "dl-compare-csv" }),
            downloadButton("comparison JSON", () => ({ name: `passk-compare-${report.base.run_id.slice(0, 8)}-${report.candidate.run_id.slice(0, 8)}.json`, type: "application/json",
              text: JSON.stringify(report, null, 2) }), { id: "dl-compare-json" }))),
        h("div", { class: "table-scroll" }, pp.table), pp.pager)),
      h("section", { class: "card" },
        h("h2", {}, `Per problem `, h("span", { class: "muted small" }, `pass@${pp.k}`)),
        h("div", { class: "wlt" },
          h("div", { class: "stat" }, h("div", { class: "label" }, "candidate better"), h("div", { class: "value delta-pos", id: "wins" }, num(wins))),
          h("div", { class: "stat" }, h("div", { class: "label" }, "candidate worse"), h("div", { class: "value delta-neg", id: "losses" }, num(losses))),
          h("div", { class: "stat" }, h("div", { class: "label" }, "ties"), h("div", { class: "value", id: "ties" }, num(ties)))),
        scatter)));
  forestPlot(forest, report.metrics.map((m) => ({ label: `pass@${m.k}`, estimate: m.difference.estimate, lo: m.difference.ci_low ?? m.difference.estimate, hi: m.difference.ci_high ?? m.difference.estimate })));
  scatterPlot(scatter, pp.items.map((it) => ({
    x: it.base, y: it.candidate, cls: it.delta > 0 ? "win" : it.delta < 0 ? "loss" : "tie",
    title: `${it.problem_id}: ${pct(it.base)} → ${pct(it.candidate)}`,
  })), { xLabel: `base pass@${pp.k}`, yLabel: `candidate pass@${pp.k}` });
}

fillSelectors().then(compare).catch((error) => clear(result, h("p", { class: "error" }, errorText(error))));
