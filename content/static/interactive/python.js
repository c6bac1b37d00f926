// The page's Python: one Web Worker (worker.mjs: Pyodide and the tokenwalk core, both from
// this site) shared by the three figures. It starts only when a figure asks for it.
//
// Nothing here can leave a figure waiting forever:
// - starting has a time limit, and a failed download (an HTTP error, a stalled request, a
//   wheel that does not import) ends it with a one-line message; start() can then be
//   called again (the figures' Start button) and tries afresh;
// - every call has a time limit, counted from when the worker begins it;
// - a call that overruns its limit, or a worker that crashes or reports a fatal error
//   (MemoryError and the like), ends the worker: the call at fault is rejected with its
//   message, every other pending call is rejected with `retry: true` (it did nothing wrong:
//   run it again), and the next call starts a fresh worker, which first replays the calls
//   the figures asked it to keep (SmolLM2's vocabulary, the GGUF headers read).
// Messages are one line; Python's tracebacks go to the console (worker.mjs).

const LIMITS = {
  boot: 120_000,         // Pyodide (about 14 MB) and the core wheel, on a slow connection
  call: 20_000,          // one figure update
  load_smollm2: 60_000,  // building SmolLM2's tokenizer (49,152 tokens and their merges)
  load_gguf_tokenizer: 60_000,  // a picked file's vocabulary (Gemma 4: 262,144 tokens, 514,906 merges)
};

/** A time limit in ms (window.twPythonLimits overrides them: the tests' short limits). */
function limit(name) {
  const own = globalThis.twPythonLimits || {};
  return own[name] ?? LIMITS[name] ?? own.call ?? LIMITS.call;
}

let worker = null;       // the running worker, or null
let booting = null;      // its start: a promise, null when none
let nextId = 1;
const pending = new Map();  // id -> {fn, limit, timer, resolve, reject, worker}
const kept = [];            // calls replayed on every new worker: {message}
// GGUF headers replayed on every new worker, by file name (a file picked again replaces its
// entry), oldest first; at most as many files as Python keeps (entry.MAX_GGUF_MODELS) and
// KEPT_GGUF_BYTES in all, the newest always kept: twelve picks of a 34 MB header held
// 548 MB and took 9.8 s to replay after a restart.
const keptGguf = new Map();  // name -> {message, buffer}
const KEPT_GGUF_FILES = 16;
const KEPT_GGUF_BYTES = 64 << 20;
const listeners = new Set();

/** Python's state: phase idle | loading | ready | failed; error (one line) when failed. */
export const state = { phase: "idle", ms: null, error: null, starts: 0 };

function setPhase(phase, extra = {}) {
  Object.assign(state, { phase }, extra);
  listeners.forEach((fn) => fn(state));
}

/** Call fn(state) now and whenever Python's state changes. */
export function watch(fn) {
  listeners.add(fn);
  fn(state);
}

/** The first line of an error worth showing (never a traceback). */
export function oneLine(error) {
  const text = String((error && error.message) || error || "unknown error");
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.length ? lines[lines.length > 1 && lines[0].startsWith("Traceback") ? lines.length - 1 : 0] : text;
}

function seconds(ms) {
  return `${Math.round(ms / 100) / 10} s`;
}

/** End worker `w` (if it is still the running one) and settle every call pending in it:
 * the call it was working on (it had begun) is at fault unless `culprit` names one already
 * settled; the others are rejected with error.retry. */
function stop(w, reason, culprit = null) {
  if (worker !== w) return;
  worker = null;
  booting = null;
  w.terminate();
  for (const [id, call] of pending) {
    if (call.worker !== w) continue;
    pending.delete(id);
    clearTimeout(call.timer);
    if (id === culprit) continue;
    if (culprit === null && call.begun) {
      call.reject(new Error(`Python stopped while working on this (${reason}); it restarts at the next change`));
      continue;
    }
    const error = new Error(`Python was restarted (${reason}); this figure’s last change runs again`);
    error.retry = true;
    call.reject(error);
  }
}

function onReply(w, msg) {
  const call = pending.get(msg.id);
  if (!call) return;
  if (msg.type === "begin") {
    call.begun = true;
    clearTimeout(call.timer);
    call.timer = setTimeout(() => overrun(w, msg.id), call.limit);
    return;
  }
  pending.delete(msg.id);
  clearTimeout(call.timer);
  if (msg.error !== undefined) {
    call.reject(new Error(oneLine(msg.error)));
    if (msg.fatal) stop(w, `${oneLine(msg.error).split(":")[0]} in ${call.fn}`);
    return;
  }
  let reply;
  try {
    reply = JSON.parse(msg.json);
  } catch (error) {
    call.reject(new Error(`${call.fn}: Python’s reply is not JSON`));
    stop(w, `a garbled reply from ${call.fn}`);
    return;
  }
  if ("error" in reply) call.reject(new Error(oneLine(reply.error)));
  else call.resolve(reply.ok);
}

function overrun(w, id) {
  const call = pending.get(id);
  if (!call) return;
  pending.delete(id);
  call.reject(new Error(`Stopped: this took longer than ${seconds(call.limit)}; Python restarts at the next change`));
  stop(w, `${call.fn} ran past its time limit`, id);
}

/** Start Python (once) and resolve when tokenwalk is importable; after a failure, the
 * next start() tries again with a fresh worker. */
