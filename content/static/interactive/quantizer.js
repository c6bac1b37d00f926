// Figure 10, live: the reader picks the bits (8, 4, 3, 2) and can draw a new block; the
// quantization (tokenwalk.physics.quantization) and its drawing (tokenwalk_app.quant_view,
// the build's drawing too) run in the browser; this module inserts the markup it returns.
import { el } from "./dom.js";

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
  const view = el("div", { class: "tw-quant-view", style: "overflow-x:auto" });
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
    return api.call("quantize_view", weights, bits, widths);
  }, {
    show(q) {
      summary.innerHTML = q.summary_html;
      figure.dataset.meanErrorShareLive = String(q.mean_error_share);
      figure.dataset.bitsPerWeightLive = q.bits_per_weight;
      view.innerHTML = q.svg;
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
