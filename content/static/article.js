// Progressive enhancement only: the article reads completely without this file.
// - the dark/light toggle (the choice is remembered; base.html applies it before paint),
//   which also switches raster figures that have a dark variant
// - a copy button on every code block
// - tabs: stacked panes become a tab list
// - the citation gets the page's address when content/article.toml names none
// - a figure's or a section's link control also copies its address (the live figures'
//   settings in the query string included) and says so in a live region
// (On a phone the table of contents starts folded: article.html decides it while parsing.)
(function () {
  "use strict";
  var root = document.documentElement;

  function isDark() {
    var chosen = root.getAttribute("data-theme");
    if (chosen) return chosen === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }

  // Raster figures with a dark variant (<picture data-theme-swap>): without JavaScript the
  // <source media="(prefers-color-scheme: dark)"> follows the system; here it follows the
  // reader's choice: "all" (dark chosen), "not all" (light chosen), or the system again.
  function syncPictures() {
    var chosen = root.getAttribute("data-theme");
    document.querySelectorAll("picture[data-theme-swap] source.theme-dark-source").forEach(function (source) {
      source.media = chosen === "dark" ? "all" : chosen === "light" ? "not all" : (source.getAttribute("data-media") || "");
    });
  }

  function setupThemeToggle() {
    syncPictures();
    var button = document.querySelector(".theme-toggle");
    if (!button) return;
    var sync = function () { button.setAttribute("aria-pressed", String(isDark())); syncPictures(); };
    button.addEventListener("click", function () {
      var next = isDark() ? "light" : "dark";
      root.setAttribute("data-theme", next);
      try { localStorage.setItem("theme", next); } catch (e) { /* private mode: not remembered */ }
      sync();
    });
    sync();
  }

  function setupCopyButtons() {
    if (!navigator.clipboard) return;
    document.querySelectorAll(".code-block").forEach(function (block) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "copy-button";
      button.textContent = "Copy";
      button.addEventListener("click", function () {
        var code = block.querySelector("code");
        navigator.clipboard.writeText(code ? code.innerText : "").then(function () {
          button.textContent = "Copied";
          setTimeout(function () { button.textContent = "Copy"; }, 1500);
        }, function () { button.textContent = "Select and copy"; });
      });
      block.appendChild(button);
    });
  }

  function setupTabs() {
    document.querySelectorAll(".tabs").forEach(function (tabs, t) {
      var panes = Array.prototype.filter.call(tabs.children, function (el) {
        return el.classList.contains("tab-pane");
      });
      if (panes.length < 2) return;
      var list = document.createElement("div");
      list.className = "tablist";
      list.setAttribute("role", "tablist");
      var buttons = panes.map(function (pane, i) {
        var button = document.createElement("button");
        button.type = "button";
        button.id = "tab-" + t + "-" + i;
        button.setAttribute("role", "tab");
        button.textContent = pane.getAttribute("data-label");
        pane.setAttribute("role", "tabpanel");
        pane.setAttribute("aria-labelledby", button.id);
        button.addEventListener("click", function () { select(i); });
        list.appendChild(button);
        return button;
      });
      function select(k) {
        panes.forEach(function (pane, i) {
          pane.hidden = i !== k;
          buttons[i].setAttribute("aria-selected", String(i === k));
          buttons[i].tabIndex = i === k ? 0 : -1;
        });
      }
      list.addEventListener("keydown", function (e) {
        var i = buttons.indexOf(document.activeElement);
        if (i < 0) return;
        if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
          var k = (i + (e.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length;
          select(k);
          buttons[k].focus();
        }
      });
      tabs.insertBefore(list, panes[0]);
      tabs.classList.add("is-enhanced");
      select(0);
    });
  }

  // Without JavaScript the link is a plain #fig-ID link (the address bar then holds it);
  // with it, the same navigation happens and the full address is copied as well.
  function setupLinkCopy() {
    var status = document.createElement("p");
    status.className = "link-status";
    status.setAttribute("role", "status");
    document.body.appendChild(status);
    var timer = 0;
    function say(text) {
      status.textContent = text;
      clearTimeout(timer);
      timer = setTimeout(function () { status.textContent = ""; }, 2500);
    }
    document.addEventListener("click", function (e) {
      var link = e.target.closest && e.target.closest("a.figure-link, a.heading-anchor");
      if (!link) return;
      var url = location.origin + location.pathname + location.search + link.getAttribute("href");
      var what = link.classList.contains("figure-link") ? link.getAttribute("aria-label").replace(/^Link to /, "")
        : "section";
      if (!navigator.clipboard) return;
      navigator.clipboard.writeText(url).then(function () {
        say("Link to " + what + " copied");
      }, function () { say("Link to " + what + " is in the address bar"); });
    });
  }

  // The citation names the page's address; where the metadata file gives none, it is the
  // address the reader has open (without the fragment and the live figures' settings).
  function setupCitation() {
    var section = document.querySelector(".cite-this[data-add-url]");
    if (!section || !/^https?:$/.test(location.protocol)) return;
    var url = location.origin + location.pathname;
    var text = section.querySelector("[data-cite-text]");
    var bibtex = section.querySelector("[data-cite-bibtex]");
    if (text) text.textContent += " " + url;
    if (bibtex) bibtex.textContent = bibtex.textContent.replace(/\n\}$/, ",\n  url = {" + url + "}\n}");
  }

  setupCitation();
  setupThemeToggle();
  setupCopyButtons();
  setupTabs();
  setupLinkCopy();
})();