export function start() {
  if (booting) return booting;
  const body = document.body;
  const pyodide = body.dataset.pyodide;
  const wheel = body.dataset.wheel;
  if (!pyodide || !wheel) {
    const error = "this build has no Python runtime (Pyodide) in the site";
    setPhase("failed", { error });
    return Promise.reject(new Error(error));
  }
  const base = document.baseURI;
  // The worker's URL, versioned by the build (base.html's data-worker).
  const url = body.dataset.worker ? new URL(body.dataset.worker, base) : new URL("./worker.mjs", import.meta.url);
  const w = new Worker(url, { type: "module" });
  worker = w;
  state.starts += 1;
  setPhase("loading", { error: null, startedAt: performance.now() });
  const ready = new Promise((resolve, reject) => {
    const bootMs = limit("boot");
    const timer = setTimeout(() => reject(new Error(`Python did not start within ${seconds(bootMs)}: a download stalled`)),
      bootMs);
    w.onmessage = (event) => {
      const msg = event.data;
      if (msg.type === "ready") {
        clearTimeout(timer);
        resolve(msg.ms);
      } else if (msg.type === "failed") {
        clearTimeout(timer);
        reject(new Error(oneLine(msg.error)));
      } else {
        onReply(w, msg);
      }
    };
    w.onerror = (event) => {
      event.preventDefault();  // reported here, once, not again as an uncaught error
      clearTimeout(timer);
      const error = event.message ? oneLine(event.message) : "the Python worker could not load or stopped";
      console.warn("tokenwalk: the Python worker stopped:", event.message, event.filename, event.lineno);
      reject(new Error(error));
      stop(w, error);
    };
    w.onmessageerror = () => stop(w, "a message could not be read");
  });
  w.postMessage({ type: "boot", pyodide: new URL(pyodide, base).href, wheel: new URL(wheel, base).href });
  const started = ready.then(async (ms) => {
    for (const { message, buffer } of [...kept, ...keptGguf.values()]) {  // what the figures asked Python to keep
      const copy = buffer ? buffer.slice(0) : null;
      await send(w, copy ? { ...message, gguf: copy } : message, copy ? [copy] : [], limit(message.fn || "call"), message.fn || "inspect_gguf")
        .catch((error) => console.warn("tokenwalk: replaying", message.fn || message.name, "failed:", error.message));
    }
    setPhase("ready", { ms, readyAt: performance.now() });
  }, (error) => {
    if (worker === w) stop(w, error.message);
    else w.terminate();
    setPhase("failed", { error: error.message });
    throw error;
  });
  booting = started;
  started.catch(() => {});
  return started;
}

function send(w, message, transfer, ms, fn) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    // queued behind other calls: the limit restarts when the worker begins this one
    const call = { fn, limit: ms, resolve, reject, worker: w, timer: null };
    pending.set(id, call);
    call.timer = setTimeout(() => overrun(w, id), ms + limit("call"));
    w.postMessage({ id, ...message }, transfer);
  });
}

/** tokenwalk_app.entry.<fn>(...args) in the worker: resolves to its result, rejects
 * with a one-line Error (error.retry: Python restarted for another call's sake). */
export async function call(fn, ...args) {
  return send(await running(), { fn, args }, [], limit(fn), fn);
}

async function running() {
  await start();
  if (!worker) await start();  // it stopped while replaying: once more
  return worker;
}

/** call(), and replay it on every restarted worker (state the figure relies on). */
export async function callKept(fn, ...args) {
  const out = await call(fn, ...args);
  kept.push({ message: { fn, args } });
  return out;
}

/** tokenwalk_app.entry.inspect_gguf (or another of its GGUF_FUNCTIONS, `fn`) on the
 * first bytes of a file (an ArrayBuffer); a header read in full is kept for restarted workers. */
export async function callGguf(buffer, size, name, fn = "inspect_gguf") {
  const w = await running();
  const copy = buffer.slice(0);
  const out = await send(w, { gguf: copy, size, name, fn }, [copy], limit(fn), fn);
  if (!out.need_bytes) keepGguf(fn, name, { message: { size, name, fn }, buffer });
  return out;
}

function keepGguf(fn, name, entry) {
  // the simulator's headers by file name; the tokenizer's picked vocabulary, one at a time
  if (fn !== "inspect_gguf") for (const [key, kept] of keptGguf) if (kept.message.fn === fn) keptGguf.delete(key);
  const key = `${fn}:${name}`;
  keptGguf.delete(key);
  keptGguf.set(key, entry);
  let bytes = 0;
  for (const { buffer } of keptGguf.values()) bytes += buffer.byteLength;
  for (const [oldest, { buffer }] of keptGguf) {
    if (keptGguf.size <= 1 || (keptGguf.size <= KEPT_GGUF_FILES && bytes <= KEPT_GGUF_BYTES)) break;
    keptGguf.delete(oldest);
    bytes -= buffer.byteLength;
  }
}

/** Forget the GGUF headers kept for restarted workers (the reader chose a preset: a
 * restarted worker then starts without them; a file chosen again is read again). */
export function forgetGguf() {
  for (const [key, kept] of keptGguf) if (kept.message.fn === "inspect_gguf") keptGguf.delete(key);
}

/** The GGUF headers kept for restarted workers: [{name, bytes}], oldest first (for tests). */
export function keptGgufFiles() {
  return [...keptGguf.values()].map(({ message, buffer }) => ({ name: message.name, bytes: buffer.byteLength }));
}
