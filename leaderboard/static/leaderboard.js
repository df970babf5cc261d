/* statbench leaderboard: sort by any column, filter by family / training / published,
   expand a row's provenance, copy its command. Vanilla JS, no network. */
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

  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (source) { copyText(source.textContent, button); }
    });
  });

  document.querySelectorAll("button.toggle").forEach(function (button) {
    button.addEventListener("click", function () {
      var detail = document.getElementById(button.getAttribute("aria-controls"));
      var open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", open ? "true" : "false");
      if (detail) { detail.hidden = !open; }
    });
  });

  var table = document.getElementById("leaderboard");
  var blob = document.getElementById("lb-data");
  if (!table || !blob) { return; }
  var data = JSON.parse(blob.textContent);

  function valueOf(body, col) {
    var row = data.rows[body.getAttribute("data-key")];
    if (!row) { return null; }
    if (col.slice(0, 2) === "m:") {
      var v = row.values[col.slice(2)];
      return (v === null || v === undefined) ? null : v;
    }
    var text = row[col];
    return (text === null || text === undefined || text === "") ? null : String(text);
  }

  function sortBy(th) {
    var col = th.getAttribute("data-col");
    var numeric = th.getAttribute("data-type") === "num";
    var current = th.getAttribute("aria-sort");
    var dir;
    if (current === "descending") { dir = "ascending"; }
    else if (current === "ascending") { dir = "descending"; }
    else { dir = numeric ? "descending" : "ascending"; }
    table.querySelectorAll("thead th[data-col]").forEach(function (other) { other.setAttribute("aria-sort", "none"); });
    th.setAttribute("aria-sort", dir);
    var sign = dir === "ascending" ? 1 : -1;
    var bodies = Array.prototype.slice.call(table.tBodies).map(function (body, index) {
      return { body: body, index: index, value: valueOf(body, col) };
    });
    bodies.sort(function (a, b) {
      if (a.value === null && b.value === null) { return a.index - b.index; }
      if (a.value === null) { return 1; }   /* missing values last, whatever the direction */
      if (b.value === null) { return -1; }
      var c = numeric ? (a.value - b.value) : a.value.localeCompare(b.value);
      return c !== 0 ? sign * c : a.index - b.index;
    });
    bodies.forEach(function (item) { table.appendChild(item.body); });
  }

  table.querySelectorAll("thead th[data-col] button.sort").forEach(function (button) {
    button.addEventListener("click", function () { sortBy(button.parentNode); });
  });

  function applyFilters() {
    var families = {};
    document.querySelectorAll('input[name="family"]').forEach(function (box) { families[box.value] = box.checked; });
    var trained = (document.querySelector('input[name="trained"]:checked') || { value: "all" }).value;
    var published = document.querySelector('input[name="published"]');
    var showRefs = !published || published.checked;
    Array.prototype.forEach.call(table.tBodies, function (body) {
      var family = body.getAttribute("data-family");
      var isRef = body.getAttribute("data-ref") === "1";
      var visible = !(family in families) || families[family];
      if (isRef) { visible = visible && showRefs; }
      else if (trained !== "all") { visible = visible && body.getAttribute("data-trained") === trained; }
      body.hidden = !visible;
    });
  }

  document.querySelectorAll('.controls input').forEach(function (input) {
    input.addEventListener("change", applyFilters);
  });
  applyFilters();
}());
