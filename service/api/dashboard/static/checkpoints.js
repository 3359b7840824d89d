// Checkpoints page: one model's pass@k by training step, from GET /v1/checkpoints. Each point carries its own
// interval, drawn at that step only (nothing is drawn between steps, where no interval was computed); a triangle
// marks a checkpoint significantly better (up) or worse (down) than the one before it, as the compare page tests.
import { api, boot, bracket, clear, errorText, h, hasBounds, num, pct } from "./common.js";
import { s } from "./charts.js";

const data = boot();
const result = document.getElementById("checkpoints-result");
const BETTER = "#2e9d5b", WORSE = "#d1495b", LINE = "#4c78a8";

function fillForm() {
  const select = document.getElementById("checkpoints-dataset");
  for (const d of data.datasets || []) {
    select.append(h("option", { value: d.id, selected: d.id === data.dataset }, `${d.name} (${num(d.problems)})`));
  }
  const models = document.getElementById("checkpoints-models");
  for (const m of data.models || []) models.append(h("option", { value: m }));
}

/** Round steps for the axis: about five ticks at 1, 2 or 5 times a power of ten. */
function stepTicks(lo, hi, count) {
  if (hi === lo) return [lo];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const unit = [1, 2, 5, 10].map((m) => m * power).find((u) => u >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / unit) * unit; t <= hi; t += unit) ticks.push(t);
  return ticks;
}

const stepText = (v) => (Math.abs(v) >= 10000 ? `${Number((v / 1000).toFixed(1))}k` : num(v));

function changeText(change) {
  if (!change) return "first checkpoint";
  const d = change.difference;
  const bounds = hasBounds(d) ? ` [${(100 * d.ci_low).toFixed(2)}, ${(100 * d.ci_high).toFixed(2)}]` : "";
  return `${(100 * d.estimate).toFixed(2)} pp${bounds} vs previous over ${num(change.problems)} shared problems, p = ${change.p_value.toPrecision(2)}`;
}

