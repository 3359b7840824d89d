// Charts drawn as inline SVG: no library, nothing fetched from elsewhere.
import { clear, h, num, pct } from "./common.js";

const SVG = "http://www.w3.org/2000/svg";

export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) el.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** 1, 2, 5, 10, 20, 50, ... : the smallest such step >= raw (at least 1). */
function niceStep(raw) {
  let step = 1;
  while (step < raw) {
    const decade = step;
    if (decade * 2 >= raw) return decade * 2;
    if (decade * 5 >= raw) return decade * 5;
    step = decade * 10;
  }
  return step;
}

const fmt = (x) => (Math.round(x * 10) / 10).toString();

function logTicks(max) {
  const ticks = [];
  for (let decade = 1; decade <= max; decade *= 10) {
    for (const m of [1, 2, 5]) if (decade * m <= max) ticks.push(decade * m);
  }
  if (ticks[ticks.length - 1] !== max) {
    // Drop a tick crowding the last one before adding max itself.
    if (ticks.length && Math.log(max / ticks[ticks.length - 1]) < 0.25) ticks.pop();
    ticks.push(max);
  }
  return ticks;
}

function linearTicks(max) {
  const step = max <= 10 ? 1 : max <= 20 ? 2 : max <= 50 ? 5 : 10;
  const ticks = [];
  for (let x = 1; x <= max; x += x === 1 && step > 1 ? step - 1 : step) ticks.push(x);
  if (ticks[ticks.length - 1] !== max) ticks.push(max);
  return ticks;
}

/** The k where a curve's band is computed: every k up to 10, then ~15 log-spaced k up to nMin (<= 25). */
export function kGrid(nMin) {
  const ks = new Set();
  for (let k = 1; k <= Math.min(10, nMin); k++) ks.add(k);
  if (nMin > 10) {
    const steps = 15;
    for (let i = 1; i <= steps; i++) ks.add(Math.round(Math.exp(Math.log(10) + (i / steps) * Math.log(nMin / 10))));
  }
  ks.add(nMin);
  return [...ks].filter((k) => k >= 1 && k <= nMin).sort((a, b) => a - b);
}

/**
 * The points a series draws: where it has an interval, exactly those k (estimate and bounds from the same
 * computation), so the straight segments of the curve and of its band join the same points and the
 * drawn estimate lies inside the drawn band at every x; a series without a band draws every k it has.
 */
export function drawnPoints(line) {
  const band = line.band || [];
  if (band.length) return band.map((b) => ({ k: b.k, v: b.est ?? line.values[b.k - 1], lo: b.lo, hi: b.hi }));
  return line.values.map((v, i) => ({ k: i + 1, v })).filter((p) => p.v !== undefined && p.v !== null);
}

/**
 * Curves over k = 1..kmax with an interval band.
 * series: [{key, label, color, values: number[] (index k-1), band: [{k, lo, hi, est}] (sorted by k)}]
 * A series with a band is drawn only at its band's k (drawnPoints); the legend is a list under the plot.
 */
