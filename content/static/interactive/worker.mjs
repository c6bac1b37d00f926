// The page's Python: a module Web Worker that boots Pyodide from this site (never another
// host), unpacks the tokenwalk core wheel and answers calls to tokenwalk_app.entry.
// Messages in:  {type: "boot", pyodide: URL of pyodide.mjs, wheel: URL of the wheel}
//               {id, fn, args}                       -> tokenwalk_app.entry.call(fn, JSON args)
//               {id, gguf: ArrayBuffer, size, name}  -> tokenwalk_app.entry.call_gguf(...)
// Messages out: {type: "ready", ms} | {type: "failed", error}
//               {type: "begin", id} when a call starts (its time limit counts from here)
//               {id, json} (the JSON reply) | {id, error, fatal} (one line; fatal: Python's
//               state may be broken, python.js ends this worker).
// Errors are one line for the page; tracebacks go to the console (a warning, not an error).
let booted = null;
let pyodide = null;
let entry = null;
let failBoot = null;  // while booting: reject the boot (a download answered with an error)

const FATAL = new Set(["MemoryError", "RecursionError", "SystemError"]);
const realFetch = self.fetch.bind(self);
// Pyodide does not fail when its wasm or stdlib answers 404: it waits forever. Every
// download during the boot goes through here, so an HTTP error ends the boot at once.
self.fetch = async (input, init) => {
  const url = String((input && input.url) || input);
  const name = url.split("?")[0].split("/").pop();
  let response;
  try {
    response = await realFetch(input, init);
  } catch (error) {
    if (failBoot) failBoot(new Error(`${name} could not be downloaded (${error.message})`));
    throw error;
  }
  if (!response.ok && failBoot) failBoot(new Error(`${name} could not be downloaded (HTTP ${response.status})`));
  else if (failBoot) checkFile(name, response);
  return response;
};

// The files Python starts from, and the bytes each begins with. A host that answers every
// path with its index page (status 200, a single-page-app host) or a broken download would
// otherwise leave Pyodide waiting until the boot's time limit, or end in "exit(1)" or a
// traceback with a temporary path: one line names the file instead.
const MAGIC = { wasm: [0x00, 0x61, 0x73, 0x6d], zip: [0x50, 0x4b, 0x03, 0x04] };
function kindOf(name) {
  if (name === "pyodide.asm.wasm") return "wasm";
  if (name === "python_stdlib.zip" || name.endsWith(".whl")) return "zip";
  return null;
}

/** Fail the boot, in one line naming the file, when `response` (ok) is not the file `name`
 * should be: served as HTML, not beginning with its format's magic bytes, or (the wasm)
 * not valid WebAssembly. Reads a copy of the body; the caller's response is untouched. */
const checked = new Set();  // each file once: the boot asks for the runtime's files twice (prefetch, then Pyodide)
function checkFile(name, response) {
  const kind = kindOf(name);
  if (!kind || checked.has(name)) return;
  checked.add(name);
  const type = (response.headers.get("content-type") || "").split(";")[0].trim();
  if (type === "text/html") {
    failBoot(new Error(`${name} was served as HTML (content-type ${type}), not as the file: the host answers `
      + "with a web page where the file belongs"));
    return;
  }
  response.clone().arrayBuffer().then((buffer) => {
    if (!failBoot) return;
    const head = new Uint8Array(buffer, 0, Math.min(4, buffer.byteLength));
    const what = kind === "wasm" ? "a WebAssembly" : "a zip";
    if (!MAGIC[kind].every((byte, i) => head[i] === byte)) {
      const html = /^\s*</.test(new TextDecoder().decode(new Uint8Array(buffer, 0, Math.min(64, buffer.byteLength))));
      failBoot(new Error(html
        ? `${name} was served as HTML, not as the file: the host answers with a web page where the file belongs`
        : `${name} is not ${what} file (its first bytes are wrong): a broken download or the wrong file on the host`));
    } else if (kind === "wasm" && !WebAssembly.validate(buffer)) {
      failBoot(new Error(`${name} is not valid WebAssembly (${buffer.byteLength.toLocaleString("en")} bytes): `
        + "a broken download or the wrong file on the host"));
    }
  }, () => {});
}

