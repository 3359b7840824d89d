// Problem page: the run's samples for one problem, a page at a time (never all of them), each with
// its verdict, duration and output excerpt; the selected sample's program is syntax-highlighted.
import { api, boot, clear, duration, errorText, flagBadge, h, num, verdictBadge } from "./common.js";
import { highlightInto } from "./highlight.js";

const PAGE_SIZE = 20;
const FLAGGED = "flagged"; // the filter's choice for samples with a reward-hack flag (not a verdict)
const data = boot();
const el = (id) => document.getElementById(id);

const state = { cursors: [null], page: 0, verdict: "", search: "", items: [], selected: null, nextCursor: null };
const wanted = Number(new URLSearchParams(location.search).get("sample")) || null; // ?sample=ID selects it

function excerpt(sample) {
  const pick = sample.detail || lastLine(sample.stderr) || firstLine(sample.stdout) || "";
  return pick.length > 110 ? pick.slice(0, 107) + "…" : pick;
}
const lastLine = (text) => (text || "").trim().split("\n").filter(Boolean).pop() || "";
const firstLine = (text) => (text || "").trim().split("\n")[0] || "";

function renderSamples() {
  const body = el("samples-body");
  if (!state.items.length) {
    clear(body, h("tr", {}, h("td", { colspan: 4, class: "muted empty" }, state.search ? "No sample contains that text." : state.verdict ? `No ${state.verdict} samples.` : "No samples.")));
  } else {
    clear(body, state.items.map((sample) =>
      h("tr", {
        class: `sample-row${state.selected && state.selected.id === sample.id ? " selected" : ""}`,
        tabindex: 0, dataset: { sampleId: sample.id, index: sample.index },
        onclick: () => select(sample),
        onkeydown: (e) => { if (e.key === "Enter") select(sample); },
      },
        h("td", { class: "num mono" }, sample.index),
        h("td", {}, verdictBadge(sample.verdict, sample.state), sample.cached ? h("span", { class: "muted tiny" }, " cached") : null,
          (sample.flags || []).map((name) => flagBadge(name, data.flags))),
        h("td", { class: "num mono" }, duration(sample.duration_ms)),
        h("td", { class: "excerpt mono", title: excerpt(sample) }, excerpt(sample)))));
  }
  const pager = el("samples-pager");
  const first = state.page * PAGE_SIZE + 1;
  const last = state.page * PAGE_SIZE + state.items.length;
  const total = state.search ? state.items.length : state.verdict === FLAGGED ? data.flagged : state.verdict ? (data.verdicts[state.verdict] || 0) : data.total;
  clear(pager,
    h("button", { type: "button", disabled: state.page === 0, onclick: () => go(state.page - 1), "aria-label": "Previous samples" }, "‹ Prev"),
    h("span", { class: "muted page-info" }, state.items.length ? `samples ${first}–${last} of ${num(total)}` : ""),
    h("button", { type: "button", disabled: !state.nextCursor, onclick: () => go(state.page + 1), "aria-label": "Next samples" }, "Next ›"));
}

function outputBlock(label, text, truncated) {
  if (!text) return null;
  return h("div", { class: "output" },
    h("div", { class: "output-label" }, label, truncated ? h("span", { class: "muted" }, " (truncated)") : null),
    h("pre", { class: "output-text" }, text));
}

// The program's stderr once: passk's own frames (its judge, its value wire) left out by the server
// (sample.traceback, sandbox/tracebacks.py); a button shows the stderr as it was printed.
function stderrBlock(sample) {
  if (!sample.stderr) return null;
  const stripped = sample.traceback ?? sample.stderr;
  const pre = h("pre", { class: `output-text${sample.verdict !== "passed" ? " traceback" : ""}`, id: "sample-stderr" }, stripped);
  let raw = false;
  const toggle = stripped !== sample.stderr
    ? h("button", { type: "button", class: "link small", id: "stderr-raw", onclick: (e) => {
      raw = !raw;
      pre.textContent = raw ? sample.stderr : stripped;
      e.target.textContent = raw ? "hide passk's frames" : "show passk's frames";
    } }, "show passk's frames")
    : null;
  return h("div", { class: "output" },
    h("div", { class: "output-label" }, "stderr", sample.stderr_truncated ? h("span", { class: "muted" }, " (truncated)") : null,
      toggle ? " · " : null, toggle),
    pre);
}

