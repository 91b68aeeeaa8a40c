// Citation previews, the source dialog, claims, backlinks and reasons
// (docs/architecture.md#pages-and-dom-hooks).
//
// Everything shown comes from the server-rendered sources panel entry that the
// citation's href names, never from the answer's link label, and is written
// with textContent only. Without this script the href still jumps to the entry,
// a backlink to its citation, and a reason's button opens its native popover.
(function () {
  "use strict";

  var RESOLVED = 'a.citation[data-citation="resolved"]';
  var UNVERIFIED = 'button.citation[data-citation="unresolved"], button.citation[data-citation="malformed"]';
  // A per-answer source link opens the same dialog as the citations it lists.
  var ANSWER_SOURCE = "a[data-answer-source]";
  // A cited panel entry's number opens it with every claim of the thread that cites it.
  var PANEL_SOURCE = "a[data-panel-source]";
  // The blocks a claim sentence lives in: what the answer's Markdown makes of a paragraph.
  var BLOCKS = "p, li, td, th, h1, h2, h3, h4, h5, h6, dd";
  var SENTENCE_END = /[.!?\u2026\u3002\uff01\uff1f]["'\u201d\u2019\u00bb)\]]*(?=\s|$)/g;
  var CLAIM = "knowledgeweb-claim";
  var dialog = document.querySelector("dialog[data-citation-dialog]");
  var preview = document.querySelector("[data-citation-preview]");
  var panel = document.querySelector("[data-sources-panel]");
  var messages = document.querySelector("[data-messages]");
  var opener = null;
  var restoreFocus = true;
  // The citation the preview is showing, and the one it must not reopen for: focus returns
  // to the citation when the dialog closes, and that is not a request for a preview.
  var previewing = null;
  var suppressed = null;
  // Touch has no hover: a tap opens the dialog, and no preview is shown on the way.
  var lastPointer = "mouse";
  // The citation whose claim is highlighted because the reader jumped to it.
  var pinned = null;

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

  function webUrl(entry, name) {
    var link = entry.querySelector('a[data-field="' + name + '"]');
    if (!link) return "";
    var raw = link.getAttribute("href") || "";
    try {
      var url = new URL(raw);
      return url.protocol === "https:" || url.protocol === "http:" ? url.href : "";
    } catch (error) {
      return "";
    }
  }

  // The "Open in document" page is ours: a same-origin path, nothing else.
  function documentPath(entry) {
    var link = entry.querySelector('a[data-field="document"]');
    var raw = link ? link.getAttribute("href") || "" : "";
    return raw.indexOf("/library/passage/?") === 0 ? raw : "";
  }

  // The document page for this citation: its own anchor (the page's way back) and the
  // sentences closest to its own claim (the only ones marked there).
  function documentFor(path, citation) {
    if (!path || !citation || !citation.matches(RESOLVED) || !citation.id) return path;
    var url = new URL(path, location.origin);
    if (!url.searchParams.get("thread")) return path;
    url.searchParams.set("cite", citation.id);
    var sentences = Object.keys(passageOf(citation));
    if (sentences.length) url.searchParams.set("sentences", sentences.join(","));
    else url.searchParams.delete("sentences");
    return url.pathname + url.search + url.hash;
  }

  function sourceOf(entry) {
    var number = entry.querySelector("[data-source-number]");
    return {
      handle: entry.id,
      number: number ? number.textContent : "",
      title: field(entry, "title"),
      provider: field(entry, "provider"),
      dataset: field(entry, "dataset"),
      page: field(entry, "page"),
      url: webUrl(entry, "url"),
      urlPassage: webUrl(entry, "url-passage"),
      document: documentPath(entry),
      excerpt: field(entry, "excerpt"),
      truncated: entry.getAttribute("data-truncated") === "true",
    };
  }

  // The excerpt sentences closest to the citation's claim, from its data-passage.
  function passageOf(citation) {
    var raw = (citation && citation.getAttribute("data-passage")) || "";
    var found = {};
    raw.split(" ").forEach(function (part) {
      if (/^\d{1,6}$/.test(part)) found[part] = true;
    });
    return found;
  }

  function hasAny(set) {
    return Object.keys(set).length > 0;
  }

  function setText(root, attribute, name, text) {
    var el = root.querySelector("[" + attribute + '="' + name + '"]');
    if (el) el.textContent = text;
    return el;
  }

  // Copies the entry's excerpt into ``target`` node by node (text only), marking the passage.
  function fillExcerpt(target, entry, passage) {
    while (target.firstChild) target.removeChild(target.firstChild);
    var excerpt = entry.querySelector('[data-field="excerpt"]');
    if (!excerpt) return null;
    var first = null;
    excerpt.childNodes.forEach(function (node) {
      if (node.nodeType === Node.TEXT_NODE) {
        target.appendChild(document.createTextNode(node.data));
        return;
      }
      if (!(node instanceof Element)) return;
      var index = node.getAttribute("data-sentence");
      var marked = index !== null && passage[index];
      var copy = document.createElement(marked ? "mark" : "span");
      if (node.classList.contains("excerpt-break")) copy.className = "excerpt-break";
      copy.textContent = node.textContent;
      target.appendChild(copy);
      if (marked && !first) first = copy;
    });
    return first;
  }

  // The preview shows the closest passage when there is one, else the excerpt's opening.
  function fillPreviewExcerpt(target, entry, passage, source) {
    while (target.firstChild) target.removeChild(target.firstChild);
    var excerpt = entry.querySelector('[data-field="excerpt"]');
    var sentences = excerpt ? excerpt.querySelectorAll("[data-sentence]") : [];
    var shown = 0;
    sentences.forEach(function (node) {
      if (!passage[node.getAttribute("data-sentence")]) return;
      if (shown) target.appendChild(document.createTextNode(" … "));
      var mark = document.createElement("mark");
      mark.textContent = node.textContent.length > 400 ? node.textContent.slice(0, 400) + "…" : node.textContent;
      target.appendChild(mark);
      shown += 1;
    });
    if (!shown) {
      var text = source.excerpt.length > 280 ? source.excerpt.slice(0, 280) + "…" : source.excerpt;
      target.appendChild(document.createTextNode(text));
    }
  }

  // ---- claims --------------------------------------------------------------

  // The text nodes of ``block`` (a row: of its cells) that are the answer's own words, not
  // a citation's number or reason.
  function ownText(block, row) {
    var walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var parent = node.parentElement;
        if (!parent || parent.closest(".citation, .citation-reason")) return NodeFilter.FILTER_REJECT;
        var owner = parent.closest(BLOCKS);
        var mine = owner === block || (row && owner && owner.parentElement === block);
        return mine ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      },
    });
    var nodes = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) nodes.push(node);
    return nodes;
  }

  // A citation alone in a table cell claims what its row says (as the server reads it).
  function rowClaim(citation) {
    var row = citation.closest("tr");
    var nodes = row ? ownText(row, true).filter(function (node) {
      return node.data.trim() !== "";
    }) : [];
    if (!nodes.length) return null;
    var range = document.createRange();
    range.setStart(nodes[0], 0);
    var last = nodes[nodes.length - 1];
    range.setEnd(last, last.data.length);
    var words = nodes
      .map(function (node) {
        return node.data.trim();
      })
      .join(" ");
    return { range: range, text: words };
  }

  // The sentence of the answer that holds ``citation``: {range, text}, or null.
  function claimOf(citation) {
    if (!messages || !citation || !messages.contains(citation)) return null;
    var block = citation.closest(BLOCKS);
    if (!block) return null;
    var nodes = [];
    var text = "";
    var position = 0;
    ownText(block, false).forEach(function (node) {
      if (citation.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_PRECEDING) {
        position = text.length + node.data.length;
      }
      nodes.push({ node: node, start: text.length });
      text += node.data;
    });
    if (!text.trim()) return block.matches("td, th") ? rowClaim(citation) : null;
    var ends = [];
    SENTENCE_END.lastIndex = 0;
    for (var match = SENTENCE_END.exec(text); match; match = SENTENCE_END.exec(text)) {
      ends.push(match.index + match[0].length);
    }
    var start = 0;
    var end = text.length;
    for (var i = 0; i < ends.length; i += 1) {
      if (ends[i] <= position) start = ends[i];
      else {
        end = ends[i];
        break;
      }
    }
    // A marker right after a sentence's end belongs to the sentence before it.
    if (start > 0 && text.slice(start, position).trim() === "") {
      end = start;
      start = 0;
      for (var j = 0; j < ends.length && ends[j] < end; j += 1) start = ends[j];
    }
    while (start < end && /\s/.test(text.charAt(start))) start += 1;
    while (end > start && /\s/.test(text.charAt(end - 1))) end -= 1;
    if (start >= end) return null;
    var range = document.createRange();
    var placed = 0;
    nodes.forEach(function (item) {
      var length = item.node.data.length;
      if (!(placed & 1) && start >= item.start && start <= item.start + length) {
        range.setStart(item.node, start - item.start);
        placed |= 1;
      }
      if (!(placed & 2) && end >= item.start && end <= item.start + length) {
        range.setEnd(item.node, end - item.start);
        placed |= 2;
      }
    });
    // The claim as read: the markers left out, and the space they leave before punctuation,
    // except a label that names another source, which is the answer's own word and stays.
    var words = placed === 3 ? claimWords(range) : "";
    return placed === 3 ? { range: range, text: words } : null;
  }

  function claimWords(range) {
    var copy = range.cloneContents();
    copy.querySelectorAll(".citation-reason").forEach(function (el) {
      el.remove();
    });
    copy.querySelectorAll(".citation").forEach(function (el) {
      var label = el.getAttribute("data-label");
      el.replaceWith(document.createTextNode(label || ""));
    });
    return copy.textContent.replace(/\s+/g, " ").replace(/\s+([.,;:!?])/g, "$1").trim();
  }

  function highlightClaim(citation) {
    if (typeof Highlight === "undefined" || !window.CSS || !CSS.highlights) return;
    var claim = claimOf(citation);
    if (claim) CSS.highlights.set(CLAIM, new Highlight(claim.range));
    else CSS.highlights.delete(CLAIM);
  }

  function clearClaim(citation) {
    if (typeof Highlight === "undefined" || !window.CSS || !CSS.highlights) return;
    if (pinned && pinned !== citation && document.contains(pinned)) highlightClaim(pinned);
    else CSS.highlights.delete(CLAIM);
  }

  // ---- preview -----------------------------------------------------------

  function showPreview(citation) {
    if (!preview || citation === suppressed) return;
    if (dialog && dialog.open) return;
    var entry = entryFor(citation);
    if (!entry) return;
    var source = sourceOf(entry);
    var meta = [source.provider, source.dataset, source.page ? "page " + source.page : ""];
    setText(preview, "data-preview-field", "number", source.number);
    setText(preview, "data-preview-field", "title", source.title);
    setText(preview, "data-preview-field", "meta", meta.filter(Boolean).join(" · "));
    var excerpt = preview.querySelector('[data-preview-field="excerpt"]');
    if (excerpt) fillPreviewExcerpt(excerpt, entry, passageOf(citation), source);
    var label = citation.getAttribute("data-label");
    var mismatch = setText(
      preview,
      "data-preview-field",
      "mismatch",
      label ? "Label names another source: the answer labelled this citation \u201c" + label + "\u201d." : ""
    );
    if (mismatch) mismatch.hidden = !label;
    preview.hidden = false;
    previewing = citation;
    citation.setAttribute("aria-describedby", preview.id);
    place(preview, citation);
  }

  function place(card, anchor) {
    var box = anchor.getBoundingClientRect();
    var width = card.offsetWidth;
    var left = Math.max(8, Math.min(box.left, document.documentElement.clientWidth - width - 8));
    var below = box.bottom + 6;
    var top = below + card.offsetHeight > window.innerHeight ? box.top - card.offsetHeight - 6 : below;
    // CSSOM writes are allowed under style-src 'self'; style attributes in markup are not.
    var fixed = getComputedStyle(card).position === "fixed";
    card.style.left = left + (fixed ? 0 : window.scrollX) + "px";
    card.style.top = Math.max(8, top) + (fixed ? 0 : window.scrollY) + "px";
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

  function setLink(name, href) {
    var link = dialog.querySelector('[data-dialog-field="' + name + '"]');
    if (!link) return;
    link.setAttribute("href", href || "#");
    link.hidden = !href;
  }

  // The resolved citations of the answer holding ``link`` (a per-answer source) that cite ``handle``.
  function claimsCiting(link, handle) {
    var answer = link.matches(PANEL_SOURCE) ? messages : link.closest("li.message");
    if (!answer) return [];
    return Array.prototype.slice.call(answer.querySelectorAll(RESOLVED)).filter(function (cited) {
      return cited.getAttribute("href") === "#" + handle;
    });
  }

  function fillClaims(entry, source, citing) {
    var list = dialog.querySelector('[data-dialog-field="claims"]');
    if (!list) return;
    while (list.firstChild) list.removeChild(list.firstChild);
    citing.forEach(function (cited) {
      var item = document.createElement("li");
      var claim = claimOf(cited);
      var quote = document.createElement("q");
      quote.textContent = claim ? claim.text : "(no claim sentence)";
      item.appendChild(quote);
      var passage = document.createElement("p");
      passage.className = "claim-passage";
      var marks = passageOf(cited);
      if (hasAny(marks)) fillPreviewExcerpt(passage, entry, marks, source);
      else passage.textContent = "No sentence of the excerpt shares enough words with this claim.";
      item.appendChild(passage);
      list.appendChild(item);
    });
  }

  function openDialog(citation) {
    if (!dialog || typeof dialog.showModal !== "function") return false;
    var entry = entryFor(citation);
    if (!entry) return false;
    var source = sourceOf(entry);
    var passage = passageOf(citation);
    if (citation.matches(ANSWER_SOURCE + ", " + PANEL_SOURCE)) {
      claimsCiting(citation, source.handle).forEach(function (cited) {
        Object.keys(passageOf(cited)).forEach(function (key) {
          passage[key] = true;
        });
      });
    }
    setText(dialog, "data-dialog-field", "number", source.number);
    setText(dialog, "data-dialog-field", "title", source.title);
    setText(dialog, "data-dialog-field", "provider", source.provider);
    setText(dialog, "data-dialog-field", "dataset", source.dataset);
    setText(dialog, "data-dialog-field", "page", source.page);
    var excerpt = dialog.querySelector('[data-dialog-field="excerpt"]');
    var mark = excerpt ? fillExcerpt(excerpt, entry, passage) : null;
    showRow("dataset", Boolean(source.dataset));
    showRow("page", Boolean(source.page));
    showRow("url", Boolean(source.url));
    showRow("passage", Boolean(mark));
    var url = dialog.querySelector('[data-dialog-field="url"]');
    if (url) {
      url.textContent = source.url;
      url.setAttribute("href", source.url || "#");
    }
    setLink("url-passage", source.urlPassage);
    setLink("document", documentFor(source.document, citation));
    var label = citation.getAttribute("data-label");
    var mismatch = dialog.querySelector('[data-dialog-field="label-mismatch"]');
    if (mismatch) {
      mismatch.textContent = label
        ? "Label names another source: the answer labelled this citation \u201c" + label + "\u201d."
        : "";
      mismatch.hidden = !label;
    }
    // A source list opens the source with every claim of its answer that cites it, each with
    // its own closest passage; a citation opens it with its own claim.
    var listed = citation.matches(ANSWER_SOURCE + ", " + PANEL_SOURCE);
    var citing = listed ? claimsCiting(citation, source.handle) : [];
    var claim = listed ? null : claimOf(citation);
    setText(
      dialog,
      "data-dialog-field",
      "claims-heading",
      citation.matches(PANEL_SOURCE) ? "Claims of this thread that cite this source" : "Claims of this answer that cite this source"
    );
    var claimText = claim ? claim.text : "";
    // The answer's own label stays with its claim where it names another source: the reader
    // sees what the answer said it was citing.
    var ownLabel = citation.getAttribute("data-label");
    if (claim && ownLabel && claimText.indexOf(ownLabel) < 0) claimText += " [" + ownLabel + "]";
    setText(dialog, "data-dialog-field", "claim", claimText);
    showRow("claim", Boolean(claim));
    fillClaims(entry, source, citing);
    showRow("claims", citing.length > 0);
    var note = dialog.querySelector('[data-dialog-field="truncated"]');
    if (note) note.hidden = !source.truncated;
    var jump = dialog.querySelector('[data-dialog-field="panel-link"]');
    if (jump) jump.setAttribute("href", "#" + source.handle);
    hidePreview(citation);
    opener = citation;
    restoreFocus = true;
    dialog.showModal();
    if (mark && excerpt) excerpt.scrollTop = Math.max(0, mark.offsetTop - excerpt.offsetTop - 24);
    return true;
  }

  function openDetailsAround(el) {
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
  }

  // ---- jumps: backlinks and "next unverified" ------------------------------

  function citationById(id) {
    var el = id ? document.getElementById(id) : null;
    if (!el || !messages || !messages.contains(el) || !el.matches(RESOLVED + ", " + UNVERIFIED)) return null;
    return el;
  }

  function jumpTo(citation) {
    openDetailsAround(citation);
    pinned = citation.matches(RESOLVED) ? citation : null;
    suppressed = citation; // a jump is not a request for the preview
    citation.focus({ preventScroll: true });
    citation.scrollIntoView({ block: "center" });
    if (pinned) highlightClaim(pinned);
  }

  // The walk's arrival: the problem in view, focused, and its reason open (an unverified
  // citation's popover, a label mismatch's preview; a "no citations" badge is its own reason).
  function arriveAt(el) {
    // The last stop's reason closes: the walk never leaves one behind, pointing at nothing.
    try {
      document.querySelectorAll(".citation-reason:popover-open").forEach(function (open) {
        open.hidePopover();
      });
    } catch (error) {
      /* a browser without popovers has none open */
    }
    hidePreview(null);
    openDetailsAround(el);
    if (el.matches(UNVERIFIED)) {
      jumpTo(el);
      var reason = document.getElementById(el.getAttribute("popovertarget") || "");
      if (reason && typeof reason.showPopover === "function" && !reason.matches(":popover-open")) {
        reason.showPopover();
      }
      return;
    }
    if (el.matches(RESOLVED)) {
      pinned = el;
      suppressed = null;
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "center" });
      highlightClaim(el);
      showPreview(el);
      return;
    }
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "center" });
  }

  // The walk, started again when a follow-up brings the page up to date (followup.js).
  var walking = null;
  function startWalk() {
    var walkNav = document.querySelector("[data-issue-walk]");
    if (!walkNav || !messages || typeof window.knowledgewebWalk !== "function") return;
    if (walking && walking.nav === walkNav) return;
    if (walking) walking.stop();
    walking = window.knowledgewebWalk({
      nav: walkNav,
      items: function () {
        return messages.querySelectorAll("[data-issue]");
      },
      arrive: arriveAt,
    });
  }
  startWalk();
  document.addEventListener("knowledgeweb:page-updated", startWalk);

  // ---- reasons -----------------------------------------------------------

  function placeReason(reason) {
    var invoker = messages ? messages.querySelector('[popovertarget="' + CSS.escape(reason.id) + '"]') : null;
    if (invoker) place(reason, invoker);
  }

  // ---- copying an excerpt gives its exact text ---------------------------

  document.addEventListener("copy", function (event) {
    var selection = window.getSelection();
    if (!selection || selection.rangeCount !== 1 || !event.clipboardData) return;
    var range = selection.getRangeAt(0);
    var node = range.commonAncestorContainer;
    var element = node instanceof Element ? node : node.parentElement;
    if (!element || !element.closest(".source-excerpt")) return;
    // On screen a single line break inside a paragraph wraps softly; the copy keeps it.
    event.clipboardData.setData("text/plain", range.cloneContents().textContent);
    event.preventDefault();
  });

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
    var backlink = target.closest("a[data-backlink]");
    if (backlink && panel && panel.contains(backlink)) {
      var cited = citationById(backlink.getAttribute("data-backlink"));
      if (cited) {
        event.preventDefault();
        history.pushState(null, "", "#" + cited.id);
        jumpTo(cited);
      }
      return;
    }
    var citation = target.closest(RESOLVED) || target.closest(ANSWER_SOURCE) || target.closest(PANEL_SOURCE);
    if (citation && openDialog(citation)) event.preventDefault();
  });

  document.addEventListener("mouseover", function (event) {
    if (lastPointer === "touch" || lastPointer === "pen") return;
    var target = event.target instanceof Element ? event.target : null;
    var citation = target ? target.closest(RESOLVED) : null;
    if (citation) {
      showPreview(citation);
      highlightClaim(citation);
    }
  });

  document.addEventListener("mouseout", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var citation = target ? target.closest(RESOLVED) : null;
    var to = event.relatedTarget;
    if (citation && citation === suppressed && !within(to, citation)) suppressed = null;
    // Leaving the citation (or the card) for anything but the other keeps nothing open.
    var from = citation || (target && within(target, preview) ? previewing : null);
    if (!from || within(to, from) || within(to, preview)) return;
    if (document.activeElement !== from) {
      hidePreview(from);
      clearClaim(from);
    }
  });

  document.addEventListener("focusin", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (target && target.matches(RESOLVED)) {
      showPreview(target);
      highlightClaim(target);
    }
  });

  document.addEventListener("focusout", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (target && target.matches(RESOLVED)) {
      if (target === suppressed) suppressed = null;
      hidePreview(target);
      if (!dialog || !dialog.open) clearClaim(target);
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape" && preview && !preview.hidden) hidePreview(document.activeElement);
  });

  document.addEventListener(
    "toggle",
    function (event) {
      var reason = event.target;
      if (reason instanceof Element && reason.matches(".citation-reason") && event.newState === "open") {
        placeReason(reason);
      }
    },
    true
  );

  if (dialog) {
    var close = dialog.querySelector("[data-dialog-close]");
    // Closing, the browser gives focus back to the citation that opened the dialog before
    // the "close" event below runs: say first that this focus is not a request for the card
    // (else it flashes open for a frame). Escape closes through "cancel".
    var closeDialog = function () {
      if (opener) suppressed = opener;
      dialog.close();
    };
    dialog.addEventListener("cancel", function () {
      if (opener) suppressed = opener;
    });
    if (close) close.addEventListener("click", closeDialog);
    // A click on the backdrop lands on the dialog element itself.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog) closeDialog();
    });
    var jump = dialog.querySelector('[data-dialog-field="panel-link"]');
    if (jump) {
      jump.addEventListener("click", function () {
        restoreFocus = false;
        closeDialog();
      });
    }
    dialog.addEventListener("close", function () {
      hidePreview(null);
      if (restoreFocus && opener && document.contains(opener)) {
        // Focus goes back to the citation, but the card stays closed until the reader
        // moves to another citation, or away and back.
        suppressed = opener;
        opener.focus();
      } else {
        clearClaim(null);
      }
      opener = null;
    });
  }

  // A jump to a source hidden in the collapsed "every retrieved source" list opens it; a
  // jump to a citation (a backlink followed before this script ran) highlights its claim.
  function revealHash() {
    if (location.hash.length < 2) return;
    var id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (error) {
      return;
    }
    var cited = citationById(id);
    if (cited) {
      jumpTo(cited);
      return;
    }
    var el = document.getElementById(id);
    if (panel && el && el.hasAttribute("data-source-entry") && panel.contains(el)) {
      openDetailsAround(el);
      el.focus({ preventScroll: false });
    }
  }
  window.addEventListener("hashchange", revealHash);
  revealHash();
})();
