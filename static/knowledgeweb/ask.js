// The Ask page while a search runs: the button is disabled (no second submission)
// and the status line says what is happening. Without this script the form posts
// and redirects exactly the same way.
(function () {
  "use strict";

  var form = document.querySelector('form[data-form="ask"]');
  if (!form) return;
  var button = form.querySelector('[data-action="ask"]');
  var status = form.querySelector("[data-ask-status]");
  var label = button ? button.textContent : "";

  function chosenSource() {
    var radio = form.querySelector('input[name="binding"]:checked');
    if (!radio) return "";
    var title = form.querySelector('label[for="' + radio.id + '"] [data-source-title]');
    return title ? title.textContent.trim() : "";
  }

  form.addEventListener("submit", function (event) {
    if (form.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    var source = chosenSource();
    form.setAttribute("aria-busy", "true");
    if (button) {
      button.disabled = true;
      button.textContent = "Searching…";
    }
    if (status) {
      status.textContent =
        (source ? "Searching “" + source + "”" : "Searching") +
        " and composing the answer. This can take a few seconds; the answer opens when it is ready.";
    }
  });

  // Coming back with the browser's Back button may restore the page as it was left.
  window.addEventListener("pageshow", function () {
    form.removeAttribute("aria-busy");
    if (button) {
      button.disabled = false;
      button.textContent = label;
    }
    if (status) status.textContent = "";
  });
})();
