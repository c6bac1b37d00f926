// Figure 1, live: the reader types, the toy BPE (trained in the browser on the same
// paragraph as the build) cuts the text, with its counters; beside it SmolLM2's own
// tokenizer (its vocabulary and merges from the model file, shipped by the build).
// Typed text only ever goes into textContent: "<script>" stays eight characters of text.
import { el, showPiece } from "./dom.js";

const COUNTERS = [["characters", "characters"], ["utf8_bytes", "UTF-8 bytes"], ["words", "words"],
  ["tokens", "tokens"], ["vocabulary", "vocabulary"]];

// A long paste gives hundreds of thousands of pieces: the chips go in batches (one per
// frame, never all spread into one call, which overflows the stack past ~125,000), and
// only the first CHIP_LIMIT are drawn; a newer text cancels the batches still to come.
const CHIP_BATCH = 2000;
const CHIP_LIMIT = 20000;
const drawing = new WeakMap();

export function chips(container, pieces, moreText = "") {
  const job = {};
  drawing.set(container, job);
  container.replaceChildren();
  const shown = Math.min(pieces.length, CHIP_LIMIT);
  let i = 0;
  const batch = () => {
    if (drawing.get(container) !== job) return;
    const part = document.createDocumentFragment();
    for (const end = Math.min(shown, i + CHIP_BATCH); i < end; i++) {
      part.append(el("span", { class: `tw-chip${i % 2 ? " tw-odd" : ""}` }, showPiece(pieces[i])));
    }
    if (i >= shown && moreText) part.append(el("span", { class: "tw-chips-more" }, moreText));
    container.append(part);
    if (i < shown) requestAnimationFrame(batch);
  };
  batch();
}

export function enhanceTokenizer(figure, api) {
  const sentence = figure.dataset.sentence;
  const paragraph = figure.dataset.paragraph;
  const nMerges = Number(figure.dataset.nMerges);
  const vocabUrl = figure.dataset.vocab ? new URL(figure.dataset.vocab, document.baseURI).href : "";
  const vocabName = figure.dataset.vocabName || "SmolLM2";

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
  // A vocabulary that did not load: one line that stays (the toy column works meanwhile)
  // and a button that tries again; the column says it is not loaded rather than "–".
  let vocabError = "";
  const retry = el("button", { type: "button", class: "tw-retry", hidden: true }, `Load ${vocabName}’s vocabulary again`);
  const update = api.latestWins(async () => {
    const text = input.value;
    const toy = await api.call("tokenize_toy", text, paragraph, nMerges, CHIP_LIMIT);
    const real = realReady ? await api.call("tokenize_smollm2", text, CHIP_LIMIT) : null;
    return { toy, real };
  }, {
    show({ toy, real }) {
      chips(toyChips, toy.pieces, toy.more_text);
      for (const [key] of COUNTERS) {
        counters.querySelector(`[data-counter="${key}"]`).textContent = toy.counts_text[key];
      }
      let summary = `Toy tokenizer: ${toy.counts_text.tokens} tokens for ${toy.counts_text.characters} characters.`;
      if (real) {
        chips(realChips, real.pieces, real.more_text);
        realCount.textContent = real.tokens_text;
        realVocab.textContent = real.vocabulary_text;
        summary += ` ${vocabName}: ${real.tokens_text} tokens.`;
      }
      live.textContent = summary;
      status.textContent = vocabError;  // a message about an earlier text is stale now; the vocabulary's is not
      figure.dataset.state = "ready";
    },
    fail(error) {
      status.textContent = api.oneLine(error);
      figure.dataset.state = "error";
    },
    busy(on) { figure.dataset.busy = on ? "1" : "0"; },
  });

  async function loadVocabulary() {
    const file = vocabUrl.split("/").pop().split("?")[0];
    status.textContent = `Loading ${vocabName}’s vocabulary…`;
    retry.hidden = true;
    vocabError = "";
    let text;
    try {
      const response = await fetch(vocabUrl);
      if (!response.ok) throw new Error(`the site answered HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      vocabError = `${vocabName}’s vocabulary (${file}) could not be downloaded: ${api.oneLine(error)}. `
        + "The toy tokenizer works meanwhile.";
    }
    if (!vocabError) {
      try {
        await api.callKept("load_smollm2", text);
      } catch (error) {
        vocabError = `${vocabName}’s vocabulary (${file}) did not load: ${api.oneLine(error)}.`;
      }
    }
    if (vocabError) {
      status.textContent = vocabError;
      realCount.textContent = realVocab.textContent = "not loaded";
      retry.hidden = false;
      figure.dataset.vocabState = "error";
      return;
    }
    realReady = true;
    figure.dataset.vocabState = "ready";
    status.textContent = "";
    await update();
  }
  retry.addEventListener("click", () => { loadVocabulary().catch(() => {}); });

  api.wire(figure, status, async () => {
    figure.classList.add("is-ready");
    await update();
    if (vocabUrl) {
      status.after(retry);
      await loadVocabulary();
    }
  });
  input.addEventListener("input", () => { if (figure.classList.contains("is-ready")) update(); });
  // Ctrl+A (Cmd+A) selects the text through the textarea's own select(). Chromium's
  // keyboard select-all is a user selection of the editing host, which it syncs at a cost
  // that grows with the lines of the text and with what the rest of the page renders:
  // 5,000 pasted lines took 2.6 to 4.6 s here (0.09 s with select(); 0.16 s with the rest
  // of the page hidden), 20,000 lines about 48 s, and the Backspace after it as long again.
  input.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "a") {
      e.preventDefault();
      input.select();
    }
  });
}
