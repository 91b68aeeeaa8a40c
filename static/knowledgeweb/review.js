// Review mode (docs/review.md): the one walk (walk.js) over the review items, with "j" and
// "k" for next and previous; for a reviewer, "1"-"4" (a citation) or "1"-"3" (an answer)
// press the current item's verdict button, whose form posts and comes back at the next
// item's anchor; "n" opens the current item's note, Escape leaves it. Without this script
// every verdict is still a plain form post.
(function () {
  "use strict";

  var page = document.querySelector('[data-page="review"]');
  var nav = document.querySelector("[data-review-walk]");
  if (!page || !nav || typeof window.knowledgewebWalk !== "function") return;
  var judging = page.getAttribute("data-review-keys") === "on";

  function items() {
    return page.querySelectorAll("[data-review-item]");
  }

  var walk = window.knowledgewebWalk({
    nav: nav,
    items: items,
    keys: { next: "j", previous: "k" },
    position: function (n, m) {
      return "Item " + n + " of " + m;
    },
    arrive: function (item) {
      item.focus({ preventScroll: true });
      item.scrollIntoView({ block: "start" });
    },
  });

  function current() {
    var active = document.activeElement instanceof Element ? document.activeElement : null;
    var item = active ? active.closest("[data-review-item]") : null;
    return item || walk.current();
  }

  // Arriving from a verdict's redirect (or any link to an item): that item is the current one.
  function fromHash() {
    var id = window.location.hash.slice(1);
    var item = id ? document.getElementById(id) : null;
    if (item && item.hasAttribute("data-review-item")) walk.place(item);
  }
  fromHash();
  window.addEventListener("hashchange", fromHash);

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.defaultPrevented) return;
    var target = event.target instanceof Element ? event.target : null;
    if (target && target.closest("textarea, input, select, [contenteditable]")) {
      if (event.key === "Escape" && target.closest("[data-review-item]")) {
        event.preventDefault();
        target.closest("[data-review-item]").focus();
      }
      return;
    }
    if (!judging) return;
    var item = current();
    if (!item) return;
    if (event.key === "n") {
      var note = item.querySelector("[data-verdict-note-input]");
      if (note) {
        event.preventDefault();
        note.focus();
      }
      return;
    }
    if (/^[1-4]$/.test(event.key)) {
      var button = item.querySelector('[data-verdict-key="' + event.key + '"]');
      if (button) {
        event.preventDefault();
        button.click();
      }
    }
  });
})();
