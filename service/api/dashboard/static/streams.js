// Streams page: the project's /run_code and /v1/judge calls by stream (GET /v1/streams), and one stream over
// a window (GET /v1/streams/{name}): calls by verdict, latency percentiles and reward-hack flags per bucket.
import { api, boot, clear, errorText, h, num, pct, VERDICTS, VERDICT_COLORS, when } from "./common.js";
import { s, stackedBar } from "./charts.js";

const data = boot();
const result = document.getElementById("streams-result");
const P50 = "#4c78a8", P95 = "#f58518", HACK = "#d1495b";

const ms = (v) => (v === null || v === undefined ? "–" : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);
const passShare = (v) => {
  const done = VERDICTS.reduce((sum, k) => sum + (v[k] || 0), 0) - (v.sandbox_error || 0);
  return done ? v.passed / done : null;
};

function verdictParts(v) {
  return [...VERDICTS.map((k) => ({ key: k, label: k.replace("_", " "), count: v[k] || 0, color: VERDICT_COLORS[k] })),
    { key: "pending", label: "pending", count: v.pending || 0, color: "#c9ced6" }];
}

function listTable(items) {
  const head = h("tr", {}, h("th", {}, "Stream"), h("th", { class: "num" }, "Calls"), h("th", { class: "num" }, "Passed"),
    h("th", { class: "num" }, "Last hour"), h("th", { class: "num" }, "Reward hacks"));
  const rows = items.map((st) => h("tr", { dataset: { stream: st.name } },
    h("td", {}, h("a", { href: `/streams?name=${encodeURIComponent(st.name)}` }, st.name), h("br"),
      h("span", { class: "muted small" }, `last call ${when(st.last_call_at)}`),
      st.pruned_calls ? h("span", { class: "muted small" }, ` · ${num(st.pruned_calls)} pruned`) : null),
    h("td", { class: "num" }, num(st.calls)),
    h("td", { class: "num" }, h("strong", {}, pct(passShare(st.verdicts)))),
    h("td", { class: "num" }, num(st.calls_last_hour), h("br"),
      h("span", { class: "muted small" }, `p50 ${ms(st.last_hour.p50_ms)} · p95 ${ms(st.last_hour.p95_ms)}`)),
    h("td", { class: "num" + (st.reward_hacks ? " hacks" : "") }, num(st.reward_hacks))));
  return h("div", { class: "table-scroll" }, h("table", { class: "data", id: "streams-table" }, h("thead", {}, head), h("tbody", {}, rows)));
}

