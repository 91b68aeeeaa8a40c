// The binding and answer-model admin forms: "Who can use it" kept current as the admin edits,
// and the fields of other providers hidden. The server computes the same summary
// (knowledgeweb/bindings/access.py) for pages without JavaScript and after every submit;
// the wording here must stay identical to it.
(function () {
  "use strict";

  var YES = "\u2713";
  var NO = "\u2717";

  function lines(text) {
    return text
      .split(/\r?\n/)
      .map(function (line) {
        return line.trim();
      })
      .filter(function (line) {
        return line.length > 0;
      });
  }

  function byName(a, b) {
    var x = a.toLowerCase();
    var y = b.toLowerCase();
    if (x !== y) {
      return x < y ? -1 : 1;
    }
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function chosenUsers() {
    // With the admin's two-box selector, the chosen users are every option of "#id_users_to".
    var chosen = document.getElementById("id_users_to");
    var options = [];
    if (chosen) {
      options = Array.prototype.slice.call(chosen.options);
    } else {
      var select = document.getElementById("id_users");
      options = select ? Array.prototype.slice.call(select.selectedOptions) : [];
    }
    var names = options.map(function (option) {
      return option.text;
    });
    return names
      .filter(function (name, index) {
        return names.indexOf(name) === index;
      })
      .sort(byName);
  }

  function checked(id) {
    var box = document.getElementById(id);
    return Boolean(box && box.checked);
  }

  function userLine(name, browser, agents) {
    var where = browser ? "browser " + YES : "browser " + NO + " (agent names are set)";
    var who;
    if (agents.length === 0) {
      who = "any agent name " + YES;
    } else {
      who = (agents.length === 1 ? "agent " : "agents ") + agents.join(", ") + " " + YES;
    }
    return name + ": " + where + " \u00b7 " + who;
  }

  function summaryLines(what) {
    var agentBox = document.getElementById("id_agent_names");
    var agents = agentBox ? lines(agentBox.value) : [];
    var browser = agents.length === 0 || checked("id_browser_use");
    var users = chosenUsers();
    var result = [];
    if (!checked("id_enabled")) {
      result.push("Disabled: nobody can use this " + what + " until it is enabled.");
    }
    if (users.length === 0) {
      result.push("No users are chosen: nobody can use this " + what + ".");
    }
    var scope = document.getElementById("id_scope");
    if (scope && scope.value === "disabled") {
      result.push("Its scope is disabled: it runs no searches for anyone.");
    }
    users.forEach(function (name) {
      result.push(userLine(name, browser, agents));
    });
    return result;
  }

  function renderSummary(box) {
    var list = box.querySelector("[data-access-lines]");
    if (!list) {
      return;
    }
    var wanted = summaryLines(box.dataset.what || "binding");
    var current = Array.prototype.map.call(list.children, function (item) {
      return item.textContent;
    });
    if (current.join("\n") === wanted.join("\n")) {
      return;
    }
    list.replaceChildren.apply(
      list,
      wanted.map(function (text) {
        var item = document.createElement("li");
        item.textContent = text;
        return item;
      })
    );
  }

  function applies(map, key, provider) {
    return !map || !Object.prototype.hasOwnProperty.call(map, key) || map[key].indexOf(provider) !== -1;
  }

  function showProviderFields(spec) {
    var select = document.getElementById("id_provider");
    if (!select) {
      return;
    }
    var provider = select.value;
    if (!provider) {
      return;
    }
    Object.keys(spec.fields || {}).forEach(function (field) {
      document.querySelectorAll(".form-row.field-" + field).forEach(function (row) {
        row.classList.toggle("hidden", !applies(spec.fields, field, provider));
      });
    });
    document.querySelectorAll('input[name="tools"]').forEach(function (box) {
      var offered = applies(spec.tools, box.value, provider);
      var item = box.closest("li") || box.parentElement;
      if (item) {
        item.classList.toggle("hidden", !offered);
      }
      if (!offered) {
        box.checked = false; // a hidden tool is never sent
      }
    });
    var scope = document.getElementById("id_scope");
    if (scope) {
      Array.prototype.forEach.call(scope.options, function (option) {
        var accepted = applies(spec.scopes, option.value, provider);
        option.hidden = !accepted;
        option.disabled = !accepted && !option.selected;
      });
    }
    // A fieldset whose every row is hidden (another provider's query modes) is hidden whole.
    document.querySelectorAll("fieldset.module").forEach(function (fieldset) {
      var rows = fieldset.querySelectorAll(".form-row");
      if (rows.length === 0) {
        return;
      }
      var shown = fieldset.querySelectorAll(".form-row:not(.hidden)");
      fieldset.classList.toggle("hidden", shown.length === 0);
    });
  }

  function start() {
    var box = document.querySelector("[data-access-summary]");
    var holder = document.querySelector("[data-field-providers]");
    var spec = null;
    if (holder) {
      try {
        spec = JSON.parse(holder.getAttribute("data-field-providers"));
      } catch (error) {
        spec = null;
      }
    }
    var form = box ? box.closest("form") : holder ? holder.closest("form") : null;
    if (!form) {
      return;
    }
    var update = function () {
      if (box) {
        renderSummary(box);
      }
      if (spec) {
        showProviderFields(spec);
      }
    };
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    // The two-box user selector moves <option>s without firing events: watch its row.
    var usersRow = form.querySelector(".form-row.field-users");
    if (usersRow && window.MutationObserver) {
      new MutationObserver(function () {
        if (box) {
          renderSummary(box);
        }
      }).observe(usersRow, { childList: true, subtree: true });
    }
    update();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
