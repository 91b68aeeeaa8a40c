// Streamed answers (issue 13): a form with data-stream-url is sent with fetch and its
// server-sent events are shown as they arrive. Every model-written string becomes a text
// node; links are built only for resolved citations, to a handle the server validated.
// Without JavaScript the form posts normally and the server redirects to the thread.
(function () {
  "use strict";

  function parseEvents(buffer, onEvent) {
    var parts = buffer.split("\n\n");
    var rest = parts.pop();
    parts.forEach(function (block) {
      var name = "message";
      var data = [];
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event:") === 0) name = line.slice(6).trim();
        else if (line.indexOf("data:") === 0) data.push(line.slice(5).replace(/^ /, ""));
      });
      if (data.length) {
        try { onEvent(name, JSON.parse(data.join("\n"))); } catch (e) { /* a broken event is skipped */ }
      }
    });
    return rest;
  }

  function citationNode(part) {
    if (part.cite === "resolved") {
      var target = document.getElementById(part.handle);
      var node = document.createElement(target ? "a" : "span");
      if (target) node.setAttribute("href", "#" + part.handle);
      node.className = "citation live-citation";
      node.setAttribute("data-citation", "resolved");
      node.setAttribute("title", part.title || "");
      node.textContent = "[" + part.number + "]";
      return node;
    }
    var inert = document.createElement("span");
    inert.className = "citation live-citation";
    inert.setAttribute("data-citation", part.cite);
    // A word, never the model's label or number (which could read as a real source's number).
    inert.textContent = part.cite === "malformed" ? "malformed" : "no source";
    var label = (part.label || "").replace(/^citation:\s*/i, "");
    if (label) inert.setAttribute("title", "The answer labelled it \u201c" + label + "\u201d");
    return inert;
  }

  function summary(done) {
    var c = done.citations || {};
    if (done.status !== "answered") return "No answer was stored as complete: " + done.detail;
    var text = "Answer stored. " + (c.resolved || 0) + " of " + (c.total || 0) + " citations have a source found";
    var reasons = Object.keys(c.by_reason || {}).map(function (key) {
      return key.replace(/_/g, " ") + ": " + c.by_reason[key];
    });
    if (reasons.length) text += "; without one (" + reasons.join(", ") + ")";
    return text + ".";
  }

  function setup(form) {
    var box = form.parentNode.querySelector("[data-live-answer]");
    if (!box || !window.fetch || !window.TextDecoder) return;
    var button = form.querySelector("button[type=submit]");
    var label = button.textContent;
    var picker = form.querySelector('[data-field="composer"]');
    var textArea = box.querySelector("[data-live-text]");
    var status = box.querySelector("[data-live-status]");
    var error = box.querySelector("[data-live-error]");
    form.addEventListener("submit", function (event) {
      // On the Ask page the quoted-sentences default posts as before (ask.js shows its progress);
      // only an answer model streams here.
      if (form.getAttribute("data-stream") === "model-only" && (!picker || picker.value === "extractive")) return;
      event.preventDefault();
      button.disabled = true;
      box.hidden = false;
      error.hidden = true;
      textArea.textContent = "";
      var paragraph = document.createElement("p");
      textArea.appendChild(paragraph);
      status.textContent = "Searching and writing the answer…";
      form.setAttribute("aria-busy", "true");
      function finish() {
        button.disabled = false;
        button.textContent = label;
        form.removeAttribute("aria-busy");
        var formStatus = form.querySelector("[data-ask-status]");
        if (formStatus) formStatus.textContent = "";
      }
      fetch(form.getAttribute("data-stream-url"), {
        method: "POST", body: new FormData(form), credentials: "same-origin",
        headers: { "Accept": "text/event-stream" }
      }).then(function (response) {
        if (!response.ok) {
          return response.json().then(function (body) {
            status.textContent = "";
            error.textContent = body.error || "The question could not be asked.";
            error.hidden = false;
          });
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var buffer = "";
        function onEvent(name, data) {
          if (name === "start") {
            status.textContent = data.sources + (data.sources === 1 ? " source" : " sources") +
              " found; writing the answer…";
          } else if (name === "sentence") {
            data.parts.forEach(function (part) {
              if (part.cite) paragraph.appendChild(citationNode(part));
              else if (part.text.indexOf("\n") >= 0) {
                paragraph.appendChild(document.createTextNode(part.text));
                paragraph = document.createElement("p");
                textArea.appendChild(paragraph);
              } else paragraph.appendChild(document.createTextNode(part.text));
            });
          } else if (name === "error") {
            status.textContent = "";
            error.textContent = data.error;
            error.hidden = false;
          } else if (name === "done") {
            status.textContent = summary(data) + " ";
            var link = document.createElement("a");
            link.setAttribute("href", data.thread_url);
            link.setAttribute("data-live-thread", "");
            link.textContent = "Open the thread";
            status.appendChild(link);
          }
        }
        function pump() {
          return reader.read().then(function (chunk) {
            if (chunk.done) { parseEvents(buffer + "\n\n", onEvent); return; }
            buffer = parseEvents(buffer + decoder.decode(chunk.value, { stream: true }), onEvent);
            return pump();
          });
        }
        return pump();
      }).catch(function () {
        error.textContent = "The connection was lost before the answer finished; nothing was stored for it.";
        error.hidden = false;
      }).then(finish);
    });
  }

  document.querySelectorAll("form[data-stream-url]").forEach(setup);
})();
