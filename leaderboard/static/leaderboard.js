/* statbench leaderboard: sort by any column, filter by family / training / published,
   page through the table, expand a row's provenance, copy its command. Vanilla JS, no
   network.

   Every row of a task is in the page's JSON (#lb-data, or data/task-NAME.js for a board of
   several pages: its cells as the pages print them, in the table's default order); the
   HTML holds the rows of one page of that order, with
   their details. Sorting and filtering work on all the rows; the rows of the current view
   page are shown: a row that this HTML holds is moved into place, any other is built from
   the JSON (text only, never HTML) with a link to its details on the page that holds it.
   Without JavaScript, each page is complete and links to the others. */
(function () {
  "use strict";

  function copyText(text, button) {
    function done(ok) {
      var old = button.textContent;
      button.textContent = ok ? "copied" : "select and copy";
      setTimeout(function () { button.textContent = old; }, 1500);
    }
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallback(text)); });
    } else {
      done(fallback(text));
    }
  }

  function fallback(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "absolute";
    area.style.left = "-9999px";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }

  function toggle(button, open) {
    var detail = document.getElementById(button.getAttribute("aria-controls"));
    if (open === undefined) { open = button.getAttribute("aria-expanded") !== "true"; }
    button.setAttribute("aria-expanded", open ? "true" : "false");
    if (detail) { detail.hidden = !open; }
  }

  /* one listener for the whole page: rows move in and out of the table */
  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target || !target.closest) { return; }
    var copy = target.closest("button.copy");
    if (copy) {
      var source = document.getElementById(copy.getAttribute("data-copy"));
      if (source) { copyText(source.textContent, copy); }
      return;
    }
    var button = target.closest("button.toggle");
    if (button) { toggle(button); }
  });

  var table = document.getElementById("leaderboard");
  var blob = document.getElementById("lb-data");
  /* the rows' JSON: inline, or (a board of several pages) from data/task-NAME.js */
  var data = blob ? JSON.parse(blob.textContent) : window.statbenchLeaderboard;
  if (!table || !data) { return; }
  var order = data.order || Object.keys(data.rows);
  var position = {};
  order.forEach(function (key, index) { position[key] = index; });
  var pageSize = data.page_size || order.length || 1;
  var nodes = {};  /* key -> tbody: the rows this HTML holds, then those built */
  Array.prototype.forEach.call(table.tBodies, function (body) { nodes[body.getAttribute("data-key")] = body; });
  var pagers = Array.prototype.slice.call(document.querySelectorAll("nav.lb-pager"));
  var effHeads = table.tHead ? table.tHead.querySelectorAll("th.eff") : [];  /* the efficiency columns' headers */
  var state = { col: null, dir: null, page: parseInt(table.getAttribute("data-page") || "0", 10) || 0 };

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }

  function space(parent) { parent.appendChild(document.createTextNode(" ")); }

  function build(key) {
    var row = data.rows[key];
    var body = el("tbody", "row" + (row.ref ? " ref" : ""));
    body.id = "row-" + key;
    body.setAttribute("data-key", key);
    body.setAttribute("data-family", row.family || "");
    body.setAttribute("data-trained", row.trained || "");
    body.setAttribute("data-ref", row.ref ? "1" : "0");
    body.setAttribute("data-budget", row.budget || "");
    body.setAttribute("data-seen", row.seen ? "1" : "0");
    var tr = el("tr", "main");
    var model = el("td", "model");
    model.appendChild(el("span", "name", row.name));
    if (row.ref) {
      space(model);
      model.appendChild(el("span", "badge ref", "published"));
      if (row.source) { space(model); model.appendChild(el("span", "source", row.source)); }
    } else {
      if (row.params) { space(model); model.appendChild(el("span", "params", row.params)); }
      if (row.rr) {
        space(model);
        var rr = el("span", "rr", "→ ");
        rr.appendChild(el("span", "name", row.rr[0]));
        if (row.rr[1]) { space(rr); rr.appendChild(el("span", "params", row.rr[1])); }
        model.appendChild(rr);
      }
      if (row.budget) {
        space(model);
        var badge = el("span", "badge budget", "budget: " + row.budget.split(/[,;]\s*/).map(function (part) {
          return part.split("=").slice(1).join("=") || part;
        }).join(", "));
        badge.title = "reduced budget: " + row.budget;
        model.appendChild(badge);
      }
      if (row.base) { space(model); model.appendChild(el("span", "badge base", "baseline")); }
      if (row.lvl) {
        space(model);
        var level = el("span", "badge level " + row.lvl[0], row.lvl[0]);
        level.title = row.lvl[1];
        model.appendChild(level);
      } else if (row.ver) {
        space(model);
        var ver = el("span", "badge " + row.ver[0], row.ver[1]);
        if (row.ver[2]) { ver.title = row.ver[2]; }
        model.appendChild(ver);
      }
    }
    if (row.seen) {
      space(model);
      var seen = el("span", "badge seen", "test queries seen");
      seen.title = "its model card declares that test queries of this task were seen in training or tuning: not ranked with the others";
      model.appendChild(seen);
    }
    tr.appendChild(model);
    var rank = el("td", "rank");
    if (row.rank && row.rank[0]) {
      rank.appendChild(document.createTextNode(row.rank[0]));
      if (row.rank[1]) {
        space(rank);
        var top = el("span", "top-group", "top");
        top.title = data.top_title || "";
        rank.appendChild(top);
      }
    } else {
      var none = el("span", "unranked", "—");
      none.title = (row.rank && row.rank[2]) || "not ranked";
      rank.appendChild(none);
    }
    tr.appendChild(rank);
    tr.appendChild(el("td", "family", row.family || "—"));
    if (data.has_pool) { tr.appendChild(el("td", "pool", row.pool || "—")); }
    tr.appendChild(el("td", "trained", row.trained || "—"));
    data.measures.forEach(function (label, i) {
      var cell = row.cells[i];
      var td = el("td", "num" + (label === data.tested ? " tested" : ""));
      if (cell[2]) {
        var details = el("details", "folds");
        var summary = el("summary", null, cell[0]);
        summary.appendChild(el("span", "std", " ± " + cell[1]));
        details.appendChild(summary);
        var folds = el("table", "fold-table");
        cell[2].forEach(function (value, j) {
          var line = el("tr");
          line.appendChild(el("td", null, data.splits[j][0]));
          line.appendChild(el("td", null, value));
          line.appendChild(el("td", "n", "n=" + data.splits[j][1]));
          folds.appendChild(line);
        });
        details.appendChild(folds);
        td.appendChild(details);
      } else {
        td.appendChild(document.createTextNode(cell[0]));
      }
      if (cell[3]) {
        space(td);
        var up = cell[3] === "up";
        /* the tested measure's marker links to its line in the comparisons' table */
        var marker = el(label === data.tested ? "a" : "span", "sig " + cell[3], up ? "▲" : "▼");
        if (label === data.tested) { marker.href = (data.sig_href || "") + "#sig-" + key; }
        marker.title = "significantly " + (up ? "better" : "worse") + " than " + data.baseline + " on " + label +
          " (Holm-adjusted p = " + cell[4] + ")";
        td.appendChild(marker);
      }
      tr.appendChild(td);
    });
    /* efficiency and cost: blank where not measured (shown by the switch) */
    for (var e = 0; e < (data.eff_columns || 0); e++) {
      var eff = row.eff ? row.eff[e] : null;
      var effCell = el("td", "eff", eff ? eff[0] : "");
      if (effHeads[e] && effHeads[e].classList.contains("effnum")) { effCell.classList.add("effnum"); }
      if (eff && eff[1]) { effCell.title = eff[1]; }
      tr.appendChild(effCell);
    }
    var last = el("td");
    if (!row.ref) {
      var link = el("a", "details-link", "details");
      link.href = data.pages[row.page] + "#row-" + key;
      link.title = "provenance and tests, on page " + (row.page + 1);
      last.appendChild(link);
    }
    tr.appendChild(last);
    body.appendChild(tr);
    return body;
  }

  function valueOf(key, col) {
    var row = data.rows[key];
    if (!row) { return null; }
    if (col.slice(0, 2) === "m:") {
      var v = row.values[col.slice(2)];
      return (v === null || v === undefined) ? null : v;
    }
    if (col.slice(0, 2) === "e:") {
      var measured = (row.effv || {})[col.slice(2)];
      return (measured === null || measured === undefined) ? null : measured;  /* not measured: last */
    }
    var text = row[col];
    return (text === null || text === undefined || text === "") ? null : String(text);
  }

  function filtered() {
    var families = {};
    document.querySelectorAll('input[name="family"]').forEach(function (box) { families[box.value] = box.checked; });
    var trained = (document.querySelector('input[name="trained"]:checked') || { value: "all" }).value;
    var published = document.querySelector('input[name="published"]');
    var showRefs = !published || published.checked;
    var budgetBox = document.querySelector('input[name="budget"]');
    var showBudget = !budgetBox || budgetBox.checked;
    var seenBox = document.querySelector('input[name="seen"]');
    var showSeen = !!(seenBox && seenBox.checked);  /* rows that saw test queries: out of the ranking unless asked */
    return order.filter(function (key) {
      var row = data.rows[key];
      var visible = !(row.family in families) || families[row.family];
      if (row.ref) { return visible && showRefs; }
      if (row.budget && !showBudget) { return false; }
      if (row.seen && !showSeen) { return false; }
      return visible && (trained === "all" || row.trained === trained);
    });
  }

  function view() {
    var keys = filtered();
    if (!state.col) { return keys; }
    var numeric = state.numeric, sign = state.dir === "ascending" ? 1 : -1, col = state.col;
    var items = keys.map(function (key) { return { key: key, value: valueOf(key, col) }; });
    items.sort(function (a, b) {
      if (a.value === null && b.value === null) { return position[a.key] - position[b.key]; }
      if (a.value === null) { return 1; }   /* missing values last, whatever the direction */
      if (b.value === null) { return -1; }
      var c = numeric ? (a.value - b.value) : a.value.localeCompare(b.value);
      return c !== 0 ? sign * c : position[a.key] - position[b.key];
    });
    return items.map(function (item) { return item.key; });
  }

  function pageButton(label, page, current) {
    var button = el("button", current ? "current" : null, label);
    button.type = "button";
    button.setAttribute("data-page", page);
    if (current) { button.setAttribute("aria-current", "page"); }
    return button;
  }

  function drawPagers(total, count) {
    pagers.forEach(function (nav) {
      while (nav.firstChild) { nav.removeChild(nav.firstChild); }
      var first = total ? state.page * pageSize + 1 : 0;
      var last = Math.min(total, (state.page + 1) * pageSize);
      nav.appendChild(el("span", "showing", total ? "Rows " + first + "–" + last + " of " + total : "No row matches"));
      var prev = pageButton("‹ previous", "prev", false);
      prev.disabled = state.page === 0;
      nav.appendChild(prev);
      var shown = -1;
      for (var p = 0; p < count; p++) {
        if (p === 0 || p === count - 1 || Math.abs(p - state.page) <= 2) {
          if (shown !== p - 1) { nav.appendChild(el("span", "gap", "…")); }
          nav.appendChild(pageButton(String(p + 1), p, p === state.page));
          shown = p;
        }
      }
      var next = pageButton("next ›", "next", false);
      next.disabled = state.page >= count - 1;
      nav.appendChild(next);
    });
  }

  function render() {
    var keys = view();
    var count = Math.max(1, Math.ceil(keys.length / pageSize));
    state.page = Math.min(Math.max(0, state.page), count - 1);
    var slice = keys.slice(state.page * pageSize, (state.page + 1) * pageSize);
    var current = Array.prototype.slice.call(table.tBodies);
    var same = current.length === slice.length && current.every(function (body, i) {
      return body.getAttribute("data-key") === slice[i];
    });
    if (!same) {
      current.forEach(function (body) { table.removeChild(body); });
      var fragment = document.createDocumentFragment();
      slice.forEach(function (key) {
        if (!nodes[key]) { nodes[key] = build(key); }
        nodes[key].hidden = false;
        fragment.appendChild(nodes[key]);
      });
      table.appendChild(fragment);
    }
    if (pagers.length) { drawPagers(keys.length, count); }
  }

  function sortBy(th) {
    var current = th.getAttribute("aria-sort");
    var numeric = th.getAttribute("data-type") === "num";
    var dir;
    if (current === "descending") { dir = "ascending"; }
    else if (current === "ascending") { dir = "descending"; }
    else { dir = numeric ? "descending" : "ascending"; }
    table.querySelectorAll("thead th[data-col]").forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", dir);
    state.col = th.getAttribute("data-col");
    state.dir = dir;
    state.numeric = numeric;
    state.page = 0;
    render();
  }

  table.querySelectorAll("thead th[data-col] button.sort").forEach(function (button) {
    button.addEventListener("click", function () { sortBy(button.parentNode); });
  });

  pagers.forEach(function (nav) {
    nav.addEventListener("click", function (event) {
      var button = event.target.closest ? event.target.closest("button[data-page]") : null;
      if (!button || button.disabled) { return; }
      var page = button.getAttribute("data-page");
      if (page === "prev") { state.page -= 1; }
      else if (page === "next") { state.page += 1; }
      else { state.page = parseInt(page, 10); }
      render();
      if (nav !== pagers[0] && pagers[0].scrollIntoView) { pagers[0].scrollIntoView(); }
    });
  });

  document.querySelectorAll(".controls input").forEach(function (input) {
    if (input.name === "efficiency") {
      /* a switch of columns, not of rows: the view stays as it is */
      var show = function () { table.classList.toggle("show-eff", input.checked); };
      input.addEventListener("change", show);
      show();
      return;
    }
    input.addEventListener("change", function () { state.page = 0; render(); });
  });

  render();

  /* task-X.pN.html#row-KEY (a row's "details" from another page): open its details */
  var hash = window.location.hash;
  if (hash.slice(0, 5) === "#row-" && nodes[hash.slice(5)] && table.contains(nodes[hash.slice(5)])) {
    var toggleButton = nodes[hash.slice(5)].querySelector("button.toggle");
    if (toggleButton) { toggle(toggleButton, true); }
    nodes[hash.slice(5)].scrollIntoView();
  }
  if (window.performance && performance.mark) { performance.mark("leaderboard-ready"); }
}());
