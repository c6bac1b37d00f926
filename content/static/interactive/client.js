// Interactive figures: the tokenizer (figure 1), the quantizer (figure 10) and TokenWalk,
// the simulator. Progressive enhancement: without this file each shows its build-time
// rendering. Python (Pyodide, served by this site) starts in a Web Worker only when a
// reader reaches for one of them: a button, focus in a control, or the figure scrolling
// into view. Nothing is sent to any other host.
import { enhanceTokenizer } from "./tokenizer.js";
import { enhanceQuantizer } from "./quantizer.js";
import { enhanceSimulator } from "./simulator.js";

const body = document.body;
let worker = null;
let readyPromise = null;
let nextId = 1;
const pending = new Map();
const listeners = new Set();
export const state = { phase: "idle", ms: null, error: null, startedAt: null };

function setPhase(phase, extra = {}) {
  Object.assign(state, { phase }, extra);
  listeners.forEach((fn) => fn(state));
}

/** Call fn(state) now and whenever Python's state changes (idle, loading, ready, failed). */
export function watch(fn) {
  listeners.add(fn);
  fn(state);
}

/** Start Python (once) and resolve when tokenwalk is importable. */
export function start() {
  if (readyPromise) return readyPromise;
  const pyodide = body.dataset.pyodide;
  const wheel = body.dataset.wheel;
  if (!pyodide || !wheel) {
    setPhase("failed", { error: "this build has no Python runtime (Pyodide) in the site" });
    readyPromise = Promise.reject(new Error(state.error));
    readyPromise.catch(() => {});
    return readyPromise;
  }
  const base = document.baseURI;
  worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  setPhase("loading", { startedAt: performance.now() });
  readyPromise = new Promise((resolve, reject) => {
    worker.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "ready") {
        setPhase("ready", { ms: msg.ms, readyAt: performance.now() });
        resolve();
      } else if (msg.type === "failed") {
        setPhase("failed", { error: msg.error });
        reject(new Error(msg.error));
      } else if (pending.has(msg.id)) {
        const { resolve: done, reject: fail } = pending.get(msg.id);
        pending.delete(msg.id);
        const reply = JSON.parse(msg.json);
        if ("error" in reply) fail(new Error(reply.error));
        else done(reply.ok);
      }
    };
    worker.onerror = (event) => {
      const error = event.message || "the Python worker could not start";
      setPhase("failed", { error });
      reject(new Error(error));
    };
  });
  readyPromise.catch(() => {});
  worker.postMessage({ type: "boot", pyodide: new URL(pyodide, base).href, wheel: new URL(wheel, base).href });
  return readyPromise;
}

/** tokenwalk.browser.entry.<fn>(...args) in the worker; resolves to its JSON-able result. */
export async function call(fn, ...args) {
  await start();
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, fn, args });
  });
}

/** tokenwalk.browser.entry.inspect_gguf on the first bytes of a file (an ArrayBuffer, transferred). */
export async function callGguf(buffer, size, name) {
  await start();
  return new Promise((resolve, reject) => {
    const id = nextId++;
    pending.set(id, { resolve, reject });
    worker.postMessage({ id, gguf: buffer, size, name }, [buffer]);
  });
}

/**
 * A figure's loading state and its triggers. `status` is the figure's status element;
 * `onReady` runs once Python is ready. The figure starts Python when it scrolls into
 * view, when a control in it gets focus, or when its Start button is pressed.
 */
export function wire(figure, status, onReady) {
  let done = false;
  const trigger = () => start().catch(() => {});
  const button = document.createElement("button");
  button.type = "button";
  button.className = "tw-start";
  button.textContent = "Start the interactive version";
  button.addEventListener("click", trigger);
  status.before(button);
  figure.addEventListener("focusin", trigger);
  if ("IntersectionObserver" in window) {
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        seen.disconnect();
        trigger();
      }
    }, { rootMargin: "50% 0px 50% 0px", threshold: 0 });  // half a screen ahead: a head start
    seen.observe(figure);
  }
  watch((s) => {
    figure.dataset.python = s.phase;
    if (s.phase === "loading") {
      status.textContent = "Starting Python in your browser (Pyodide, from this site)…";
      button.hidden = true;
    } else if (s.phase === "failed") {
      status.textContent = `The interactive version could not start: ${s.error}`;
      button.hidden = false;
    } else if (s.phase === "ready" && !done) {
      done = true;
      button.remove();
      status.textContent = "";
      Promise.resolve(onReady()).catch((error) => { status.textContent = String(error.message || error); });
    }
  });
}

function main() {
  const figures = {
    tokenizer: [document.querySelector(".tw-tokenizer"), enhanceTokenizer],
    quantization: [document.querySelector(".tw-quantization"), enhanceQuantizer],
    simulator: [document.querySelector(".tw-simulator"), enhanceSimulator],
  };
  if (!Object.values(figures).some(([el]) => el)) return;
  for (const [el, enhance] of Object.values(figures)) {
    if (el) enhance(el, { call, callGguf, wire, watch });
  }
}

main();