function chart(body, available) {
  // Drawn at the width it is shown at, so its text stays legible from a phone to a wide screen.
  const W = Math.round(Math.min(960, Math.max(320, available))), H = W < 560 ? 260 : 340;
  const m = { l: 62, r: 16, t: 24, b: 46 };
  const iw = W - m.l - m.r, ih = H - m.t - m.b;
  const points = body.points;
  const steps = points.map((p) => p.step);
  const lo = Math.min(...steps), hi = Math.max(...steps);
  const x = (step) => m.l + (hi === lo ? iw / 2 : ((step - lo) / (hi - lo)) * iw);
  const y = (v) => m.t + (1 - v) * ih;
  // Each band as wide as the gap to its nearest neighbour allows, never wider than 14 px.
  const gaps = steps.slice(1).map((st, i) => x(st) - x(steps[i])).filter((g) => g > 0);
  const width = Math.max(3, Math.min(14, 0.6 * Math.min(...gaps, Infinity)));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg checkpoints", role: "img", id: "checkpoints-chart",
    "aria-label": `pass@${body.k} of ${body.model} by training step` });
  const grid = s("g", { class: "grid" });
  for (let v = 0; v <= 1.0001; v += 0.2) {
    grid.append(s("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }));
    grid.append(s("text", { x: m.l - 8, y: y(v) + 4, class: "tick", "text-anchor": "end" }, `${Math.round(v * 100)}%`));
  }
  for (const t of stepTicks(lo, hi, W < 560 ? 3 : 5)) {
    grid.append(s("line", { x1: x(t), x2: x(t), y1: m.t, y2: H - m.b, class: "v" }));
    grid.append(s("text", { x: x(t), y: H - m.b + 16, class: "tick", "text-anchor": "middle" }, stepText(t)));
  }
  grid.append(s("text", { x: m.l + iw / 2, y: H - 8, class: "axis-label", "text-anchor": "middle" }, "training step"));
  grid.append(s("text", { x: -(m.t + ih / 2), y: 13, class: "axis-label", "text-anchor": "middle", transform: "rotate(-90)" }, `pass@${body.k}`));
  svg.append(grid);

  // The estimates joined in step order: a guide for the eye; the intervals are the bands at each step.
  const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.step).toFixed(1)},${y(p.pass_at_k.estimate).toFixed(1)}`).join("");
  svg.append(s("path", { d, fill: "none", stroke: LINE, "stroke-width": 1.4, "stroke-dasharray": "4 3", class: "trend" }));
  for (const p of points) {
    const m_ = p.pass_at_k, cx = x(p.step);
    const title = `step ${num(p.step)}${p.checkpoint ? ` · ${p.checkpoint}` : ""}: ${pct(m_.estimate, 2)}`
      + (hasBounds(m_) ? ` [${pct(m_.ci_low, 2)}, ${pct(m_.ci_high, 2)}] ${m_.label}` : " (no interval)") + `\n${changeText(p.vs_previous)}`;
    if (hasBounds(m_)) {
      svg.append(s("rect", { x: (cx - width / 2).toFixed(2), width: width.toFixed(2), y: y(m_.ci_high).toFixed(2),
        height: Math.max(0, y(m_.ci_low) - y(m_.ci_high)).toFixed(2), rx: 2, fill: LINE, "fill-opacity": 0.22, stroke: LINE,
        "stroke-opacity": 0.5, class: "band", "data-run-id": p.run_id, "data-ci-low": m_.ci_low, "data-ci-high": m_.ci_high }));
    }
    svg.append(s("circle", { cx: cx.toFixed(2), cy: y(m_.estimate).toFixed(2), r: 4, fill: LINE, class: "estimate",
      "data-run-id": p.run_id, "data-estimate": m_.estimate }, s("title", {}, title)));
    const change = p.vs_previous;
    if (change && change.significant && change.direction !== "equal") {
      const up = change.direction === "better";
      const edge = up ? y(hasBounds(m_) ? m_.ci_high : m_.estimate) - 6 : y(hasBounds(m_) ? m_.ci_low : m_.estimate) + 6;
      const tip = up ? `M${cx - 6},${edge} L${cx + 6},${edge} L${cx},${edge - 10} Z` : `M${cx - 6},${edge} L${cx + 6},${edge} L${cx},${edge + 10} Z`;
      svg.append(s("path", { d: tip, fill: up ? BETTER : WORSE, class: `mark ${change.direction}`, "data-run-id": p.run_id },
        s("title", {}, `significantly ${change.direction} than the checkpoint before it: ${changeText(change)}`)));
    }
  }
  return svg;
}

function table(body) {
  // Three columns, so the figures fit a phone's width: the checkpoint, its pass@k, and its change.
  const head = h("tr", {}, h("th", {}, "Checkpoint"), h("th", { class: "num" }, `pass@${body.k}`),
    h("th", { class: "num" }, "vs previous (paired)"));
  const rows = body.points.map((p) => {
    const c = p.vs_previous;
    const mark = c && c.significant && c.direction !== "equal"
      ? h("span", { class: `change ${c.direction}` }, c.direction === "better" ? "▲ better" : "▼ worse") : null;
    const change = c
      ? [h("strong", {}, `${c.difference.estimate > 0 ? "+" : ""}${(100 * c.difference.estimate).toFixed(2)} pp`), mark ? " " : null, mark, h("br"),
        h("span", { class: "muted small" }, hasBounds(c.difference)
          ? `[${(100 * c.difference.ci_low).toFixed(2)}, ${(100 * c.difference.ci_high).toFixed(2)}]` : "no interval"), h("br"),
        h("span", { class: "muted small", title: `Holm-adjusted over the series: ${c.p_value_adjusted.toPrecision(2)}` },
          `p = ${c.p_value.toPrecision(2)} · ${num(c.problems)} shared`)]
      : h("span", { class: "muted" }, "–");
    return h("tr", { dataset: { runId: p.run_id, step: p.step } },
      h("td", {}, h("a", { href: `/runs/${p.run_id}` }, p.checkpoint || p.run_id.slice(0, 8)), h("br"),
        h("span", { class: "muted small" }, `step ${num(p.step)}`), p.partial ? h("span", { class: "muted small" }, " · partial") : null),
      h("td", { class: "num" }, h("strong", {}, pct(p.pass_at_k.estimate, 2)), h("br"), bracket(p.pass_at_k)),
      h("td", { class: "num" }, change));
  });
  return h("div", { class: "table-scroll" }, h("table", { class: "data", id: "checkpoints-table" }, h("thead", {}, head), h("tbody", {}, rows)));
}

async function render() {
  fillForm();
  if (!data.dataset) return;
  clear(result, h("p", { class: "muted" }, "Computing…"));
  let body;
  try {
    body = await api("/v1/checkpoints", { params: { dataset: data.dataset, model: data.model, k: data.k || "1" } });
  } catch (error) {
    clear(result, h("p", { class: "error", role: "alert", id: "checkpoints-error" }, errorText(error)));
    return;
  }
  const level = Math.round(100 * (1 - body.confidence));
  const legend = h("p", { class: "muted small", id: "checkpoints-legend" },
    `Each step's band is that checkpoint's own ${Math.round(100 * body.confidence)} % interval (as on its run page); the dashed line only joins the estimates. `,
    h("span", { class: "change better" }, "▲"), " / ", h("span", { class: "change worse" }, "▼"),
    ` a checkpoint significantly better / worse than the one before it (p < ${level / 100}, paired over the problems both finished, as the compare page tests): `,
    `${body.significant_changes} of ${Math.max(0, body.points.length - 1)} steps.`);
  const pending = body.pending.length
    ? h("p", { class: "muted small", id: "checkpoints-pending" }, "Not plotted yet: ",
      body.pending.map((p) => `step ${num(p.step)}${p.checkpoint ? ` (${p.checkpoint})` : ""}, ${p.status}`).join("; "))
    : null;
  clear(result,
    h("section", { class: "card" },
      h("div", { class: "table-head" }, h("h2", { id: "checkpoints-title" }, `${body.model} on ${body.dataset_name}`),
        h("span", { class: "muted small" }, `pass@${body.k}, ${num(body.points.length)} checkpoints`)),
      body.points.length ? h("div", { class: "chart-wrap" }, chart(body, result.clientWidth - 34)) : h("p", { class: "muted" }, "No checkpoint has a finished problem yet."),
      legend, pending),
    body.points.length ? h("section", { class: "card" }, table(body)) : null,
    ...body.warnings.map((w) => h("p", { class: "muted small warning" }, w)));
}

render();
