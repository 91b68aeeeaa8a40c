// Follow-ups in place (docs/decisions/0036-the-reader-honest-words-one-numbering.md): the question appears as the
// next turn at once, the answer streams into the conversation where it will stay, and when it
// is stored the thread's stored page replaces the streamed text, the header, the tallies and
// the sources. compose.js streams; this script only moves its box and follows what it shows
// (its status link when the answer is stored, its error when it failed), so the two stay apart.
(function () {
  "use strict";

  var form = document.querySelector('form[data-form="follow-up"][data-stream-url]');
  var messages = document.querySelector("[data-messages]");
  var box = document.querySelector("[data-live-answer]");
  if (!form || !messages || !box || !window.fetch || !window.DOMParser) return;
  var home = box.parentNode;
  var homeNext = box.nextSibling;
  var question = form.querySelector('[data-field="question"]');
  var picker = form.querySelector('[data-field="composer"]');
  var status = box.querySelector("[data-live-status]");
  var error = box.querySelector("[data-live-error]");
  var announce = document.querySelector("[data-follow-up-status]");
  var KEY = "knowledgeweb:answer-model";
  var turn = null;
  var settled = true;

  // The chosen answer model is remembered for the next question, on any thread.
  try {
    var remembered = window.localStorage.getItem(KEY);
    if (picker && remembered && picker.querySelector('option[value="' + CSS.escape(remembered) + '"]')) {
      picker.value = remembered;
    }
  } catch (e) { /* storage may be off */ }
  if (picker) {
    picker.addEventListener("change", function () {
      try { window.localStorage.setItem(KEY, picker.value); } catch (e) { /* storage may be off */ }
    });
  }

  function item(type, role) {
    var li = document.createElement("li");
    li.className = "message message-" + type + " message-pending";
    li.setAttribute("data-message-type", type);
    li.setAttribute("data-pending", "");
    var label = document.createElement("p");
    label.className = "message-role";
    label.textContent = role;
    li.appendChild(label);
    return li;
  }

  function goHome() {
    if (box.parentNode !== home) home.insertBefore(box, homeNext);
  }

  form.addEventListener("submit", function (event) {
    // compose.js runs first: it streams only when it took the submission over.
    if (!event.defaultPrevented) return;
    settled = false;
    messages.querySelectorAll("[data-pending]").forEach(function (el) { el.remove(); });
    var asked = item("human", "You");
    var heading = document.createElement("h2");
    heading.className = "message-question";
    heading.textContent = question ? question.value : "";
    asked.appendChild(heading);
    messages.appendChild(asked);
    turn = item("ai", "Assistant");
    turn.setAttribute("tabindex", "-1");
    turn.setAttribute("aria-busy", "true");
    turn.appendChild(box);
    messages.appendChild(turn);
    turn.focus({ preventScroll: true });
    turn.scrollIntoView({ block: "nearest" });
  });

  // Bring the page to what is stored: the thread's own page, fetched again.
  function refresh(after) {
    return fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(response.status); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html");
        goHome();
        [["[data-messages]"], [".thread-header"], ["[data-sources-panel]"]].forEach(function (pair) {
          var mine = document.querySelector(pair[0]);
          var theirs = fresh.querySelector(pair[0]);
          if (mine && theirs) mine.innerHTML = theirs.innerHTML;
        });
        document.dispatchEvent(new CustomEvent("knowledgeweb:page-updated"));
        after();
      });
  }

  function done() {
    if (settled) return;
    settled = true;
    var summary = status ? status.textContent.replace(/\s*Open the thread\s*$/, "") : "";
    var incomplete = /^No answer was stored as complete/.test(summary);
    refresh(function () {
      if (incomplete) {
        // A failure is an alert, with what to do; the question stays in the box.
        error.textContent = summary + " Try again, or choose another answer model.";
        error.hidden = false;
        if (announce) announce.textContent = "";
        return;
      }
      box.hidden = true;
      if (question) question.value = "";
      var answers = messages.querySelectorAll('[data-message-type="ai"]');
      var last = answers[answers.length - 1];
      if (last) {
        // Focusable for this move only: the page as stored has no tabindex here.
        last.setAttribute("tabindex", "-1");
        last.addEventListener("blur", function () { last.removeAttribute("tabindex"); }, { once: true });
        last.focus({ preventScroll: true });
        last.scrollIntoView({ block: "nearest" });
      }
      if (announce) announce.textContent = summary;
    }).catch(function () {
      if (announce) announce.textContent = summary + " Reload the page to see it in the thread.";
    });
  }

  function failed() {
    if (settled) return;
    settled = true;
    goHome();
    messages.querySelectorAll("[data-pending]").forEach(function (el) { el.remove(); });
    error.textContent = error.textContent.replace(/\s*$/, "") +
      " Your question is still in the box: try again, or choose another answer model.";
    // What was stored (the question, a partial answer marked as such) shows as stored.
    refresh(function () { error.hidden = false; }).catch(function () { error.hidden = false; });
  }

  new MutationObserver(function () {
    if (status && status.querySelector("a[data-live-thread]")) done();
    else if (!error.hidden && error.textContent) failed();
  }).observe(box, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ["hidden"] });
})();