function select(sample) {
  state.selected = sample;
  const url = new URL(location.href);
  url.searchParams.set("sample", sample.id);
  history.replaceState(null, "", url);
  for (const row of document.querySelectorAll(".sample-row")) row.classList.toggle("selected", Number(row.dataset.sampleId) === sample.id);
  el("program-caption").textContent = `sample #${sample.index} · prompt + completion`;
  const facts = [
    ["verdict", verdictBadge(sample.verdict, sample.state)],
    ["duration", duration(sample.duration_ms)],
    ["cpu", duration(sample.cpu_ms)],
    ["exit code", sample.exit_code ?? "–"],
    sample.signal ? ["signal", sample.signal] : null,
    ["attempts", sample.attempts],
  ].filter(Boolean);
  clear(el("sample-detail"),
    h("dl", { class: "facts" }, facts.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v)))),
    flagsBlock(sample),
    sample.detail ? h("p", { class: "detail mono" }, sample.detail) : null,
    failureBlock(sample.failure),
    stderrBlock(sample),
    outputBlock("stdout", sample.stdout, sample.stdout_truncated));
  const completion = sample.completion ?? "";
  highlightInto(el("program-code").querySelector("code"), data.prompt + completion, data.prompt.length);
}

// What only a forger does, as the sandbox saw this sample's program do it; the verdict stands beside it.
function flagsBlock(sample) {
  const flags = sample.flags || [];
  if (!flags.length) return null;
  return h("div", { class: "sample-flags", id: "sample-flags" },
    h("h3", {}, "Reward-hack flags"),
    h("ul", {}, flags.map((name) => h("li", { dataset: { flag: name } }, flagBadge(name, data.flags), " ",
      h("span", {}, (data.flags || {})[name] || "")))),
    sample.verdict === "passed" ? h("p", { class: "small" }, "It passed anyway: its pass counts in the run's figures.") : null);
}