export function curveChart(container, { kmax, series, title, yLabel = "share of problems (mean over problems)" }) {
  const W = 640, H = 360, m = { l: 66, r: 16, t: 14, b: 44 };
  const iw = W - m.l - m.r, ih = H - m.t - m.b;
  const useLog = kmax > 12;
  const x = useLog
    ? (k) => m.l + (kmax === 1 ? 0 : (Math.log(k) / Math.log(kmax)) * iw)
    : (k) => m.l + (kmax === 1 ? iw / 2 : ((k - 1) / (kmax - 1)) * iw);
  const y = (v) => m.t + (1 - v) * ih;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg curve", role: "img", "aria-label": title || "pass@k curves" });

  const grid = s("g", { class: "grid" });
  for (let v = 0; v <= 1.0001; v += 0.2) {
    grid.append(s("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }));
    grid.append(s("text", { x: m.l - 8, y: y(v) + 4, class: "tick", "text-anchor": "end" }, `${Math.round(v * 100)}%`));
  }
  for (const k of useLog ? logTicks(kmax) : linearTicks(kmax)) {
    grid.append(s("line", { x1: x(k), x2: x(k), y1: m.t, y2: H - m.b, class: "v" }));
    grid.append(s("text", { x: x(k), y: H - m.b + 16, class: "tick", "text-anchor": "middle" }, k));
  }
  grid.append(s("text", { x: m.l + iw / 2, y: H - 6, class: "axis-label", "text-anchor": "middle" }, useLog ? "k (log scale)" : "k"));
  grid.append(s("text", { x: -(m.t + ih / 2), y: 14, class: "axis-label y-title", "text-anchor": "middle", transform: "rotate(-90)" }, yLabel));
  svg.append(grid);

  const drawn = series.map(drawnPoints);
  series.forEach((line, i) => {
    const band = drawn[i].filter((p) => p.lo !== undefined);
    if (band.length > 1) {
      const top = band.map((p) => `${x(p.k).toFixed(1)},${y(p.hi).toFixed(1)}`);
      const bottom = band.slice().reverse().map((p) => `${x(p.k).toFixed(1)},${y(p.lo).toFixed(1)}`);
      svg.append(s("polygon", { points: top.concat(bottom).join(" "), fill: line.color, "fill-opacity": 0.16, class: "band", "data-series": line.key }));
    }
  });
  series.forEach((line, i) => {
    let d = "";
    drawn[i].forEach((p, j) => { d += `${j ? "L" : "M"}${x(p.k).toFixed(1)},${y(p.v).toFixed(1)}`; });
    svg.append(s("path", { d, fill: "none", stroke: line.color, "stroke-width": 2.2, class: "curve-line", "data-series": line.key }));
    for (const p of drawn[i]) {
      if (p.lo === undefined) continue;
      svg.append(s("line", { x1: x(p.k), x2: x(p.k), y1: y(p.lo), y2: y(p.hi), stroke: line.color, "stroke-width": 1.2, "stroke-opacity": 0.7, class: "band-tick", "data-series": line.key }));
      svg.append(s("circle", { cx: x(p.k), cy: y(p.v), r: 2.6, fill: line.color, class: "grid-point", "data-series": line.key }));
    }
  });

  // Hover readout: the nearest k where some series has a point; each series' own point there, if any.
  const cursor = s("line", { class: "cursor", y1: m.t, y2: H - m.b, visibility: "hidden" });
  const dots = series.map((line) => s("circle", { r: 4, fill: "#fff", stroke: line.color, "stroke-width": 2, visibility: "hidden", class: "hover-dot" }));
  svg.append(cursor, ...dots);
  const overlay = s("rect", { x: m.l, y: m.t, width: iw, height: ih, fill: "transparent" });
  svg.append(overlay);
  const tip = h("div", { class: "tooltip", hidden: true });
  const byK = drawn.map((points) => new Map(points.map((p) => [p.k, p])));
  const hoverKs = [...new Set(drawn.flat().map((p) => p.k))].sort((a, b) => a - b);
  overlay.addEventListener("mousemove", (event) => {
    const box = svg.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * W;
    const k = hoverKs.reduce((best, c) => (Math.abs(x(c) - px) < Math.abs(x(best) - px) ? c : best), hoverKs[0]);
    if (k === undefined) return;
    cursor.setAttribute("x1", x(k)); cursor.setAttribute("x2", x(k)); cursor.setAttribute("visibility", "visible");
    const rows = [h("div", { class: "tip-title" }, `k = ${k}`)];
    series.forEach((line, i) => {
      const p = byK[i].get(k);
      if (!p) { dots[i].setAttribute("visibility", "hidden"); return; } // nothing computed for this run at k
      dots[i].setAttribute("cx", x(k)); dots[i].setAttribute("cy", y(p.v)); dots[i].setAttribute("visibility", "visible");
      rows.push(h("div", {}, h("span", { class: "swatch", style: { background: line.color } }), `${line.label}: ${pct(p.v)}`,
        p.lo !== undefined ? h("span", { class: "muted" }, ` [${pct(p.lo)}, ${pct(p.hi)}]`) : null));
    });
    clear(tip, rows);
    tip.hidden = false;
    const left = ((x(k) / W) * box.width);
    tip.style.left = `${Math.max(0, Math.min(left + 12, box.width - 190))}px`;
    tip.style.top = `${(m.t / H) * box.height + 28}px`;
  });
  overlay.addEventListener("mouseleave", () => {
    tip.hidden = true;
    cursor.setAttribute("visibility", "hidden");
    dots.forEach((dot) => dot.setAttribute("visibility", "hidden"));
  });
  // The legend under the plot, never over the curves; a long name wraps.
  const legend = h("ul", { class: "legend chart-legend" }, series.map((line) =>
    h("li", { dataset: { series: line.key }, title: line.label },
      h("span", { class: "swatch", style: { background: line.color } }), line.label)));
  clear(container, h("div", { class: "chart-wrap" }, svg, tip), legend);
}

/** Vertical bars with counts: bins = [{label, count, color, title}] */
export function barChart(container, { bins, xLabel, yLabel }) {
  const W = 540, H = 238, m = { l: 40, r: 8, t: 34, b: 42 };
  const iw = W - m.l - m.r, ih = H - m.t - m.b;
  const max = Math.max(1, ...bins.map((b) => b.count));
  const bw = iw / bins.length;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg bars", role: "img", "aria-label": xLabel || "histogram" });
  const grid = s("g", { class: "grid" });
  const step = niceStep(max / 4);
  for (let v = 0; v <= max; v += step) {
    const yy = m.t + ih - (v / max) * ih;
    grid.append(s("line", { x1: m.l, x2: W - m.r, y1: yy, y2: yy }));
    grid.append(s("text", { x: m.l - 6, y: yy + 4, class: "tick", "text-anchor": "end" }, num(v)));
  }
  svg.append(grid);
  bins.forEach((bin, i) => {
    const bh = (bin.count / max) * ih;
    const bx = m.l + i * bw + 2;
    const bar = s("rect", { x: bx, y: m.t + ih - bh, width: Math.max(bw - 4, 1), height: Math.max(bh, 0), fill: bin.color || "#4c78a8", rx: 2, class: "bar" },
      s("title", {}, `${bin.title || bin.label}: ${num(bin.count)}`));
    svg.append(bar);
    if (bin.count) svg.append(s("text", { x: bx + (bw - 4) / 2, y: m.t + ih - bh - 4, class: "bar-label", "text-anchor": "middle" }, num(bin.count)));
    svg.append(s("text", { x: bx + (bw - 4) / 2, y: H - m.b + 14, class: "tick small-tick", "text-anchor": "middle" }, bin.label));
  });
  if (xLabel) svg.append(s("text", { x: m.l + iw / 2, y: H - 6, class: "axis-label", "text-anchor": "middle" }, xLabel));
  if (yLabel) svg.append(s("text", { x: 4, y: 12, class: "axis-label" }, yLabel));
  clear(container, svg);
}

/** Horizontal stacked bar + legend with counts, for verdicts. parts = [{key, label, count, color}] */
export function stackedBar(container, parts, total) {
  const sum = Math.max(total || parts.reduce((a, p) => a + p.count, 0), 1);
  const bar = h("div", { class: "stacked" },
    parts.filter((p) => p.count > 0).map((p) =>
      h("span", { class: `seg v-${p.key}`, style: { width: `${(100 * p.count) / sum}%`, background: p.color }, title: `${p.label}: ${num(p.count)}` })));
  const legend = h("table", { class: "legend-table" },
    h("tbody", {}, parts.map((p) =>
      h("tr", { class: p.count ? "" : "zero", dataset: { verdict: p.key } },
        h("td", {}, h("span", { class: "swatch", style: { background: p.color } }), p.label),
        h("td", { class: "num verdict-count" }, num(p.count)),
        h("td", { class: "num muted" }, pct(p.count / sum))))));
  clear(container, bar, legend);
}

/** Differences with intervals per k, around a zero line. rows = [{label, estimate, lo, hi}] */
export function forestPlot(container, rows) {
  const W = 960, rowH = 30, m = { l: 80, r: 30, t: 10, b: 36 };
  const H = m.t + m.b + rows.length * rowH;
  const iw = W - m.l - m.r;
  const extent = Math.max(0.05, ...rows.flatMap((r) => [Math.abs(r.lo), Math.abs(r.hi)]));
  const x = (v) => m.l + ((v + extent) / (2 * extent)) * iw;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg forest", role: "img", "aria-label": "paired differences" });
  const grid = s("g", { class: "grid" });
  for (const t of [-extent, -extent / 2, 0, extent / 2, extent]) {
    grid.append(s("line", { x1: x(t), x2: x(t), y1: m.t, y2: H - m.b, class: t === 0 ? "zero" : "v" }));
    const sign = t > 0 ? "+" : t < 0 ? "−" : "±";
    grid.append(s("text", { x: x(t), y: H - m.b + 15, class: "tick", "text-anchor": "middle" }, `${sign}${fmt(Math.abs(t) * 100)} pp`));
  }
  grid.append(s("text", { x: m.l + iw / 2, y: H - 4, class: "axis-label", "text-anchor": "middle" }, "candidate − base (percentage points)"));
  svg.append(grid);
  rows.forEach((r, i) => {
    const cy = m.t + i * rowH + rowH / 2;
    const color = r.lo > 0 ? "#2e9d5b" : r.hi < 0 ? "#d1495b" : "#4c78a8";
    svg.append(s("text", { x: m.l - 10, y: cy + 4, class: "tick", "text-anchor": "end" }, r.label));
    svg.append(s("line", { x1: x(r.lo), x2: x(r.hi), y1: cy, y2: cy, stroke: color, "stroke-width": 3, "stroke-linecap": "round" }));
    svg.append(s("circle", { cx: x(r.estimate), cy, r: 5, fill: color }));
  });
  clear(container, svg);
}

/**
 * A square plot of two shares in [0, 1]: percent ticks every 25 %, the diagonal and both axis labels.
 * Returns the svg and the scales; vertical grid lines only where asked.
 */
export function unitSquare({ cls, ariaLabel, xLabel, yLabel, verticals = false }) {
  const W = 360, H = 340, m = { l: 46, r: 12, t: 12, b: 42 };
  const iw = W - m.l - m.r, ih = H - m.t - m.b;
  const x = (v) => m.l + v * iw;
  const y = (v) => m.t + (1 - v) * ih;
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, class: `chart-svg ${cls}`, role: "img", "aria-label": ariaLabel });
  const grid = s("g", { class: "grid" });
  for (let v = 0; v <= 1.0001; v += 0.25) {
    grid.append(s("line", { x1: m.l, x2: W - m.r, y1: y(v), y2: y(v) }));
    if (verticals) grid.append(s("line", { x1: x(v), x2: x(v), y1: m.t, y2: H - m.b, class: "v" }));
    grid.append(s("text", { x: m.l - 6, y: y(v) + 4, class: "tick", "text-anchor": "end" }, `${Math.round(v * 100)}%`));
    grid.append(s("text", { x: x(v), y: H - m.b + 15, class: "tick", "text-anchor": "middle" }, `${Math.round(v * 100)}%`));
  }
  grid.append(s("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: "diagonal" }));
  grid.append(s("text", { x: m.l + iw / 2, y: H - 6, class: "axis-label", "text-anchor": "middle" }, xLabel));
  grid.append(s("text", { x: 12, y: m.t + ih / 2, class: "axis-label", "text-anchor": "middle", transform: `rotate(-90 12 ${m.t + ih / 2})` }, yLabel));
  svg.append(grid);
  return { svg, x, y };
}

/** Per-problem base vs candidate: points = [{x, y, cls, title}] in [0, 1]. */
export function scatterPlot(container, points, { xLabel, yLabel }) {
  const { svg, x, y } = unitSquare({ cls: "scatter", ariaLabel: "per-problem scatter", xLabel, yLabel, verticals: true });
  // Problems at the same point (common: pass rates live on a c/n grid) share one dot, sized by count.
  const groups = new Map();
  for (const p of points) {
    const key = `${p.x.toFixed(6)},${p.y.toFixed(6)}`;
    if (!groups.has(key)) groups.set(key, { ...p, titles: [] });
    groups.get(key).titles.push(p.title);
  }
  const dots = s("g", { class: "dots" });
  for (const g of groups.values()) {
    const count = g.titles.length;
    const r = 3.5 + 2.2 * Math.sqrt(count - 1);
    const title = count > 1 ? `${count} problems:\n${g.titles.slice(0, 12).join("\n")}${count > 12 ? "\n…" : ""}` : g.titles[0];
    dots.append(s("circle", { cx: x(g.x).toFixed(1), cy: y(g.y).toFixed(1), r: r.toFixed(1), class: `dot ${g.cls}`, "data-count": count }, s("title", {}, title)));
    if (count > 1) dots.append(s("text", { x: x(g.x).toFixed(1), y: (y(g.y) + 3.5).toFixed(1), class: "dot-count", "text-anchor": "middle" }, count));
  }
  svg.append(dots);
  const legend = h("div", { class: "scatter-legend small muted" },
    [["win", "candidate better"], ["loss", "candidate worse"], ["tie", "tie"]].map(([cls, label]) =>
      h("span", {}, h("span", { class: `legend-dot ${cls}` }), label)),
    h("span", {}, "· a bigger dot (with its count) is several problems at the same point"));
  clear(container, svg, legend);
}