function lastLine(text) {
  const lines = String(text).split("\n").map((l) => l.trim()).filter(Boolean);
  return lines.length ? lines[lines.length - 1] : String(text);
}

// Files loadPyodide fetches one after another (pyodide.mjs, then pyodide.asm.mjs, then the
// wasm and the standard library): asked for at once when the boot starts, so they arrive
// in parallel and loadPyodide finds them in the browser's cache (the site sends them as
// immutable, publish/serve.py: each reaches the server once; a host that forbade caching
// would send them twice, README "Hosting").
const RUNTIME_FILES = ["pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"];

async function fetchWheel(wheelUrl) {
  const response = await fetch(wheelUrl);
  if (!response.ok) throw new Error(`${wheelUrl.split("/").pop()} could not be downloaded (HTTP ${response.status})`);
  return response.arrayBuffer();
}

async function boot(pyodideUrl, wheelUrl) {
  const t0 = performance.now();
  const failed = new Promise((_, reject) => { failBoot = reject; });
  failed.catch(() => {});  // raced below; a rejection between two races is not "unhandled"
  try {
    const indexURL = new URL("./", pyodideUrl).href;
    for (const name of RUNTIME_FILES) fetch(indexURL + name).then((r) => r.arrayBuffer()).catch(() => {});
    // the core wheel downloads while Python starts, and is unpacked once it has
    const wheel = fetchWheel(wheelUrl);
    wheel.catch(() => {});
    const { loadPyodide } = await Promise.race([import(pyodideUrl), failed]);
    // stdout/stderr to the console's log level: Pyodide's own chatter is not an error.
    pyodide = await Promise.race([loadPyodide({ indexURL, stdout: () => {}, stderr: (s) => console.log(s) }), failed]);
    const buffer = await Promise.race([wheel, failed]);
    try {
      // a pure-Python wheel needs no installer: unpacked into site-packages, it imports
      const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
      pyodide.unpackArchive(buffer, "wheel", { extractDir: sitePackages });
      // site-packages' finder forgets its listing, so the new package is found; the
      // whole importlib.invalidate_caches() would first import importlib.metadata (a
      // quarter of a second of compiling, publish/stdlib.py)
      pyodide.runPython(`import sys\nfinder = sys.path_importer_cache.get(${JSON.stringify(sitePackages)})\n`
        + "if finder is not None: finder.invalidate_caches()");
      entry = pyodide.pyimport("tokenwalk_app.entry");
    } catch (error) {
      console.warn("tokenwalk: the core does not import:", error.message);
      throw new Error(`the tokenwalk core did not load (${lastLine(error.message)})`);
    }
  } finally {
    failBoot = null;
  }
  return performance.now() - t0;
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "boot") {
    if (!booted) booted = boot(msg.pyodide, msg.wheel);
    try {
      const ms = await booted;
      self.postMessage({ type: "ready", ms });
    } catch (error) {
      console.warn("tokenwalk: Python did not start:", error);
      self.postMessage({ type: "failed", error: lastLine((error && error.message) || error) });
    }
    return;
  }
  try {
    await booted;
  } catch (error) {
    return;  // the page was told when the boot failed
  }
  self.postMessage({ type: "begin", id: msg.id });
  try {
    const json = msg.gguf
      ? entry.call_gguf(new Uint8Array(msg.gguf), msg.size, msg.name, msg.fn || "inspect_gguf")
      : entry.call(msg.fn, JSON.stringify(msg.args || []));
    self.postMessage({ id: msg.id, json });
  } catch (error) {
    const python = pyodide && error instanceof pyodide.ffi.PythonError;
    console.warn(`tokenwalk_app.entry.${msg.fn || "call_gguf"}:`, (error && error.message) || error);
    // a Python exception other than these leaves Python usable; anything else (a JavaScript
    // error, Pyodide's fatal error) may not
    const fatal = !python || FATAL.has(error.type);
    self.postMessage({ id: msg.id, error: lastLine((error && error.message) || error), fatal });
  }
};