// What failed: the first failing assertion (HumanEval/MBPP) or case (stdio/call).
function failureBlock(failure) {
  if (!failure || !["assertion", "case"].includes(failure.kind)) return null;
  const rows = failure.kind === "assertion"
    ? (failure.hidden ? [["assertion", failure.index == null ? undefined : `#${failure.index + 1}`]]
      : [["line", failure.line], ["assertion", failure.source], ["expected", failure.expected], ["actual", failure.actual]])
    : [["case", failure.index == null ? undefined : `#${failure.index + 1}`], ["input", failure.input],
       ["expected", failure.expected], ["got", failure.got]];
  return h("div", { class: "failure", id: "sample-failure" },
    h("h3", {}, failure.kind === "assertion" ? "First failing assertion" : "First failing case"),
    failure.hidden ? h("p", { class: "muted small" }, "The tests are hidden: their inputs and expected outputs are shown to the dataset's project only.") : null,
    h("dl", { class: "facts" }, rows.filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", { class: "mono" }, String(v))))));
}

async function go(page) {
  const cursor = state.cursors[page];
  try {
    const result = await api(`/v1/runs/${data.run_id}/samples`, {
      params: {
        problem_id: data.problem_id, limit: PAGE_SIZE, include: "completion", cursor,
        ...(state.verdict === FLAGGED ? { flagged: true } : { verdict: state.verdict }),
      },
    });
    state.page = page;
    state.items = result.items;
    state.nextCursor = result.next_cursor;
    state.cursors[page + 1] = result.next_cursor;
    renderSamples();
    if (state.items.length && (!state.selected || !state.items.some((s) => s.id === state.selected.id))) select(state.items[0]);
    return result;
  } catch (error) {
    clear(el("samples-body"), h("tr", {}, h("td", { colspan: 4, class: "error" }, errorText(error))));
  }
}

el("sample-verdict").addEventListener("change", (e) => {
  state.verdict = e.target.value;
  state.cursors = [null];
  if (state.search) search(el("sample-search").value); else go(0);
});

// ---------- every sample of the problem: search, identical programs ----------

let everySample = null; // read once, on the first search or grouping (a problem has at most a few thousand)

async function allSamples() {
  if (everySample) return everySample;
  const found = [];
  let cursor = null;
  for (let pages = 0; pages < 100; pages++) {
    const page = await api(`/v1/runs/${data.run_id}/samples`, {
      params: { problem_id: data.problem_id, limit: 1000, include: "completion", cursor } });
    found.push(...page.items);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  everySample = found;
  return found;
}

const matches = (sample, needle) => [sample.completion, sample.stdout, sample.stderr, sample.detail]
  .some((text) => (text || "").toLowerCase().includes(needle));

// A search over the samples' code and output: the matching samples replace the page (no pager while searching).
let searchTimer = null;
async function search(text) {
  state.search = text.trim().toLowerCase();
  const count = el("sample-search-count");
  if (!state.search) {
    count.textContent = "";
    state.cursors = [null];
    go(0);
    return;
  }
  let samples;
  try {
    samples = await allSamples();
  } catch (error) {
    count.textContent = errorText(error);
    return;
  }
  if (state.search !== text.trim().toLowerCase()) return; // typed on meanwhile
  state.items = samples.filter((sample) => matches(sample, state.search)
    && (!state.verdict || (state.verdict === FLAGGED ? (sample.flags || []).length : sample.verdict === state.verdict)));
  state.nextCursor = null;
  state.page = 0;
  count.textContent = `${num(state.items.length)} of ${num(samples.length)} samples contain “${text.trim()}”`;
  renderSamples();
  if (state.items.length) select(state.items[0]);
}
el("sample-search").addEventListener("input", (e) => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => search(e.target.value), 200);
});


async function groupIdentical() {
  const button = el("group-identical");
  button.disabled = true;
  button.textContent = "reading samples…";
  const groups = new Map();
  try {
    for (const sample of await allSamples()) {
      const key = sample.completion ?? "";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(sample);
    }
  } catch (error) {
    clear(el("identical"), h("p", { class: "error" }, errorText(error)));
    return;
  }
  const sorted = [...groups.values()].sort((a, b) => b.length - a.length);
  clear(el("identical"),
    h("p", { class: "muted small" }, `${num(sorted.length)} distinct programs among ${num(data.total)} samples`),
    h("table", { class: "data", id: "identical-table" },
      h("thead", {}, h("tr", {}, h("th", { class: "num" }, "copies"), h("th", {}, "verdicts"), h("th", {}, "samples"))),
      h("tbody", {}, sorted.map((group) => {
        const verdicts = {};
        for (const s of group) verdicts[s.verdict || s.state] = (verdicts[s.verdict || s.state] || 0) + 1;
        return h("tr", { class: "group-row", tabindex: 0, onclick: () => { select(group[0]); } },
          h("td", { class: "num copies" }, num(group.length)),
          h("td", {}, Object.entries(verdicts).map(([v, c]) => h("span", {}, verdictBadge(v), c > 1 && Object.keys(verdicts).length > 1 ? ` ${c} ` : " "))),
          h("td", { class: "mono small" }, group.slice(0, 8).map((s) => `#${s.index}`).join(" ") + (group.length > 8 ? " …" : "")));
      }))));
  button.textContent = "Grouped";
}
el("group-identical").addEventListener("click", groupIdentical);

if (data.tests_hidden) {
  // Another project's dataset hides its tests: the page never receives them.
  el("test-code").querySelector("code").textContent = "The tests are hidden: their text, inputs and expected outputs are shown to the dataset's project only.";
} else {
  highlightInto(el("test-code").querySelector("code"), `${data.test}\n\ncheck(${data.entry_point})`);
}
highlightInto(el("program-code").querySelector("code"), data.prompt, data.prompt.length);

async function start() {
  let result = await go(0);
  // A sample named in the URL: page forward until it is on screen, then select it.
  for (let page = 0; wanted && result && !state.items.some((s) => s.id === wanted) && result.next_cursor && page < 50; page++) {
    result = await go(state.page + 1);
  }
  const found = wanted && state.items.find((s) => s.id === wanted);
  if (found) {
    select(found);
    document.querySelector(`.sample-row[data-sample-id="${found.id}"]`)?.scrollIntoView({ block: "nearest" });
  }
}
start();
