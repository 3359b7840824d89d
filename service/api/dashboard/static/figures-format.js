// Number formats shared by the run page's figure panels and the compare page's ship-or-not panel.
/** Significant digits without trailing zeros after the point: 0.0146, 1440, 0.25. */
export function fmt(x, digits = 4) {
  if (x === null || x === undefined) return "–";
  const text = Number(x).toPrecision(digits);
  if (text.includes("e") || !text.includes(".")) return text;
  return text.replace(/0+$/, "").replace(/\.$/, "");
}
export const ms = (x) => (x === null || x === undefined ? "–" : x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(0)} ms`);
/** "0.0146 [0.0131, 0.0162]", with "∞" where a bound is unbounded. */
export function figureText(f, show = fmt) {
  if (!f || f.estimate === null || f.estimate === undefined) return "–";
  const hi = f.ci_high === null ? "∞" : show(f.ci_high);
  const lo = f.ci_low === null ? "–" : show(f.ci_low);
  return `${show(f.estimate)} [${lo}, ${hi}]`;
}
