// Figure 1, live: the reader types, the toy BPE (trained in the browser on the same
// paragraph as the build) cuts the text, with its counters; beside it SmolLM2's own
// tokenizer (its vocabulary and merges from the model file, shipped by the build).
// Typed text only ever goes into textContent: "<script>" stays eight characters of text.
import { el, showPiece } from "./dom.js";

const COUNTERS = [["characters", "characters"], ["utf8_bytes", "UTF-8 bytes"], ["words", "words"],
  ["tokens", "tokens"], ["vocabulary", "vocabulary"]];

function chips(container, pieces) {
  container.replaceChildren(...pieces.map((p, i) => el("span", { class: `tw-chip${i % 2 ? " tw-odd" : ""}` }, showPiece(p))));
}

export function enhanceTokenizer(figure, api) {
  const sentence = figure.dataset.sentence;
  const paragraph = figure.dataset.paragraph;
  const nMerges = Number(figure.dataset.nMerges);
  const simulator = document.querySelector(".tw-simulator");
  const vocabUrl = simulator && simulator.dataset.vocab ? new URL(simulator.dataset.vocab, document.baseURI).href : "";
  const vocabName = (simulator && simulator.dataset.vocabName) || "SmolLM2";

  const input = el("textarea", { id: "tw-tok-input", rows: "3", spellcheck: "false" });
  input.value = sentence;
  const toyChips = el("div", { class: "tw-chips", "data-tokenizer": "toy" });
  const counters = el("dl", { class: "tw-counters" }, ...COUNTERS.map(([key, label]) =>
    el("div", {}, el("dt", {}, label), el("dd", { "data-counter": key }, figure.dataset[key.replace("_b", "B")] || "–"))));
  const realChips = el("div", { class: "tw-chips", "data-tokenizer": "smollm2" });
  const realCount = el("dd", { "data-counter": "smollm2-tokens" }, "–");
  const realVocab = el("dd", { "data-counter": "smollm2-vocabulary" }, "–");
  const status = el("p", { class: "tw-status", role: "status" });
  const live = el("p", { class: "tw-live", "aria-live": "polite" });
  const columns = [el("section", { class: "tw-tok-col", "aria-label": "Toy tokenizer" },
    el("h4", {}, `Toy BPE: ${nMerges} merges learned from one paragraph`), toyChips, counters)];
  if (vocabUrl) {
    columns.push(el("section", { class: "tw-tok-col", "aria-label": `${vocabName} tokenizer` },
      el("h4", {}, `${vocabName}’s own tokenizer`), realChips,
      el("dl", { class: "tw-counters" }, el("div", {}, el("dt", {}, "tokens"), realCount),
        el("div", {}, el("dt", {}, "vocabulary"), realVocab))));
  }
  const panel = el("div", { class: "tw-panel tw-tok-panel" },
    el("label", { for: "tw-tok-input" }, "Type any text (it stays in this page)"), input,
    el("div", { class: "tw-tok-columns" }, ...columns), live);
  figure.prepend(panel);
  panel.after(status);
  figure.classList.add("is-live");

  let realReady = false;
  let busy = false;
  let again = false;
  async function update() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      do {
        again = false;
        const text = input.value;
        const toy = await api.call("tokenize_toy", text, paragraph, nMerges);
        chips(toyChips, toy.pieces);
        for (const [key] of COUNTERS) {
          counters.querySelector(`[data-counter="${key}"]`).textContent = toy.counts[key].toLocaleString("en-US");
        }
        let summary = `Toy tokenizer: ${toy.counts.tokens} tokens for ${toy.counts.characters} characters.`;
        if (realReady) {
          const real = await api.call("tokenize_smollm2", text);
          chips(realChips, real.pieces);
          realCount.textContent = real.tokens.toLocaleString("en-US");
          realVocab.textContent = real.vocabulary.toLocaleString("en-US");
          summary += ` ${vocabName}: ${real.tokens} tokens.`;
        }
        live.textContent = summary;
      } while (again);
      figure.dataset.state = "ready";
    } catch (error) {
      status.textContent = String(error.message || error);
    } finally {
      busy = false;
    }
  }

  api.wire(figure, status, async () => {
    figure.classList.add("is-ready");
    await update();
    if (vocabUrl) {
      status.textContent = `Loading ${vocabName}’s vocabulary…`;
      const response = await fetch(vocabUrl);
      if (!response.ok) throw new Error(`${vocabUrl}: HTTP ${response.status}`);
      await api.call("load_smollm2", await response.text());
      realReady = true;
      status.textContent = "";
      await update();
    }
  });
  input.addEventListener("input", () => { if (figure.classList.contains("is-ready")) update(); });
}
