// A windowed thread page (issue 25): "Earlier turns" loads the previous window into this page
// on demand, and a tool message's hits load when its summary is expanded.
//
// Without this script both still work: "Earlier turns" is the previous window's URL, and a
// tool message's "Show the hits" opens its hits on a page of their own.
(function () {
  "use strict";

  var messages = document.querySelector("[data-messages]");
  var panel = document.querySelector("[data-sources-panel]");
  var parser = new DOMParser();

  function fetchPage(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (response) {
      if (!response.ok) throw new Error("HTTP " + response.status);
      return response.text().then(function (text) {
        return parser.parseFromString(text, "text/html");
      });
    });
  }

  // --- Earlier turns --------------------------------------------------------------------------

  // Panel entries the loaded window holds and this page does not, added to the same list.
  function mergePanel(page) {
    if (!panel) return;
    page.querySelectorAll("[data-source-list]").forEach(function (list) {
      var kind = list.getAttribute("data-source-list");
      var here = panel.querySelector('[data-source-list="' + kind + '"]');
      if (!here) {
        here = document.createElement("ol");
        here.className = "source-list";
        here.setAttribute("data-source-list", kind);
        panel.appendChild(here);
      }
      Array.prototype.forEach.call(list.children, function (entry) {
        if (entry.id && document.getElementById(entry.id)) return;
        here.appendChild(document.importNode(entry, true));
      });
    });
  }

  function loadEarlier(link) {
    if (link.getAttribute("aria-busy") === "true") return;
    link.setAttribute("aria-busy", "true");
    fetchPage(link.getAttribute("href"))
      .then(function (page) {
        var list = page.querySelector("[data-messages]");
        if (!list || !messages) throw new Error("no messages in the earlier window");
        var first = messages.firstElementChild;
        var added = Array.prototype.map.call(list.children, function (item) {
          var copy = document.importNode(item, true);
          messages.insertBefore(copy, first);
          return copy;
        });
        mergePanel(page);
        // The walk goes on before the loaded window, from where the loaded page would go.
        var nav = document.querySelector("[data-issue-walk]");
        var loadedNav = page.querySelector("[data-issue-walk]");
        if (nav) {
          var before = loadedNav ? loadedNav.getAttribute("data-walk-before") : null;
          if (before) nav.setAttribute("data-walk-before", before);
          else nav.removeAttribute("data-walk-before");
        }
        var earlier = page.querySelector("[data-earlier-turns]");
        var holder = link.closest(".thread-window-link");
        if (earlier) {
          link.setAttribute("href", earlier.getAttribute("href"));
          link.setAttribute("data-window-target", earlier.getAttribute("data-window-target"));
          link.removeAttribute("aria-busy");
        } else if (holder) {
          holder.remove();
        }
        if (added.length) {
          var last = added[added.length - 1];
          last.setAttribute("tabindex", "-1");
          last.focus({ preventScroll: false });
        }
      })
      .catch(function () {
        // The window's own URL still shows it.
        window.location.assign(link.getAttribute("href"));
      });
  }

  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("[data-earlier-turns]") : null;
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    loadEarlier(link);
  });

  // --- A tool message's hits ------------------------------------------------------------------

  function loadHits(details) {
    var holder = details.querySelector("[data-tool-hits]");
    if (!holder || holder.getAttribute("aria-busy") === "true") return;
    holder.setAttribute("aria-busy", "true");
    fetchPage(holder.getAttribute("data-tool-hits"))
      .then(function (page) {
        var loaded = page.querySelector("[data-tool-hits-body] details[data-tool-message]");
        if (!loaded) throw new Error("no hits");
        Array.prototype.forEach.call(loaded.children, function (child) {
          if (child.tagName.toLowerCase() === "summary") return;
          details.insertBefore(document.importNode(child, true), holder);
        });
        holder.remove();
      })
      .catch(function () {
        holder.removeAttribute("aria-busy");
      });
  }

  // ``toggle`` does not bubble: listened for in the capture phase.
  document.addEventListener(
    "toggle",
    function (event) {
      var details = event.target;
      if (details instanceof HTMLDetailsElement && details.open && details.hasAttribute("data-tool-message")) {
        loadHits(details);
      }
    },
    true
  );
  document.addEventListener("click", function (event) {
    var link = event.target instanceof Element ? event.target.closest("[data-tool-hits-link]") : null;
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    var details = link.closest("details[data-tool-message]");
    if (details) loadHits(details);
  });
})();
