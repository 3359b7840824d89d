// Problem page: the run's samples for one problem, a page at a time (never all of them), each with
// its verdict, duration and output excerpt; the selected sample's program is syntax-highlighted.
import { api, boot, clear, duration, errorText, h, num, verdictBadge } from "./common.js";
import { highlightInto } from "./highlight.js";

const PAGE_SIZE = 20;
const data = boot();
const el = (id) => document.getElementById(id);

const state = { cursors: [null], page: 0, verdict: "", items: [], selected: null, nextCursor: null };

function excerpt(sample) {
  const pick = sample.detail || lastLine(sample.stderr) || firstLine(sample.stdout) || "";
  return pick.length > 110 ? pick.slice(0, 107) + "…" : pick;
}
const lastLine = (text) => (text || "").trim().split("\n").filter(Boolean).pop() || "";
const firstLine = (text) => (text || "").trim().split("\n")[0] || "";

function renderSamples() {
  const body = el("samples-body");
  if (!state.items.length) {
    clear(body, h("tr", {}, h("td", { colspan: 4, class: "muted empty" }, state.verdict ? `No ${state.verdict} samples.` : "No samples.")));
  } else {
    clear(body, state.items.map((sample) =>
      h("tr", {
        class: `sample-row${state.selected && state.selected.id === sample.id ? " selected" : ""}`,
        tabindex: 0, dataset: { sampleId: sample.id, index: sample.index },
        onclick: () => select(sample),
        onkeydown: (e) => { if (e.key === "Enter") select(sample); },
      },
        h("td", { class: "num mono" }, sample.index),
        h("td", {}, verdictBadge(sample.verdict, sample.state), sample.cached ? h("span", { class: "muted tiny" }, " cached") : null),
        h("td", { class: "num mono" }, duration(sample.duration_ms)),
        h("td", { class: "excerpt mono", title: excerpt(sample) }, excerpt(sample)))));
  }
  const pager = el("samples-pager");
  const first = state.page * PAGE_SIZE + 1;
  const last = state.page * PAGE_SIZE + state.items.length;
  const total = state.verdict ? (data.verdicts[state.verdict] || 0) : data.total;
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

function select(sample) {
  state.selected = sample;
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
    sample.detail ? h("p", { class: "detail mono" }, sample.detail) : null,
    failureBlock(sample.failure),
    outputBlock("stderr", sample.stderr, sample.stderr_truncated),
    outputBlock("stdout", sample.stdout, sample.stdout_truncated));
  const completion = sample.completion ?? "";
  highlightInto(el("program-code").querySelector("code"), data.prompt + completion, data.prompt.length);
}

// What failed (issue 13): the first failing assertion (HumanEval/MBPP) or case (stdio/call).
function failureBlock(failure) {
  if (!failure || !["assertion", "case"].includes(failure.kind)) return null;
  const rows = failure.kind === "assertion"
    ? [["line", failure.line], ["assertion", failure.source], ["expected", failure.expected], ["actual", failure.actual]]
    : [["case", failure.index === undefined ? undefined : `#${failure.index + 1}`], ["input", failure.input],
       ["expected", failure.expected], ["got", failure.got]];
  return h("div", { class: "failure", id: "sample-failure" },
    h("h3", {}, failure.kind === "assertion" ? "First failing assertion" : "First failing case"),
    h("dl", { class: "facts" }, rows.filter(([, v]) => v !== undefined && v !== null)
      .map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", { class: "mono" }, String(v))))));
}

async function go(page) {
  const cursor = state.cursors[page];
  try {
    const result = await api(`/v1/runs/${data.run_id}/samples`, {
      params: { problem_id: data.problem_id, limit: PAGE_SIZE, include: "completion", verdict: state.verdict, cursor },
    });
    state.page = page;
    state.items = result.items;
    state.nextCursor = result.next_cursor;
    state.cursors[page + 1] = result.next_cursor;
    renderSamples();
    if (state.items.length && (!state.selected || !state.items.some((s) => s.id === state.selected.id))) select(state.items[0]);
  } catch (error) {
    clear(el("samples-body"), h("tr", {}, h("td", { colspan: 4, class: "error" }, errorText(error))));
  }
}

el("sample-verdict").addEventListener("change", (e) => {
  state.verdict = e.target.value;
  state.cursors = [null];
  go(0);
});

highlightInto(el("test-code").querySelector("code"), `${data.test}\n\ncheck(${data.entry_point})`);
highlightInto(el("program-code").querySelector("code"), data.prompt, data.prompt.length);
go(0);
