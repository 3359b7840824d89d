// Runs list: newest first, filter by dataset and model; progress and pass@1 fill in per row.
import {
  FINISHED_STATUSES, api, boot, bracket, clear, coverage, eachLimited, errorText, h, num, pct, renderPager, renderProgress, when,
} from "./common.js";

const PAGE_SIZE = 25;
const POLL_MS = 2000;
// pass@1 for a list row: the server's default interval (no options), the one every surface shows.

const data = boot();
const datasetsById = new Map(data.datasets.map((d) => [d.id, d]));
const body = document.getElementById("runs-body");
const pager = document.getElementById("runs-pager");
const datasetSelect = document.getElementById("filter-dataset");
const modelSelect = document.getElementById("filter-model");
const compareButton = document.getElementById("compare-selected");

const searchInput = document.getElementById("filter-search");
const sortSelect = document.getElementById("filter-sort");
const archivedBox = document.getElementById("filter-archived");

const params = new URLSearchParams(location.search);
const state = {
  dataset_id: params.get("dataset_id") || "",
  model: params.get("model") || "",
  q: params.get("q") || "",
  sort: params.get("sort") || "newest",
  archived: params.get("archived") === "include",
  // A stream's calls (linked from the streams page); the list leaves streams out otherwise.
  stream: params.get("stream") || "",
  page: Math.max(0, Number(params.get("page") || 0) | 0),
};
searchInput.value = state.q;
sortSelect.value = state.sort;
archivedBox.checked = state.archived;
datasetSelect.value = state.dataset_id;
if (state.model && ![...modelSelect.options].some((o) => o.value === state.model)) {
  modelSelect.append(h("option", { value: state.model }, state.model));
}
modelSelect.value = state.model;

let generation = 0; // a newer load makes older in-flight updates no-ops
let pollTimer = null;
let pollTicks = 0;
const selected = new Set();

function syncUrl() {
  const query = new URLSearchParams();
  if (state.dataset_id) query.set("dataset_id", state.dataset_id);
  if (state.model) query.set("model", state.model);
  if (state.q) query.set("q", state.q);
  if (state.sort !== "newest") query.set("sort", state.sort);
  if (state.archived) query.set("archived", "include");
  if (state.stream) query.set("stream", state.stream);
  if (state.page) query.set("page", state.page);
  const text = query.toString();
  history.replaceState(null, "", text ? `/?${text}` : "/");
}

function temperature(sampling) {
  return sampling && sampling.temperature !== undefined ? String(sampling.temperature) : "–";
}

function rowFor(run) {
  const dataset = datasetsById.get(run.dataset_id);
  const checkbox = h("input", { type: "checkbox", "aria-label": `Select run ${run.model}`, onchange: (e) => toggle(run, e.target.checked) });
  checkbox.checked = selected.has(run.id);
  const problems = run.problem_count || (dataset && dataset.problems);
  const approxN = problems ? run.sample_count / problems : null;
  const row = h("tr", { dataset: { runId: run.id, status: run.status } },
    h("td", { class: "narrow-col" }, checkbox),
    h("td", {}, h("a", { href: `/runs/${run.id}`, class: "run-link" }, run.display_name || run.model),
      h("div", { class: "mono muted tiny run-id", title: run.id }, run.id.slice(0, 8)),
      run.tags && run.tags.length ? h("div", {}, run.tags.map((t) => h("span", { class: "tag" }, t))) : null,
      run.archived ? h("span", { class: "badge tiny" }, "archived") : null),
    // pass@1 right after the name: on a phone it is on screen without scrolling sideways.
    h("td", { class: "num pass1-cell" }, h("span", { class: "muted" }, "…")),
    h("td", { class: "num mono" }, temperature(run.sampling)),
    h("td", { class: "dataset-cell" }, run.dataset_name || (dataset ? dataset.name : h("span", { class: "mono muted" }, run.dataset_id.slice(0, 8))),
      h("div", { class: "tiny muted coverage-cell" }, coverage(run))),
    h("td", { class: "status-cell" },
      h("div", { class: "status-line" },
        h("span", { class: `badge status-${run.status}` }, run.status),
        h("span", { class: "progress-label mono muted" }, ""),
        h("span", { class: "hacks-cell" }, hackBadge(run.flagged_samples))),
      h("div", { class: "progress small", role: "progressbar", "aria-valuemin": 0, "aria-valuemax": 100 })),
    h("td", { class: "num n-cell mono" }, approxN === null ? "–" : `≈${num(Math.round(approxN))}`),
    h("td", { class: "muted created-cell", title: run.created_at }, when(run.created_at)));
  return row;
}

function toggle(run, on) {
  if (on) selected.add(run.id); else selected.delete(run.id);
  compareButton.disabled = selected.size !== 2;
  compareButton.textContent = selected.size === 2 ? "Compare selected (2)" : "Compare selected";
  languagesButton.disabled = selected.size === 0;
}

// One model's runs in several languages side by side (one run per language).
const languagesButton = document.getElementById("compare-languages");
languagesButton.addEventListener("click", () => window.location.assign(`/languages?runs=${[...selected].join(",")}`));

