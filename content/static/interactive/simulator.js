// TokenWalk, the simulator, live: every change of the form walks the request again with
// tokenwalk.walk in the browser (tokenwalk_app.entry.simulate_view) and shows the stages,
// the timeline and the memory to scale, the three numbers and where each comes from.
// The settings live in the page's URL (shareable): every field the walk used, as Python
// wrote it (tokenwalk_app.entry.link_from_settings), so a link reopens to the same walk.
// A GGUF file is read here, header only, through File.slice: it never leaves the reader's
// machine, so a link to its result asks for the file again and shows nothing until then.
import { el } from "./dom.js";

const NUMBER_FIELDS = ["prompt_tokens", "output_tokens", "num_ctx", "chunk_tokens", "users", "spec_alpha", "spec_gamma",
  "bandwidth_gbs", "fp16_tflops", "memory_gb", "architecture_year"];
// A machine of the reader's own: which llama.cpp backend, who made the chip, which kind of
// device and whether its memory is HBM choose the timing model's row
// (tokenwalk.timing.model.coefficients); "" leaves the choice to the fit.
const CHOICE_FIELDS = ["backend", "vendor", "device_class", "memory_type"];
const FIRST_SLICE = 8 << 20;
const FILE_PREFIX = "file:";  // the picker's value of a file read here (entry.GGUF_KEY_PREFIX)
const MAX_HEADER = 512 << 20;
const MAX_RUNS_FILE = 2_000_000;  // own_runs.MAX_TEXT_CHARS

// The form as typed: strings, checkboxes as booleans. Python parses and checks them
// (tokenwalk_app.entry.settings_from_form), once, and returns the settings it used.
function formValues(form) {
  const values = { warm: form.elements.warm.checked, spec: form.elements.spec.checked };
  for (const name of ["model", "machine", "kv_type", "runs", ...NUMBER_FIELDS, ...CHOICE_FIELDS]) {
    if (form.elements[name]) values[name] = form.elements[name].value;
  }
  return values;
}

