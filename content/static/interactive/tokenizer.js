// Figure 1, live: the reader types, the toy BPE (trained in the browser on the same
// paragraph as the build) cuts the text, with its counters; beside it SmolLM2's own
// tokenizer (its vocabulary and merges from the model file, shipped by the build), or the
// tokenizer of a GGUF file the reader picks (its header read here, as the simulator reads it).
// Typed text only ever goes into textContent: "<script>" stays eight characters of text.
import { el, showPiece } from "./dom.js";

const COUNTERS = [["characters", "characters"], ["utf8_bytes", "UTF-8 bytes"], ["words", "words"],
  ["tokens", "tokens"], ["vocabulary", "vocabulary"]];

// A long paste gives hundreds of thousands of pieces: the chips go in batches (one per
// frame, never all spread into one call, which overflows the stack past ~125,000), and
// only the first CHIP_LIMIT are drawn; a newer text cancels the batches still to come.
const CHIP_BATCH = 2000;
const CHIP_LIMIT = 20000;
// a GGUF header is read in growing slices: the vocabulary is in it (Qwen's: about 8 MB)
const FIRST_SLICE = 8 << 20;
const MAX_HEADER = 512 << 20;
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
  const shippedName = figure.dataset.vocabName || "SmolLM2";
  let vocabName = shippedName;  // the picked file's name once one is read

  const input = el("textarea", { id: "tw-tok-input", rows: "3", spellcheck: "false" });
  input.value = sentence;
  const toyChips = el("div", { class: "tw-chips", "data-tokenizer": "toy" });
  const counters = el("dl", { class: "tw-counters" }, ...COUNTERS.map(([key, label]) =>
    el("div", {}, el("dt", {}, label), el("dd", { "data-counter": key }, figure.dataset[key.replace("_b", "B")] || "–"))));
  const realChips = el("div", { class: "tw-chips", "data-tokenizer": "smollm2" });
  const realCount = el("dd", { "data-counter": "smollm2-tokens" }, "–");
  const realVocab = el("dd", { "data-counter": "smollm2-vocabulary" }, "–");
  const realTitle = el("h4", {}, `${vocabName}’s own tokenizer`);
  const status = el("p", { class: "tw-status", role: "status" });
  const live = el("p", { class: "tw-live", "aria-live": "polite" });
  const pick = el("input", { type: "file", id: "tw-tok-gguf", accept: ".gguf", "aria-describedby": "tw-tok-gguf-hint" });
  const pickInfo = el("output", { class: "tw-tok-gguf-info", for: "tw-tok-gguf", "aria-live": "polite" });
  const columns = [el("section", { class: "tw-tok-col", "aria-label": "Toy tokenizer" },
    el("h4", {}, `Toy BPE: ${nMerges} merges learned from one paragraph`), toyChips, counters)];
  const realColumn = el("section", { class: "tw-tok-col", "aria-label": `${vocabName} tokenizer`, hidden: !vocabUrl },
    realTitle, realChips,
    el("dl", { class: "tw-counters" }, el("div", {}, el("dt", {}, "tokens"), realCount),
      el("div", {}, el("dt", {}, "vocabulary"), realVocab)));
  columns.push(realColumn);
  const pickField = el("div", { class: "tw-field tw-tok-pick" },
    el("label", { for: "tw-tok-gguf" }, "Or cut it with the vocabulary of a GGUF model file of yours"), pick,
    el("span", { class: "tw-hint", id: "tw-tok-gguf-hint" },
      "Only the file’s header is read, here in your browser; the file is never uploaded or sent anywhere."),
    pickInfo);
  const panel = el("div", { class: "tw-panel tw-tok-panel" },
    el("label", { for: "tw-tok-input" }, "Type any text (it stays in this page)"), input,
    el("div", { class: "tw-tok-columns" }, ...columns), pickField, live);
  figure.prepend(panel);
  panel.after(status);
  figure.classList.add("is-live");

  let realReady = false;
  let realFn = "tokenize_smollm2";  // tokenize_gguf once the reader's file is read
  // A vocabulary that did not load: one line that stays (the toy column works meanwhile)
  // and a button that tries again; the column says it is not loaded rather than "–".
  let vocabError = "";
  const retry = el("button", { type: "button", class: "tw-retry", hidden: true }, `Load ${shippedName}’s vocabulary again`);
  const update = api.latestWins(async () => {
    const text = input.value;
    const toy = await api.call("tokenize_toy", text, paragraph, nMerges, CHIP_LIMIT);
    const real = realReady ? await api.call(realFn, text, CHIP_LIMIT) : null;
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
    status.textContent = `Loading ${shippedName}’s vocabulary…`;
    retry.hidden = true;
    vocabError = "";
    let text;
    try {
      const response = await fetch(vocabUrl);
      if (!response.ok) throw new Error(`the site answered HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      vocabError = `${shippedName}’s vocabulary (${file}) could not be downloaded: ${api.oneLine(error)}. `
        + "The toy tokenizer works meanwhile.";
    }
    if (!vocabError) {
      try {
        await api.callKept("load_smollm2", text);
      } catch (error) {
        vocabError = `${shippedName}’s vocabulary (${file}) did not load: ${api.oneLine(error)}.`;
      }
    }
    if (vocabError) {
      status.textContent = vocabError;
      if (realFn === "tokenize_smollm2") realCount.textContent = realVocab.textContent = "not loaded";
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

  let picked = 0;
  async function readVocabulary(file) {
    const mine = ++picked;
    pickInfo.dataset.state = "reading";
    pickInfo.textContent = `Reading the vocabulary of ${file.name}…`;
    let n = Math.min(FIRST_SLICE, file.size);
    try {
      for (;;) {
        const buffer = await file.slice(0, n).arrayBuffer();
        const info = await api.callGguf(buffer, file.size, file.name, "load_gguf_tokenizer");
        if (mine !== picked) return;  // another file was picked meanwhile
        if (info.need_bytes) {
          if (n >= file.size || n >= MAX_HEADER) throw new Error(`${file.name}: the header does not end within ${n} bytes`);
          n = Math.min(file.size, Math.max(info.need_bytes, 2 * n));
          continue;
        }
        vocabName = info.name;
        realTitle.textContent = `${info.name}: its own tokenizer`;
        realColumn.setAttribute("aria-label", `${info.name} tokenizer`);
        realColumn.hidden = false;
        realFn = "tokenize_gguf";
        realReady = true;
        pickInfo.dataset.state = "ok";
        pickInfo.textContent = `tokenizer.ggml.model ${info.model}`
          + (info.pre ? `, pre-tokenizer ${info.pre}` : ", no pre-tokenizer named (llama.cpp’s default)")
          + `, ${info.vocabulary_text} tokens.`;
        figure.classList.add("is-ready");
        await update();
        return;
      }
    } catch (error) {
      if (mine !== picked) return;
      pickInfo.dataset.state = "error";
      pickInfo.textContent = `Not a vocabulary this page can read: ${api.oneLine(error)}`;
    }
  }
  pick.addEventListener("change", () => { if (pick.files.length) readVocabulary(pick.files[0]); });
}
