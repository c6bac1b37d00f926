// TokenWalk, the simulator, live: every change of the form walks the request again with
// tokenwalk.walk in the browser (tokenwalk.browser.entry.simulate_view) and shows the stages,
// the timeline and the memory to scale, the three numbers and where each comes from.
// The settings live in the page's URL (shareable). A GGUF file is read here, header
// only, through File.slice: it never leaves the reader's machine.
import { el } from "./dom.js";

const NUMBER_FIELDS = ["prompt_tokens", "output_tokens", "num_ctx", "chunk_tokens", "users", "spec_alpha", "spec_gamma",
  "bandwidth_gbs", "fp16_tflops", "memory_gb"];
const FIRST_SLICE = 8 << 20;
const MAX_HEADER = 512 << 20;

function formSettings(form) {
  const v = (name) => form.elements[name].value.trim();
  const s = { model: v("model"), machine: v("machine"), kv_type: v("kv_type"), warm: form.elements.warm.checked };
  for (const name of ["prompt_tokens", "output_tokens", "chunk_tokens", "users"]) s[name] = Number(v(name));
  s.num_ctx = v("num_ctx") === "" ? null : Number(v("num_ctx"));
  if (form.elements.spec.checked) {
    s.spec_alpha = Number(v("spec_alpha"));
    s.spec_gamma = Number(v("spec_gamma"));
  } else {
    s.spec_alpha = null;
    s.spec_gamma = null;
  }
  if (s.machine === "custom") {
    for (const name of ["bandwidth_gbs", "fp16_tflops", "memory_gb"]) s[name] = Number(v(name));
  }
  return s;
}

function checkSettings(s) {
  for (const name of ["prompt_tokens", "output_tokens", "chunk_tokens", "users", "num_ctx", "spec_gamma"]) {
    const x = s[name];
    if (x !== null && x !== undefined && !Number.isInteger(x)) return `${name.replace("_", " ")} must be a whole number`;
  }
  for (const name of ["spec_alpha", "bandwidth_gbs", "fp16_tflops", "memory_gb"]) {
    if (s[name] !== null && s[name] !== undefined && !Number.isFinite(s[name])) return `${name} must be a number`;
  }
  return null;
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

  function applySettings(s) {
    const set = (name, value) => { if (form.elements[name] && value !== undefined) form.elements[name].value = value ?? ""; };
    if (s.model && [...modelSelect.options].some((o) => o.value === s.model)) set("model", s.model);
    set("machine", s.machine);
    for (const name of NUMBER_FIELDS) if (name in s) set(name, s[name]);
    set("kv_type", s.kv_type);
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
      else if (NUMBER_FIELDS.includes(key)) s[key] = value === "" ? null : Number(value);
      else s[key] = value;
    }
    if (!params.has("spec_alpha")) s.spec_alpha = null;
    return s;
  }

  function toUrl(s) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(s)) {
      if (value === null || value === undefined) continue;
      params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
    }
    const url = `${location.pathname}?${params}${location.hash}`;
    history.replaceState(null, "", url);
    return new URL(url, location.href).href;
  }

  let latest = 0;
  let running = false;
  let queued = false;
  async function update() {
    if (running) { queued = true; return; }
    running = true;
    try {
      do {
        queued = false;
        showFields();
        if (modelSelect.value === "gguf") {
          status.textContent = "Pick a GGUF file: only its header is read, here in your browser.";
          continue;
        }
        const s = formSettings(form);
        const problem = checkSettings(s);
        if (problem) { status.textContent = problem; result.classList.add("is-stale"); continue; }
        toUrl(s);
        const t0 = performance.now();
        const id = ++latest;
        try {
          const out = await api.call("simulate_view", s);
          if (id !== latest) continue;
          result.innerHTML = out.html;  // markup from tokenwalk.browser.view: every text escaped there
          result.dataset.walk = JSON.stringify(out.walk);
          live.textContent = out.summary;
          result.dataset.ms = String(performance.now() - t0);
          result.classList.remove("is-stale");
          status.textContent = "";
          figure.dataset.state = "ready";
        } catch (error) {
          status.textContent = String(error.message || error);
          result.classList.add("is-stale");
        }
      } while (queued);
    } finally {
      running = false;
      figure.dataset.busy = "0";
    }
  }
  function schedule() {
    figure.dataset.busy = "1";
    if (figure.classList.contains("is-ready")) update();
  }

  async function readGguf(file) {
    ggufInfo.textContent = `Reading the header of ${file.name}…`;
    ggufInfo.dataset.state = "reading";
    let n = Math.min(FIRST_SLICE, file.size);
    try {
      for (;;) {
        const buffer = await file.slice(0, n).arrayBuffer();
        const info = await api.callGguf(buffer, file.size, file.name);
        if (info.need_bytes) {
          if (n >= file.size || n >= MAX_HEADER) throw new Error(`${file.name}: the header does not end within ${n} bytes`);
          n = Math.min(file.size, Math.max(info.need_bytes, 2 * n));
          continue;
        }
        let option = [...modelSelect.options].find((o) => o.value === info.name);
        if (!option) {
          option = el("option", { value: info.name, "data-gguf": "1" }, `${info.name} (${file.name})`);
          modelSelect.querySelector("option[value=gguf]").before(option);
        }
        modelSelect.value = info.name;
        ggufInfo.replaceChildren(
          el("span", { "data-out": "architecture" }, `architecture ${info.architecture}`), ", ",
          el("span", { "data-out": "layers" }, `${info.layers} layers`), ", ",
          el("span", { "data-out": "params" }, `${info.params.toLocaleString("en-US")} parameters`), ", ",
          el("span", { "data-out": "kv" }, `KV cache ${info.kv_bytes_per_token.f16.toLocaleString("en-US")} bytes a token (f16)`),
          `; ${info.header_bytes_read.toLocaleString("en-US")} bytes of ${file.size.toLocaleString("en-US")} read.`);
        ggufInfo.dataset.state = "ok";
        ggufInfo.dataset.info = JSON.stringify({ architecture: info.architecture, params: info.params,
          kv_bytes_per_token: info.kv_bytes_per_token, name: info.name });
        schedule();
        return;
      }
    } catch (error) {
      ggufInfo.dataset.state = "error";
      ggufInfo.textContent = `Not a GGUF model this page can read: ${error.message || error}`;
    }
  }

  const shared = fromUrl();
  if (shared) applySettings(shared);
  showFields();

  api.wire(figure, status, () => { figure.classList.add("is-ready"); return update(); });
  form.addEventListener("input", (e) => { if (e.target !== ggufInput) schedule(); });
  form.addEventListener("change", (e) => {
    if (e.target === ggufInput && ggufInput.files.length) readGguf(ggufInput.files[0]);
  });
  form.querySelector("[data-action=reset]").addEventListener("click", () => {
    applySettings({ ...defaults, bandwidth_gbs: undefined });
    schedule();
  });
  form.querySelector("[data-action=share]").addEventListener("click", async () => {
    const url = toUrl(formSettings(form));
    try {
      await navigator.clipboard.writeText(url);
      status.textContent = "Link copied.";
    } catch (e) {
      status.textContent = `Link: ${url}`;
    }
  });
}