export function enhanceSimulator(figure, api) {
  const form = figure.querySelector(".tw-sim-form");
  const result = figure.querySelector(".tw-sim-result");
  const status = figure.querySelector(".tw-status");
  const live = figure.querySelector(".tw-live");
  const ggufField = figure.querySelector("[data-field=gguf]");
  const ggufInput = form.elements.gguf;
  const ggufInfo = figure.querySelector(".tw-gguf-info");
  const custom = figure.querySelector("[data-field=custom]");
  const defaults = JSON.parse(figure.dataset.defaults);
  const modelSelect = form.elements.model;
  figure.classList.add("is-live");
  form.addEventListener("submit", (e) => e.preventDefault());

  function showFields() {
    ggufField.hidden = modelSelect.value !== "gguf" && !modelSelect.selectedOptions[0]?.dataset.gguf;
    custom.hidden = form.elements.machine.value !== "custom";
    const spec = form.elements.spec.checked;
    for (const name of ["spec_alpha", "spec_gamma"]) {
      form.elements[name].disabled = !spec;
      figure.querySelector(`[data-field=${name}]`).hidden = !spec;
    }
  }

  // A link to a file's result names the file, whose header only the reader has: until it is
  // picked again the picker says so and nothing else is shown (never another model's walk).
  let wantedFile = null;

  function applySettings(s) {
    // a link's "auto" is the empty field (what the walk resolved it to: prompt + output)
    const set = (name, value) => {
      if (form.elements[name] && value !== undefined) form.elements[name].value = value === "auto" ? "" : value ?? "";
    };
    wantedFile = null;
    if (s.model && [...modelSelect.options].some((o) => o.value === s.model)) set("model", s.model);
    else if (typeof s.model === "string" && s.model.startsWith(FILE_PREFIX)) {
      set("model", "gguf");
      wantedFile = s.model.slice(FILE_PREFIX.length);
    }
    set("machine", s.machine);
    for (const name of [...NUMBER_FIELDS, ...CHOICE_FIELDS]) if (name in s) set(name, s[name]);
    set("kv_type", s.kv_type);
    // a link's runs (tokenwalk_app.entry.link_from_settings), shown as it carries them
    set("runs", s.runs ?? "");
    const runs = figure.querySelector("[data-field=runs]");
    if (s.runs) runs.open = true;
    if ("warm" in s) form.elements.warm.checked = !!s.warm;
    if ("spec_alpha" in s) form.elements.spec.checked = s.spec_alpha !== null && s.spec_alpha !== undefined;
    showFields();
  }

  function fromUrl() {
    const params = new URLSearchParams(location.search);
    if (!params.has("model")) return null;
    const s = {};
    for (const [key, value] of params) {
      if (key === "warm") s.warm = value === "1";
      else s[key] = value;  // as text: Python checks it with the rest of the form
    }
    if (!params.has("spec_alpha")) s.spec_alpha = null;
    return s;
  }

  function toUrl(link) {
    const params = new URLSearchParams(link);  // Python's strings: every field, "auto" where empty
    const url = `${location.pathname}?${params}${location.hash}`;
    history.replaceState(null, "", url);
    return new URL(url, location.href).href;
  }

  let shared = null;  // the link of the result shown (the URL's)
  const update = api.latestWins(async () => {
    showFields();
    if (modelSelect.value === "gguf") return null;
    const t0 = performance.now();
    const out = await api.call("simulate_view", formValues(form));
    out.ms = performance.now() - t0;
    return out;
  }, {
    show(out) {
      if (out === null) {
        // nothing is walked: the result of another model must not stand beside the picker
        result.hidden = true;
        live.textContent = "";
        shared = null;
        status.textContent = wantedFile
          ? `This link shows a walk of the GGUF file ${wantedFile}, which never left its reader’s computer: `
            + "pick that file (or another) to see its walk."
          : "Pick a GGUF file: only its header is read, here in your browser.";
        figure.dataset.state = "file";
        return;
      }
      result.hidden = false;
      result.innerHTML = out.html;  // markup from tokenwalk_app.view: every text escaped there
      result.dataset.walk = JSON.stringify(out.walk);
      live.textContent = out.summary;
      result.dataset.ms = String(out.ms);
      result.classList.remove("is-stale");
      shared = out.link;
      toUrl(shared);
      status.textContent = "";
      figure.dataset.state = "ready";
    },
    fail(error) {
      status.textContent = api.oneLine(error);
      result.classList.add("is-stale");
      figure.dataset.state = "error";
    },
    busy(on) { figure.dataset.busy = on ? "1" : "0"; },
  });
  function schedule() {
    figure.dataset.busy = "1";
    if (figure.classList.contains("is-ready")) update();
  }

  // The latest choice of model wins: a header that ends reading after the reader chose
  // another model (a preset, the file option again, a reset) adds its file to the picker
  // but selects nothing and walks nothing.
  let picked = 0;
  let modelChoice = 0;
  async function readGguf(file) {
    const mine = ++picked;
    const choice = modelChoice;
    ggufInfo.textContent = `Reading the header of ${file.name}…`;
    ggufInfo.dataset.state = "reading";
    let n = Math.min(FIRST_SLICE, file.size);
    try {
      for (;;) {
        const buffer = await file.slice(0, n).arrayBuffer();
        const info = await api.callGguf(buffer, file.size, file.name);
        if (mine !== picked) return;  // another file was picked meanwhile
        if (info.need_bytes) {
          if (n >= file.size || n >= MAX_HEADER) throw new Error(`${file.name}: the header does not end within ${n} bytes`);
          n = Math.min(file.size, Math.max(info.need_bytes, 2 * n));
          continue;
        }
        // named by the reader's file (info.key: "file:" + its trimmed name), never by the
        // file's own general.name, so it can replace no preset and no other option
        let option = [...modelSelect.options].find((o) => o.value === info.key);
        if (!option) {
          option = el("option", { value: info.key, "data-gguf": "1" }, info.name);
          modelSelect.querySelector("option[value=gguf]").before(option);
        }
        ggufInfo.replaceChildren(
          el("span", { "data-out": "architecture" }, `architecture ${info.architecture}`), ", ",
          el("span", { "data-out": "layers" }, `${info.layers} layers`), ", ",
          el("span", { "data-out": "params" }, info.text.params), ", ",
          el("span", { "data-out": "kv" }, info.text.kv), `; ${info.text.read}.`);
        ggufInfo.dataset.state = "ok";
        ggufInfo.dataset.info = JSON.stringify({ architecture: info.architecture, params: info.params,
          kv_bytes_per_token: info.kv_bytes_per_token, kv_layer_kinds: info.kv_layer_kinds, name: info.name,
          key: info.key });
        if (choice !== modelChoice) return;  // the reader chose another model meanwhile
        modelSelect.value = info.key;
        wantedFile = null;
        schedule();
        return;
      }
    } catch (error) {
      if (mine !== picked) return;
      ggufInfo.dataset.state = "error";
      ggufInfo.textContent = `Not a GGUF model this page can read: ${api.oneLine(error)}`;
    }
  }

  // llama-bench's output from a file: read here into the text box (Python reads the text)
  const runsFile = form.elements.runs_file;
  async function readRuns(file) {
    if (file.size > MAX_RUNS_FILE) {
      status.textContent = `${file.name}: ${file.size.toLocaleString("en")} bytes; llama-bench’s output is a few kB `
        + `(at most ${MAX_RUNS_FILE.toLocaleString("en")} bytes are read)`;
      figure.dataset.state = "error";
      return;
    }
    form.elements.runs.value = await file.text();
    runsFile.value = "";  // the same file picked again (llama-bench run again) reads again
    schedule();
  }

  const fromLink = fromUrl();
  if (fromLink) applySettings(fromLink);
  showFields();

  api.wire(figure, status, () => { figure.classList.add("is-ready"); return update(); });
  form.addEventListener("input", (e) => { if (e.target !== ggufInput && e.target !== runsFile) schedule(); });
  modelSelect.addEventListener("change", () => {
    modelChoice += 1;
    if (modelSelect.value !== "gguf") wantedFile = null;
    // a preset: the headers kept for a restarted worker are let go (a file is read again)
    if (modelSelect.value !== "gguf" && !modelSelect.selectedOptions[0]?.dataset.gguf) api.forgetGguf();
  });
  form.addEventListener("change", (e) => {
    if (e.target === ggufInput && ggufInput.files.length) readGguf(ggufInput.files[0]);
    if (e.target === runsFile && runsFile.files.length) readRuns(runsFile.files[0]);
  });
  form.querySelector("[data-action=reset]").addEventListener("click", () => {
    modelChoice += 1;
    applySettings({ ...defaults, bandwidth_gbs: undefined });
    api.forgetGguf();
    schedule();
  });
  form.querySelector("[data-action=share]").addEventListener("click", async () => {
    if (!shared && !wantedFile) {
      status.textContent = "No walk is shown yet: pick a GGUF file first, then copy its link.";
      return;
    }
    const url = shared ? toUrl(shared) : location.href;  // a file's link waits for the file as it came
    try {
      await navigator.clipboard.writeText(url);
      status.textContent = "Link copied.";
    } catch (e) {
      status.textContent = `Link: ${url}`;
    }
  });
}
