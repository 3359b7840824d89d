// Languages page: one model's runs in several languages side by side, from GET /v1/languages/compare:
// per language its toolchain, problems and pass@k with labelled intervals, then the micro and macro rows.
import { api, boot, bracket, clear, errorText, h, num, pct } from "./common.js";

const data = boot();
const result = document.getElementById("languages-result");

function cells(points) {
  return points.map((p) => h("td", { class: "num" }, h("strong", {}, pct(p.pass_at_k.estimate)), h("br"), bracket(p.pass_at_k)));
}

/** Which problems the averages resample together: the same problem in several languages is one unit. */
function pairing(p) {
  if (!p) return null;
  if (!p.joint) return h("p", { class: "muted small", id: "languages-pairing" }, "No problem matches across the languages: each language is resampled on its own.");
  const unmatched = Object.entries(p.unmatched).map(([language, ids]) => `${language}: ${ids.length}`).join(", ");
  return h("details", { class: "muted small", id: "languages-pairing" },
    h("summary", {}, `The averages resample ${num(p.paired.length)} shared problems together in every language (${num(p.units)} units)${unmatched ? `; unmatched ${unmatched}` : ""}`),
    h("p", {}, `Matched by ${p.rule}.`), h("p", { class: "mono" }, p.paired.join(", ")));
}

async function render() {
  if (!data.runs) return;
  clear(result, h("p", { class: "muted" }, "Computing…"));
  let body;
  try {
    body = await api("/v1/languages/compare", { params: { runs: data.runs, k: data.k || "1" } });
  } catch (error) {
    clear(result, h("p", { class: "error", role: "alert", id: "languages-error" }, errorText(error)));
    return;
  }
  const head = h("tr", {}, h("th", {}, "Language"), h("th", {}, "Toolchain"), h("th", { class: "num" }, "Problems"),
    ...body.ks.map((k) => h("th", { class: "num" }, `pass@${k}`)));
  const rows = body.languages.map((row) => h("tr", { dataset: { language: row.language } },
    h("td", {}, h("a", { href: `/runs/${row.run_id}` }, row.language)), h("td", { class: "small" }, row.toolchain || "–"),
    h("td", { class: "num" }, num(row.problems)), ...cells(row.pass_at_k)));
  const average = (name, row) => h("tr", { class: "average", dataset: { average: name } },
    h("td", { colspan: 2, title: row.label }, h("strong", {}, `${name} average`)),
    h("td", { class: "num" }, num(row.problems)), ...cells(row.pass_at_k));
  clear(result,
    h("section", { class: "card" },
      h("div", { class: "table-head" }, h("h2", {}, body.model),
        h("span", { class: "muted small" }, `${Math.round(body.confidence * 100)} % intervals, ${body.method}, ${num(body.resamples)} resamples, seed ${body.seed}`)),
      h("div", { class: "table-scroll" },
        h("table", { id: "languages-table", class: "data" }, h("thead", {}, head),
          h("tbody", {}, ...rows), h("tfoot", {}, average("micro", body.micro), average("macro", body.macro))))),
    h("p", { class: "muted small", id: "languages-legend" }, body.micro.label, h("br"), body.macro.label),
    pairing(body.pairing),
    ...body.warnings.map((w) => h("p", { class: "muted small warning" }, w)));
}

render();
