// Shared helpers for the dashboard pages: same-origin JSON fetches, DOM building, formatting,
// and the unbiased pass@k / pass^k estimators (the same products of ratios as service/statistics).

export const VERDICTS = ["passed", "failed", "error", "timeout", "memory", "crashed", "compile_error", "sandbox_error"];
export const VERDICT_COLORS = {
  passed: "#2e9d5b", failed: "#d1495b", error: "#ef8a17", timeout: "#7b5ea7",
  memory: "#8c6d46", crashed: "#3d405b", sandbox_error: "#9aa1ab",
  queued: "#c9ced6", leased: "#6fa8dc", cancelled: "#dde1e6",
};
export const FINISHED_STATUSES = new Set(["completed", "failed", "cancelled"]);

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

/** GET/POST the JSON API with the session cookie; a 401 sends the browser to the login page. */
export async function api(path, { method = "GET", body, params } = {}) {
  let url = path;
  if (params) {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined && value !== null && value !== "") query.set(key, value);
    }
    const text = query.toString();
    if (text) url += (url.includes("?") ? "&" : "?") + text;
  }
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  if (response.status === 401 && !path.startsWith("/v1/session")) {
    window.location.assign("/login?next=" + encodeURIComponent(location.pathname + location.search));
    throw new ApiError(401, "not logged in");
  }
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data && data.detail !== undefined ? data.detail : response.statusText);
  return data;
}

/** A readable message from an ApiError (FastAPI 422 bodies are lists of {msg}). */
export function errorText(error) {
  if (error instanceof ApiError && Array.isArray(error.detail)) return error.detail.map((d) => d.msg || JSON.stringify(d)).join("; ");
  if (error instanceof ApiError && typeof error.detail === "string") return error.detail;
  return String(error && error.message ? error.message : error);
}

export function boot() {
  const node = document.getElementById("boot");
  return node ? JSON.parse(node.textContent) : {};
}

/** h("a", {href, class: "x"}, "text", child) -> element. Text is always set as text, never parsed as HTML. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "style") Object.assign(el.style, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const pct = (x, digits = 1) => (x === null || x === undefined || Number.isNaN(x) ? "–" : (100 * x).toFixed(digits) + "%");
export const num = (x) => (x === null || x === undefined ? "–" : Number(x).toLocaleString("en-US"));
// Bounds with two decimals, as the CLI and `passk report` print them: the same bracket on every surface.
// No bounds (null: one problem, or every problem scored alike) print nothing: the label says "no interval".
export const hasBounds = (m) => Boolean(m) && m.ci_low !== null && m.ci_low !== undefined && m.ci_high !== null && m.ci_high !== undefined;
export const interval = (m, digits = 2) => (hasBounds(m) ? `[${pct(m.ci_low, digits)}, ${pct(m.ci_high, digits)}]` : "");

/** The short form of why an interval is degenerate ("a single problem", "every problem scores 1"). */
export const shortReason = (reason) => (reason ? reason.split(/[:;,]/)[0] : "");

/**
 * A labelled bracket: `[43.50%, 65.75%] 95 % BCa`, the exact bounds in data attributes, and where
 * the interval is degenerate (one problem, every problem equal, all solved) the reason, visibly.
 */
export function bracket(m) {
  if (!m) return h("span", { class: "muted" }, "");
  const degenerate = m.method_used === "none" || m.method_used === "clopper-pearson";
  return h("span", { class: "bracket", title: m.fallback_reason || "" },
    h("span", { class: "ci", dataset: hasBounds(m) ? { ciLow: m.ci_low, ciHigh: m.ci_high } : {} }, interval(m)), hasBounds(m) ? " " : null,
    h("span", { class: "ci-label muted small" }, m.label || (hasBounds(m) ? "" : "no interval")),
    degenerate && m.fallback_reason ? h("span", { class: "ci-why small" }, ` (${shortReason(m.fallback_reason)})`) : null,
    // an estimate few problems carry: said beside the number wherever it is shown, the full text on hover
    m.warning ? h("span", { class: "ci-warning small", title: m.warning }, ` ⚠ rests on ~${Number(m.effective_problems).toFixed(1)} problems`) : null);
}

/** "40 of 164 problems" with a subset flag when a run covers part of its dataset. */
export function coverage(metricsOrRun) {
  const c = metricsOrRun && metricsOrRun.coverage;
  if (!c) return null;
  return h("span", { class: c.subset ? "coverage subset" : "coverage", title: c.text },
    c.text, c.subset ? h("span", { class: "badge subset-flag tiny" }, "subset") : null);
}

export function duration(ms) {
  if (ms === null || ms === undefined) return "–";
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 1 : 0)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