compareButton.addEventListener("click", () => {
  // Older run as base, newer as candidate (rows are newest first).
  const rows = [...body.querySelectorAll("tr[data-run-id]")].map((tr) => tr.dataset.runId).filter((id) => selected.has(id));
  const [candidate, base] = rows.length === 2 ? rows : [...selected];
  window.location.assign(`/compare?base=${base}&candidate=${candidate}`);
});

/** A run's flagged samples (reward hacks), when there are any. */
function hackBadge(count) {
  return count ? h("span", { class: "badge flag-badge tiny", title: "samples that did what only a forger does (see the run page)" }, `⚑ ${num(count)} flagged`) : null;
}

function updateProgress(row, run) {
  // The status cell's badge: the row also holds "archived" and "subset" badges before it.
  const badge = row.querySelector(".status-cell .badge");
  badge.textContent = run.status;
  badge.className = `badge status-${run.status}`;
  row.dataset.status = run.status;
  const p = run.progress;
  renderProgress(row.querySelector(".progress"), p);
  row.querySelector(".progress-label").textContent = `${num(p.done)}/${num(p.total)}`;
  if (p.reward_hacks) clear(row.querySelector(".hacks-cell"), hackBadge(p.reward_hacks.samples));
}

async function updateMetrics(row, run) {
  const cell = row.querySelector(".pass1-cell");
  if (!run.progress.done) {
    clear(cell, h("span", { class: "muted" }, "–"));
    return;
  }
  try {
    const metrics = await api(`/v1/runs/${run.id}/metrics`, { params: { k: 1 } });
    if (!metrics.metrics.length) {
      clear(cell, h("span", { class: "muted", title: metrics.note || "" }, "–"));
    } else {
      const m = metrics.metrics[0].pass_at_k;
      clear(cell,
        h("strong", { class: "pass1" }, pct(m.estimate, 2)), " ",
        bracket(m),
        metrics.partial ? h("span", { class: "partial", title: metrics.note || "partial" }, " partial") : null);
    }
    if (metrics.n_min !== null) {
      row.querySelector(".n-cell").textContent = metrics.n_min === metrics.n_max ? num(metrics.n_min) : `${num(metrics.n_min)}–${num(metrics.n_max)}`;
    }
  } catch (error) {
    clear(cell, h("span", { class: "muted", title: errorText(error) }, "n/a"));
  }
}

async function load() {
  const mine = ++generation;
  clearTimeout(pollTimer);
  syncUrl();
  let list;
  try {
    list = await api("/v1/runs", { params: {
      dataset_id: state.dataset_id, model: state.model, q: state.q, archived: state.archived ? "include" : undefined,
      stream: state.stream || undefined, sort: state.sort, limit: PAGE_SIZE, offset: state.page * PAGE_SIZE } });
  } catch (error) {
    clear(body, h("tr", {}, h("td", { colspan: 8, class: "error" }, errorText(error))));
    return;
  }
  if (mine !== generation) return;
  if (!list.items.length) {
    clear(body, h("tr", {}, h("td", { colspan: 8, class: "muted empty" },
      state.dataset_id || state.model || state.q ? "No runs match these filters." : "No runs yet: POST /v1/runs to submit one.")));
  } else {
    clear(body, list.items.map(rowFor));
  }
  renderPager(pager, {
    page: state.page, pages: Math.ceil(list.total / PAGE_SIZE), total: list.total, label: "runs",
    onPage: (page) => { state.page = page; load(); },
  });
  const rows = new Map([...body.querySelectorAll("tr[data-run-id]")].map((tr) => [tr.dataset.runId, tr]));
  await eachLimited(list.items, 4, async (summary) => {
    const run = await api(`/v1/runs/${summary.id}`);
    if (mine !== generation) return;
    updateProgress(rows.get(run.id), run);
    await updateMetrics(rows.get(run.id), run);
  });
  if (mine === generation) schedulePoll(mine, rows);
}

// Live rows: re-read progress of unfinished runs; refresh pass@1 as they progress and when they end.
function schedulePoll(mine, rows) {
  const live = [...rows.entries()].filter(([, tr]) => !FINISHED_STATUSES.has(tr.dataset.status));
  if (!live.length) return;
  pollTimer = setTimeout(async () => {
    const tick = ++pollTicks;
    await eachLimited(live, 4, async ([id, tr]) => {
      const run = await api(`/v1/runs/${id}`);
      if (mine !== generation) return;
      const finished = FINISHED_STATUSES.has(run.status);
      updateProgress(tr, run);
      if (finished || tick % 5 === 0) await updateMetrics(tr, run);
    });
    if (mine === generation) schedulePoll(mine, rows);
  }, POLL_MS);
}

let searchTimer = null;
searchInput.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => { state.q = searchInput.value.trim(); state.page = 0; load(); }, 250);
});
sortSelect.addEventListener("change", () => { state.sort = sortSelect.value; state.page = 0; load(); });
archivedBox.addEventListener("change", () => { state.archived = archivedBox.checked; state.page = 0; load(); });
datasetSelect.addEventListener("change", () => { state.dataset_id = datasetSelect.value; state.page = 0; load(); });
modelSelect.addEventListener("change", () => { state.model = modelSelect.value; state.page = 0; load(); });
load();
