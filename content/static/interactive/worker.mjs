// The page's Python: a module Web Worker that boots Pyodide from this site (never another
// host), installs the tokenwalk core wheel and answers calls to tokenwalk.browser.entry.
// Messages in:  {type: "boot", pyodide: URL of pyodide.mjs, wheel: URL of the wheel}
//               {id, fn, args}                       -> tokenwalk.browser.entry.call(fn, JSON args)
//               {id, gguf: ArrayBuffer, size, name}  -> tokenwalk.browser.entry.call_gguf(...)
// Messages out: {type: "ready", ms} | {type: "failed", error} | {id, json} (the JSON reply).
let booted = null;
let browser = null;

async function boot(pyodideUrl, wheelUrl) {
  const t0 = performance.now();
  const { loadPyodide } = await import(pyodideUrl);
  const indexURL = new URL("./", pyodideUrl).href;
  // stdout/stderr to the console's log level: Pyodide's own chatter is not an error.
  const pyodide = await loadPyodide({ indexURL, stdout: () => {}, stderr: (s) => console.log(s) });
  await pyodide.loadPackage(wheelUrl, { messageCallback: () => {}, errorCallback: (s) => console.log(s) });
  browser = pyodide.pyimport("tokenwalk.browser.entry");
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
      self.postMessage({ type: "failed", error: String(error && error.message || error) });
    }
    return;
  }
  try {
    await booted;
    let json;
    if (msg.gguf) {
      json = browser.call_gguf(new Uint8Array(msg.gguf), msg.size, msg.name);
    } else {
      json = browser.call(msg.fn, JSON.stringify(msg.args || []));
    }
    self.postMessage({ id: msg.id, json });
  } catch (error) {
    self.postMessage({ id: msg.id, json: JSON.stringify({ error: String(error && error.message || error) }) });
  }
};