export function when(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  const seconds = (Date.now() - date.getTime()) / 1000;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return date.toISOString().slice(0, 16).replace("T", " ");
}

export function elapsed(startIso, endIso) {
  if (!startIso) return "";
  const seconds = Math.max(0, ((endIso ? new Date(endIso) : new Date()) - new Date(startIso)) / 1000);
  if (seconds < 90) return `${seconds.toFixed(0)} s`;
  if (seconds < 5400) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function statusBadge(el, status) {
  el.textContent = status;
  el.className = `badge status-${status}`;
  return el;
}

export function verdictBadge(verdict, state) {
  const label = verdict || state || "queued";
  return h("span", { class: `badge v-${label}` }, label.replace("_", " "));
}

/** A reward-hack flag (what only a forger does, as the sandbox saw it): its name, its meaning on hover. */
export function flagBadge(name, descriptions = {}) {
  return h("span", { class: "badge flag-badge tiny", title: descriptions[name] || "reward-hack flag", dataset: { flag: name } },
    `⚑ ${name.replace(/_/g, " ")}`);
}

/** A link path for a problem id: keep "/" readable (HumanEval/0), escape the rest. */
export const problemPath = (runId, problemId) =>
  `/runs/${runId}/problems/${encodeURIComponent(problemId).replace(/%2F/gi, "/")}`;

/** A progress bar's fill (a stacked bar of done-passed, done-other, leased, queued). */
export function renderProgress(bar, progress) {
  const total = Math.max(progress.total, 1);
  const passed = progress.passed;
  const otherDone = progress.done - passed;
  const leased = progress.by_state.leased || 0;
  const fill = h("div", { class: "progress-fill" },
    h("span", { class: "seg pass", style: { width: `${(100 * passed) / total}%` } }),
    h("span", { class: "seg other", style: { width: `${(100 * otherDone) / total}%` } }),
    h("span", { class: "seg leased", style: { width: `${(100 * leased) / total}%` } }));
  clear(bar, fill);
  bar.setAttribute("aria-valuenow", String(Math.round((100 * progress.done) / total)));
  bar.title = `${num(progress.done)} of ${num(progress.total)} samples finished, ${num(passed)} passed`;
}

/** A problem counts towards run metrics once all its samples finished (the server's rule). */
export function problemFinished(p) {
  const done = VERDICTS.reduce((sum, v) => sum + (p.by_verdict[v] || 0), 0);
  const cancelled = p.total - p.pending - done;
  if (p.pending || done === 0) return false;
  return p.n > 0 || cancelled === 0;
}

/** Simple numbered pager: calls onPage(page) on click. */
export function renderPager(el, { page, pages, total, label = "rows", onPage }) {
  clear(el);
  if (pages <= 1) {
    el.append(h("span", { class: "muted" }, `${num(total)} ${label}`));
    return;
  }
  el.append(
    h("button", { type: "button", disabled: page <= 0, onclick: () => onPage(page - 1), "aria-label": "Previous page" }, "‹ Prev"),
    h("span", { class: "muted page-info" }, `page ${page + 1} of ${pages} · ${num(total)} ${label}`),
    h("button", { type: "button", disabled: page >= pages - 1, onclick: () => onPage(page + 1), "aria-label": "Next page" }, "Next ›"),
  );
}

/** Run `fn` over items with at most `limit` in flight. */
export async function eachLimited(items, limit, fn) {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++];
      try { await fn(item); } catch (error) { console.warn(error); }
    }
  });
  await Promise.all(workers);
}

const logout = document.getElementById("logout");
if (logout) {
  logout.addEventListener("click", async () => {
    try { await api("/v1/session", { method: "DELETE" }); } finally { window.location.assign("/login"); }
  });
}

/** CSV text (RFC 4180 quoting) from objects, with the given columns in order. */
export function toCsv(rows, columns) {
  const cell = (v) => {
    const text = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [columns.join(","), ...rows.map((r) => columns.map((c) => cell(r[c])).join(","))].join("\n") + "\n";
}

/** A button that downloads what `make()` returns or resolves to ({name, type, text}) as a file, built in the page. */
export function downloadButton(label, make, attrs = {}) {
  return h("button", {
    type: "button", class: "download", ...attrs,
    onclick: async () => {
      const file = await make(); // may fetch first (a Promise)
      if (!file) return;
      const url = URL.createObjectURL(new Blob([file.text], { type: file.type }));
      const link = h("a", { href: url, download: file.name, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  }, label);
}

/** "temperature=0.8 · top_p=0.95": a run's sampling settings, the usual keys first. */
export function samplingText(sampling) {
  const order = ["temperature", "top_p", "max_tokens", "seed"];
  const rank = (key) => (order.includes(key) ? order.indexOf(key) : order.length);
  return Object.entries(sampling || {}).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ");
}
