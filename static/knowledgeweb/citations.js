// Citation previews and the source dialog (docs/architecture.md#pages-and-dom-hooks).
//
// Everything shown comes from the server-rendered sources panel entry that the
// citation's href names, never from the answer's link label, and is written
// with textContent only. Without this script the href still jumps to the entry.
(function () {
  "use strict";

  var RESOLVED = 'a.citation[data-citation="resolved"]';
  // A per-answer source link opens the same dialog as the citations it lists.
  var ANSWER_SOURCE = "a[data-answer-source]";
  var dialog = document.querySelector("dialog[data-citation-dialog]");
  var preview = document.querySelector("[data-citation-preview]");
  var panel = document.querySelector("[data-sources-panel]");
  var opener = null;
  var restoreFocus = true;
  // The citation the preview is showing, and the one it must not reopen for: focus returns
  // to the citation when the dialog closes, and that is not a request for a preview.
  var previewing = null;
  var suppressed = null;
  // Touch has no hover: a tap opens the dialog, and no preview is shown on the way.
  var lastPointer = "mouse";

  // The panel entry a citation points at, or null. The entry must sit in the
  // panel and carry the same source id, so nothing else can stand in for it.
  function entryFor(citation) {
    if (!panel || !citation) return null;
    var href = citation.getAttribute("href") || "";
    if (href.charAt(0) !== "#") return null;
    var entry = document.getElementById(href.slice(1));
    if (!entry || !entry.hasAttribute("data-source-entry") || !panel.contains(entry)) return null;
    var id = citation.getAttribute("data-source-id") || citation.getAttribute("data-answer-source");
    if (!id || entry.getAttribute("data-source-id") !== id) return null;
    return entry;
  }

  function field(entry, name) {
    var el = entry.querySelector('[data-field="' + name + '"]');
    return el ? el.textContent : "";
  }

  function safeUrl(entry) {
    var link = entry.querySelector('a[data-field="url"]');
    if (!link) return "";
    var raw = link.getAttribute("href") || "";
    try {
      var url = new URL(raw);
      return url.protocol === "https:" || url.protocol === "http:" ? url.href : "";
    } catch (error) {
      return "";
    }
  }

  function sourceOf(entry) {
    return {
      handle: entry.id,
      title: field(entry, "title"),
      provider: field(entry, "provider"),
      dataset: field(entry, "dataset"),
      page: field(entry, "page"),
      url: safeUrl(entry),
      excerpt: field(entry, "excerpt"),
      truncated: entry.getAttribute("data-truncated") === "true",
    };
  }

  function setText(root, attribute, name, text) {
    var el = root.querySelector("[" + attribute + '="' + name + '"]');
    if (el) el.textContent = text;
    return el;
  }

  // ---- preview -----------------------------------------------------------

  function showPreview(citation) {
    if (!preview || citation === suppressed) return;
    if (dialog && dialog.open) return;
    var entry = entryFor(citation);
    if (!entry) return;
    var source = sourceOf(entry);
    var meta = [source.provider, source.dataset, source.page ? "page " + source.page : ""];
    setText(preview, "data-preview-field", "title", source.title);
    setText(preview, "data-preview-field", "meta", meta.filter(Boolean).join(" · "));
    var excerpt = source.excerpt.length > 280 ? source.excerpt.slice(0, 280) + "…" : source.excerpt;
    setText(preview, "data-preview-field", "excerpt", excerpt);
    preview.hidden = false;
    previewing = citation;
    citation.setAttribute("aria-describedby", preview.id);
    place(citation);
  }

  function place(citation) {
    var box = citation.getBoundingClientRect();
    var width = preview.offsetWidth;
    var left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
    var below = box.bottom + 6;
    var top = below + preview.offsetHeight > window.innerHeight ? box.top - preview.offsetHeight - 6 : below;
    // CSSOM writes are allowed under style-src 'self'; style attributes in markup are not.
    preview.style.left = left + window.scrollX + "px";
    preview.style.top = Math.max(8, top) + window.scrollY + "px";
  }

  function hidePreview(citation) {
    if (!preview) return;
    preview.hidden = true;
    var shown = citation || previewing;
    if (shown && shown.removeAttribute) shown.removeAttribute("aria-describedby");
    previewing = null;
  }

  // ---- dialog ------------------------------------------------------------

  function showRow(name, visible) {
    var row = dialog.querySelector('[data-dialog-row="' + name + '"]');
    if (row) row.hidden = !visible;
  }

  function openDialog(citation) {
    if (!dialog || typeof dialog.showModal !== "function") return false;
    var entry = entryFor(citation);
    if (!entry) return false;
    var source = sourceOf(entry);
    setText(dialog, "data-dialog-field", "title", source.title);
    setText(dialog, "data-dialog-field", "provider", source.provider);
    setText(dialog, "data-dialog-field", "dataset", source.dataset);
    setText(dialog, "data-dialog-field", "page", source.page);
    setText(dialog, "data-dialog-field", "excerpt", source.excerpt);
    showRow("dataset", Boolean(source.dataset));
    showRow("page", Boolean(source.page));
    showRow("url", Boolean(source.url));
    var url = dialog.querySelector('[data-dialog-field="url"]');
    if (url) {
      url.textContent = source.url;
      url.setAttribute("href", source.url || "#");
    }
    var note = dialog.querySelector('[data-dialog-field="truncated"]');
    if (note) note.hidden = !source.truncated;
    var jump = dialog.querySelector('[data-dialog-field="panel-link"]');
    if (jump) jump.setAttribute("href", "#" + source.handle);
    hidePreview(citation);
    opener = citation;
    restoreFocus = true;
    dialog.showModal();
    return true;
  }

  function openDetailsAround(el) {
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }

  // ---- wiring ------------------------------------------------------------

  function within(node, el) {
    return Boolean(el && node instanceof Node && el.contains(node));
  }

  document.addEventListener(
    "pointerdown",
    function (event) {
      lastPointer = event.pointerType || "mouse";
      // A tap or click outside the card and its citation closes the card.
      if (preview && !preview.hidden && !within(event.target, preview) && !within(event.target, previewing)) {
        hidePreview(null);
      }
    },
    true
  );

  if (preview) {
    // Pressing on the card must not move focus off its citation (which would hide the card
    // and let the tap's click land on whatever lies beneath).
    preview.addEventListener("mousedown", function (event) {
      event.preventDefault();
    });
  }

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!target) return;
    // The card swallows its own taps: it opens the source it shows, and nothing beneath it reacts.
    if (preview && within(target, preview)) {
      event.preventDefault();
      event.stopPropagation();
      if (previewing) openDialog(previewing);
      return;
    }
    var citation = target.closest(RESOLVED) || target.closest(ANSWER_SOURCE);
    if (citation && openDialog(citation)) event.preventDefault();
  });

  document.addEventListener("mouseover", function (event) {
    if (lastPointer === "touch" || lastPointer === "pen") return;
    var target = event.target instanceof Element ? event.target : null;
    var citation = target ? target.closest(RESOLVED) : null;
    if (citation) showPreview(citation);
  });

  document.addEventListener("mouseout", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var citation = target ? target.closest(RESOLVED) : null;
    var to = event.relatedTarget;
    if (citation && citation === suppressed && !within(to, citation)) suppressed = null;
    // Leaving the citation (or the card) for anything but the other keeps nothing open.
    var from = citation || (target && within(target, preview) ? previewing : null);
    if (!from || within(to, from) || within(to, preview)) return;
    if (document.activeElement !== from) hidePreview(from);
  });

  document.addEventListener("focusin", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (target && target.matches(RESOLVED)) showPreview(target);
  });

  document.addEventListener("focusout", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (target && target.matches(RESOLVED)) {
      if (target === suppressed) suppressed = null;
      hidePreview(target);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && preview && !preview.hidden) hidePreview(document.activeElement);
  });

  if (dialog) {
    var close = dialog.querySelector("[data-dialog-close]");
    if (close) {
      close.addEventListener("click", function () {
        dialog.close();
      });
    }
    // A click on the backdrop lands on the dialog element itself.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) dialog.close();
    });
    var jump = dialog.querySelector('[data-dialog-field="panel-link"]');
    if (jump) {
      jump.addEventListener("click", function () {
        restoreFocus = false;
        dialog.close();
      });
    }
    dialog.addEventListener("close", function () {
      hidePreview(null);
      if (restoreFocus && opener && document.contains(opener)) {
        // Focus goes back to the citation, but the card stays closed until the reader
        // moves to another citation, or away and back.
        suppressed = opener;
        opener.focus();
      }
      opener = null;
    });
  }

  // A jump to a source hidden in the collapsed "every retrieved source" list opens it.
  function revealHash() {
    if (!panel || location.hash.length < 2) return;
    var id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (error) {
      return;
    }
    var el = document.getElementById(id);
    if (el && el.hasAttribute("data-source-entry") && panel.contains(el)) {
      openDetailsAround(el);
      el.focus({ preventScroll: false });
    }
  }
  window.addEventListener("hashchange", revealHash);
  revealHash();
})();
