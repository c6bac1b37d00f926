// Interactive figures: the tokenizer (figure 1), the quantizer (figure 10) and TokenWalk,
// the simulator. Progressive enhancement: without this file each shows its build-time
// rendering and its note (hidden only once its figure is live). Python (Pyodide, served by
// this site) starts in a Web Worker (python.js) only when a reader reaches for one of them:
// a button, focus in a control or the pointer over the figure, or the figure coming within
// two screens of the view. Nothing is sent to any other host. Every URL here carries its
// version in its folder's name (static/interactive.HASH/, publish/optimize.py).
import { call, callGguf, callKept, forgetGguf, keptGgufFiles, oneLine, start, watch } from "./python.js";
import { latestWins } from "./latest.js";
import { enhanceTokenizer } from "./tokenizer.js";
import { enhanceQuantizer } from "./quantizer.js";
import { enhanceSimulator } from "./simulator.js";

/**
 * A figure's loading state and its triggers. `status` is the figure's status element;
 * `onReady` runs once Python is first ready. The figure starts Python when it comes within
 * two screens of the view, when the pointer enters it or a control in it gets focus, or
 * when its Start button is pressed; if Python
 * fails to start, the message says why and the button tries again.
 */
export function wire(figure, status, onReady) {
  let done = false;
  let failedOnce = false;
  const trigger = () => { if (!failedOnce) start().catch(() => {}); };
  const button = document.createElement("button");
  button.type = "button";
  button.className = "tw-start";
  button.textContent = "Start the interactive version";
  button.addEventListener("click", () => start().catch(() => {}));
  status.before(button);
  figure.addEventListener("focusin", (e) => { if (e.target !== button) trigger(); });
  figure.addEventListener("pointerenter", trigger, { once: true });
  if ("IntersectionObserver" in window) {
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        seen.disconnect();
        trigger();
      }
    }, { rootMargin: "200% 0px 200% 0px", threshold: 0 });  // two screens ahead: ready when the reader arrives
    seen.observe(figure);
  }
  watch((s) => {
    if (done) return;  // from here on the figure reports its own calls' errors
    figure.dataset.python = s.phase;
    if (s.phase === "loading") {
      status.textContent = "Starting Python in your browser (Pyodide, from this site)…";
      button.hidden = true;
    } else if (s.phase === "failed") {
      failedOnce = true;  // retried by the button only: no loop of failing downloads
      status.textContent = `The interactive version could not start: ${s.error}`;
      button.textContent = "Try again";
      button.hidden = false;
    } else if (s.phase === "ready") {
      done = true;
      button.remove();
      status.textContent = "";
      Promise.resolve(onReady()).catch((error) => {
        console.warn("tokenwalk:", error);
        status.textContent = oneLine(error);
      });
    }
  });
}

function main() {
  const figures = {
    tokenizer: [document.querySelector(".tw-tokenizer"), enhanceTokenizer],
    quantization: [document.querySelector(".tw-quantization"), enhanceQuantizer],
    simulator: [document.querySelector(".tw-simulator"), enhanceSimulator],
  };
  const api = { call, callKept, callGguf, forgetGguf, wire, watch, latestWins, oneLine };
  // what the page keeps for a restarted worker, read by the browser tests
  window.twKeptGguf = keptGgufFiles;
  for (const [el, enhance] of Object.values(figures)) {
    if (!el) continue;
    try {
      enhance(el, api);
    } catch (error) {  // one figure's bug leaves the others, and its own static rendering
      console.error("tokenwalk:", error);
    }
  }
}

main();