/** Time axis of a chart: the window's start and end, and a label at each quarter. */
function frame(body, W, H, m, yMax, yText, label, id) {
  const t0 = Date.parse(body.since), t1 = Date.parse(body.until);
  const x = (t) => m.l + ((t - t0) / (t1 - t0)) * (W - m.l - m.r);
  const y = (v) => m.t + (1 - v / yMax) * (H - m.t - m.b);
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img", id, "aria-label": label });
  const grid = s("g", { class: "grid" });
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    grid.append(s("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }));
    grid.append(s("text", { x: m.l - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, yText(v)));
  }
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    const text = new Date(t).toISOString().slice(11, 16);
    grid.append(s("text", { x: x(t), y: H - m.b + 16, class: "tick", "text-anchor": i === 0 ? "start" : i === 4 ? "end" : "middle" }, text));
  }
  grid.append(s("text", { x: m.l, y: 12, class: "axis-label" }, label));
  svg.append(grid);
  return { svg, x, y, width: ((body.bucket_s * 1000) / (t1 - t0)) * (W - m.l - m.r) };
}

function callsChart(body, W) {
  const H = 220, m = { l: 48, r: 12, t: 22, b: 26 };
  const top = Math.max(1, ...body.buckets.map((b) => b.calls));
  const { svg, x, y, width } = frame(body, W, H, m, top, (v) => num(Math.round(v)), "calls by verdict, per bucket", "streams-calls");
  for (const b of body.buckets) {
    let base = 0;
    const left = x(Date.parse(b.start)), bar = Math.max(1, width - 1);
    for (const part of verdictParts(b.verdicts)) {
      if (!part.count) continue;
      svg.append(s("rect", { x: left.toFixed(1), width: bar.toFixed(1), y: y(base + part.count).toFixed(1),
        height: (y(base) - y(base + part.count)).toFixed(1), fill: part.color, class: `bucket v-${part.key}` },
      s("title", {}, `${b.start.slice(11, 19)}: ${num(part.count)} ${part.label}`)));
      base += part.count;
    }
    if (b.reward_hacks) {
      svg.append(s("circle", { cx: (left + bar / 2).toFixed(1), cy: (y(base) - 6).toFixed(1), r: 3.5, fill: HACK, class: "hack" },
        s("title", {}, `${num(b.reward_hacks)} reward hack(s)`)));
    }
  }
  return svg;
}

function latencyChart(body, W) {
  const H = 200, m = { l: 56, r: 12, t: 22, b: 26 };
  const top = Math.max(1, ...body.buckets.map((b) => b.latency.p95_ms || 0));
  const { svg, x, y, width } = frame(body, W, H, m, top, ms, "latency per bucket: p50 (blue), p95 (orange)", "streams-latency");
  for (const [key, color] of [["p50_ms", P50], ["p95_ms", P95]]) {
    const points = body.buckets.filter((b) => b.latency[key] !== null)
      .map((b) => [x(Date.parse(b.start)) + width / 2, y(b.latency[key])]);
    if (!points.length) continue;
    svg.append(s("path", { d: points.map(([px, py], i) => `${i ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join(""),
      fill: "none", stroke: color, "stroke-width": 1.6, class: `latency ${key}` }));
    for (const [px, py] of points) svg.append(s("circle", { cx: px.toFixed(1), cy: py.toFixed(1), r: 2.2, fill: color }));
  }
  return svg;
}

function figures(body) {
  const stat = (label, value, id) => h("div", { class: "stat" }, h("div", { class: "label" }, label), h("div", { class: "value", id }, value));
  return h("div", { class: "stats" },
    stat("Calls", num(body.calls), "stream-calls"),
    stat("Calls / s", body.calls_per_s.toFixed(2), "stream-rate"),
    stat("Passed", pct(passShare(body.verdicts)), "stream-passed"),
    stat("Latency p50 · p95", `${ms(body.latency.p50_ms)} · ${ms(body.latency.p95_ms)}`, "stream-latency"),
    stat("Reward hacks", num(body.reward_hacks), "stream-hacks"));
}

async function showStream(name, window) {
  const body = await api(`/v1/streams/${encodeURIComponent(name)}`, { params: { window_s: window, buckets: 60 } });
  document.getElementById("streams-title").textContent = `Stream ${name}`;
  const W = Math.round(Math.min(960, Math.max(320, result.clientWidth || 320)));
  const mix = h("div", { id: "stream-verdicts" });
  const runs = h("a", { href: `/?stream=${encodeURIComponent(name)}`, id: "stream-runs" }, "its calls in the runs list");
  clear(result, figures(body), h("section", { class: "card" }, h("h2", {}, "Verdicts"), mix),
    h("section", { class: "card" }, callsChart(body, W)), h("section", { class: "card" }, latencyChart(body, W)),
    h("p", { class: "muted small" }, `Buckets of ${num(Math.round(body.bucket_s))} s; `, runs, "."));
  stackedBar(mix, verdictParts(body.verdicts), body.calls);
}

async function render() {
  const select = document.getElementById("streams-name");
  document.getElementById("streams-window").value = data.window;
  try {
    const list = await api("/v1/streams");
    for (const st of list.items) select.append(h("option", { value: st.name, selected: st.name === data.stream }, st.name));
    if (data.stream) {
      await showStream(data.stream, data.window);
    } else if (!list.items.length) {
      clear(result, h("p", { class: "muted", id: "streams-empty" }, "No /run_code or /v1/judge call yet."));
    } else {
      clear(result, listTable(list.items));
    }
  } catch (error) {
    clear(result, h("p", { class: "error" }, errorText(error)));
  }
}

render();
