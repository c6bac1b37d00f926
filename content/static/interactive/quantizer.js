// Figure 10, live: the reader picks the bits (8, 4, 3, 2) and can draw a new block; the
// quantization itself is tokenwalk.physics.quantization.quantize_block, run in the browser.
import { el, svgEl } from "./dom.js";

// Drawn at the figure's own width (one unit = one CSS pixel), so text keeps its size on a phone.
const H = 250, X0 = 46, TOP = 14, BOTTOM = 226;

function fmtW(x) {
  const s = x.toFixed(4);
  return (s === "-0.0000" ? "0.0000" : s).replace("-", "−");
}
function fmtShare(share) {
  const x = 100 * share;
  return x >= 0.95 ? `${Math.round(x)} %` : `${x.toFixed(1)} %`;
}

function chart(q, W) {
  const X1 = W - 10;
  const big = q.largest_abs_weight || 1;
  const span = big * 1.08;
  const y = (v) => TOP + (BOTTOM - TOP) * (span - v) / (2 * span);
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, class: "tw-quant-chart", role: "img",
    "aria-label": `${q.weights.length} weights at ${q.bits} bits: dots are the weights, bars the values read back` });
  const levels = q.level_max - q.level_min + 1;
  if (levels <= 16) {
    for (let lv = q.level_min; lv <= q.level_max; lv++) {
      const yy = y(lv * q.scale);
      svg.append(svgEl("line", { x1: X0, x2: X1, y1: yy, y2: yy, class: lv === 0 ? "tw-axis" : "tw-grid" }));
      svg.append(svgEl("text", { x: X0 - 6, y: yy + 4, "text-anchor": "end", class: "tw-tick" }, String(lv).replace("-", "−")));
    }
  } else {
    svg.append(svgEl("line", { x1: X0, x2: X1, y1: y(0), y2: y(0), class: "tw-axis" }));
    svg.append(svgEl("text", { x: X0 - 6, y: y(0) + 4, "text-anchor": "end", class: "tw-tick" }, "0"));
    svg.append(svgEl("text", { x: X0 + 4, y: TOP + 10, class: "tw-tick" }, `${levels} levels: too close to draw`));
  }
  const col = (X1 - X0) / q.weights.length;
  q.weights.forEach((w, i) => {
    const x = X0 + col * (i + 0.5), r = q.reconstructed[i];
    svg.append(svgEl("line", { x1: x, x2: x, y1: y(w), y2: y(r), class: "tw-err" }));
    svg.append(svgEl("line", { x1: x - col * 0.35, x2: x + col * 0.35, y1: y(r), y2: y(r), class: "tw-rec" }));
    svg.append(svgEl("circle", { cx: x, cy: y(w), r: 3, class: "tw-w" }));
  });
  svg.append(svgEl("text", { x: X0, y: H - 6, class: "tw-tick" },
    "● weight   ▬ value read back (level × scale)   | error"));
  return svg;
}

function table(q) {
  // Two halves side by side on a wide screen: every weight, its level, the value read back, the error.
  const half = Math.ceil(q.weights.length / 2);
  const part = (from, to) => el("table", { class: "tw-quant-table" },
    el("thead", {}, el("tr", {}, ...["#", "weight", "level", "read back", "error"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...q.weights.slice(from, to).map((w, k) => {
      const i = from + k;
      return el("tr", Math.abs(w) === q.largest_abs_weight ? { class: "tw-big-row" } : {},
        el("td", {}, String(i + 1)), el("td", {}, fmtW(w)), el("td", {}, String(q.levels[i]).replace("-", "−")),
        el("td", {}, fmtW(q.reconstructed[i])), el("td", {}, fmtW(q.errors[i])));
    })));
  return el("div", { class: "tw-quant-tables" }, part(0, half), part(half, q.weights.length));
}

export function enhanceQuantizer(figure, api) {
  const original = JSON.parse(figure.dataset.weights);
  const widths = JSON.parse(figure.dataset.bitWidths);
  let weights = original.slice();
  let bits = Number(figure.dataset.bits);
  let seed = 1;

  const group = el("fieldset", { class: "tw-bits" }, el("legend", {}, "Bits per weight (before the scale)"),
    ...widths.map((b) => el("label", {}, el("input", { type: "radio", name: "tw-quant-bits", value: b, checked: b === bits }), ` ${b}`)));
  const draw = el("button", { type: "button", "data-action": "draw" }, "Draw new weights");
  const reset = el("button", { type: "button", "data-action": "reset" }, "The article’s block");
  const view = el("div", { class: "tw-quant-view" });
  const summary = el("div", { class: "tw-quant-summary", "aria-live": "polite" });
  const status = el("p", { class: "tw-status", role: "status" });
  const panel = el("div", { class: "tw-panel tw-quant-panel" },
    el("div", { class: "tw-controls" }, group, draw, reset), summary, view);
  figure.prepend(panel);
  panel.after(status);
  figure.classList.add("is-live");

  let drawSeed = null;  // a new block was asked for: drawn by the next run
  const update = api.latestWins(async () => {
    if (drawSeed !== null) {
      const asked = drawSeed;
      const drawn = await api.call("draw_weights", asked);
      if (drawSeed === asked) {
        weights = drawn;
        drawSeed = null;
      }
    }
    return api.call("quantize", weights, bits);
  }, {
    show(q) {
      const fmts = Object.entries(q.formats).map(([k, v]) => `${k} ${v}`).join(" · ");
      summary.replaceChildren(
        el("p", {}, el("b", { "data-out": "mean-error" }, `mean error ${fmtShare(q.mean_error_share)}`),
          ` of the largest weight at ${q.bits} bits (largest error ${fmtShare(q.max_error_share)}); `,
          `levels ${q.level_min} … ${q.level_max}`.replace(/-/g, "−"), `; one fp16 scale ${q.scale.toPrecision(3)}`),
        el("p", {}, el("b", { "data-out": "bits-per-weight" }, `${q.bits} + 16/${q.weights.length} = ${q.bits_per_weight} bits per weight`),
          ` with the scale counted; real formats: ${fmts}`));
      figure.dataset.meanErrorShareLive = String(q.mean_error_share);
      figure.dataset.bitsPerWeightLive = String(q.bits_per_weight);
      view.replaceChildren(chart(q, Math.max(320, Math.round(view.clientWidth || 640))), table(q));
      status.textContent = "";
      figure.dataset.state = "ready";
    },
    fail(error) {
      status.textContent = api.oneLine(error);
      figure.dataset.state = "error";
    },
    busy(on) { figure.dataset.busy = on ? "1" : "0"; },
  });

  api.wire(figure, status, () => { figure.classList.add("is-ready"); return update(); });
  let width = view.clientWidth;
  window.addEventListener("resize", () => {
    if (figure.classList.contains("is-ready") && Math.abs(view.clientWidth - width) > 20) {
      width = view.clientWidth;
      update();
    }
  });
  group.addEventListener("change", (e) => {
    bits = Number(e.target.value);
    if (figure.classList.contains("is-ready")) update();
  });
  draw.addEventListener("click", () => {
    drawSeed = seed++;
    if (figure.classList.contains("is-ready")) update();
  });
  reset.addEventListener("click", () => {
    drawSeed = null;
    weights = original.slice();
    if (figure.classList.contains("is-ready")) update();
  });
}
