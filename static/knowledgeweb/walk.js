// The walk through a page's items ("Next issue"): "n of m", previous and next, a highlight
// that does not depend on :focus-visible, and an arrival hook (docs/decisions/0036-the-reader-honest-words-one-numbering.md).
//
// Reusable: a page gives it its navigation element, a function listing the items in page
// order (so items added later are walked too) and what to do on arrival; optionally its own
// keys (options.keys: {next, previous}; "n" and "p" by default) and words for the position
// (options.position(n, m)). Without this script the navigation's links still jump to the
// first item.
(function () {
  "use strict";

  function createWalk(options) {
    var nav = options.nav;
    var position = nav.querySelector("[data-walk-position]");
    var previous = nav.querySelector('[data-walk="previous"]');
    var next = nav.querySelector('[data-walk="next"]');
    var current = null;
    var keyNext = (options.keys && options.keys.next) || "n";
    var keyPrevious = (options.keys && options.keys.previous) || "p";
    var words =
      options.position ||
      function (n, m) {
        return n + " of " + m;
      };
    var keys = nav.querySelector("[data-walk-keys]");
    if (keys) keys.hidden = false;

    function items() {
      return Array.prototype.slice.call(options.items()).filter(function (el) {
        return el.id && el.isConnected;
      });
    }

    function go(step) {
      var all = items();
      if (!all.length) return null;
      var index = all.indexOf(document.activeElement);
      if (index < 0 && current) index = all.indexOf(current);
      if (index < 0) index = step > 0 ? 0 : all.length - 1;
      else index = (index + step + all.length) % all.length;
      return show(all, index);
    }

    function show(all, index) {
      if (current) current.classList.remove("walk-current");
      current = all[index];
      current.classList.add("walk-current");
      if (position) position.textContent = words(index + 1, all.length);
      if (previous) {
        previous.hidden = false;
        previous.setAttribute("href", "#" + all[(index - 1 + all.length) % all.length].id);
      }
      if (next) next.setAttribute("href", "#" + all[(index + 1) % all.length].id);
      options.arrive(current);
      return current;
    }

    function onClick(event) {
      var target = event.target instanceof Element ? event.target.closest("[data-walk]") : null;
      if (!target || !nav.contains(target)) return;
      event.preventDefault();
      go(target.getAttribute("data-walk") === "previous" ? -1 : 1);
    }
    nav.addEventListener("click", onClick);

    // "n" and "p" (or the page's own keys) walk from anywhere on the page but a text field (the
    // keyboard's way to keep walking once focus has moved to the item).
    function onKey(event) {
      if (event.altKey || event.ctrlKey || event.metaKey || event.defaultPrevented) return;
      var target = event.target instanceof Element ? event.target : null;
      if (target && target.closest("input, textarea, select, [contenteditable], dialog[open]")) return;
      if (event.key === keyNext || event.key === keyPrevious) {
        event.preventDefault();
        go(event.key === keyPrevious ? -1 : 1);
      }
    }
    document.addEventListener("keydown", onKey);

    return {
      nav: nav,
      go: go,
      // Make ``item`` the current stop (a page that arrives by its own means, such as a link).
      place: function (item) {
        var all = items();
        var index = all.indexOf(item);
        return index < 0 ? null : show(all, index);
      },
      stop: function () {
        nav.removeEventListener("click", onClick);
        document.removeEventListener("keydown", onKey);
        if (current) current.classList.remove("walk-current");
      },
      current: function () {
        return current;
      },
    };
  }

  window.knowledgewebWalk = createWalk;
})();
