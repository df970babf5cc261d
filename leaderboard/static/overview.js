// The overview (index.html): sort by any column, filter by language, family and training.
// Plain DOM, no network. A column is found by its header's position. A language hides the
// other languages' task columns and shows the ranks computed over its tasks (each row's
// data-sets: set -> [tasks run, Borda rank, mean rank]); family and training only hide rows.
// A blank cell sorts last both ways (a missing task is never a low score).
(function () {
  "use strict";

  function setUp(table) {
    var controls = document.querySelector('.overview-filters[data-table="' + table.id + '"]');
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var ranksAt = heads.length - 3;  // tasks run, Borda rank, mean rank: the last three columns
    var state = {col: null, dir: 1};
    rows.forEach(function (row) {
      var sets = row.getAttribute("data-sets");
      row.sets = sets ? JSON.parse(sets) : null;
      if (row.sets) row.sets.all = [0, 1, 2].map(function (i) { return row.cells[ranksAt + i].textContent; });
    });

    function sortBy(index) {
      var kind = heads[index].getAttribute("data-sort");
      if (state.col === index) {
        state.dir = -state.dir;
      } else {
        state.col = index;
        state.dir = kind === "desc" ? -1 : 1;  // figures and tasks run: most first; ranks and text: smallest
      }
      heads.forEach(function (th) { th.removeAttribute("aria-sort"); });
      heads[index].setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      applySort();
    }

    function applySort() {
      if (state.col === null) return;
      var text = heads[state.col].getAttribute("data-sort") === "text";
      var keyed = rows.map(function (row, index) {
        var raw = row.cells[state.col].textContent.trim();
        return {row: row, index: index, blank: raw === "", v: text ? raw : parseFloat(raw)};
      });
      keyed.sort(function (a, b) {
        if (a.blank !== b.blank) return a.blank ? 1 : -1;
        if (!a.blank && a.v !== b.v) {
          if (text) return state.dir * a.v.localeCompare(b.v);
          return state.dir * (a.v < b.v ? -1 : 1);
        }
        return a.index - b.index;
      });
      keyed.forEach(function (k) { body.appendChild(k.row); });
    }

    function applyFilters() {
      var values = {};
      controls.querySelectorAll("select[data-filter]").forEach(function (select) {
        values[select.getAttribute("data-filter")] = select.value;
      });
      var language = values.language || "all";
      var hidden = heads.map(function (th) {
        var lang = th.getAttribute("data-lang");
        th.hidden = language !== "all" && lang !== null && lang !== language;
        return th.hidden;
      });
      var shown = 0;
      rows.forEach(function (row) {
        hidden.forEach(function (hide, i) { row.cells[i].hidden = hide; });
        if (row.sets) {
          var texts = row.sets[language] || ["", "", ""];
          for (var i = 0; i < 3; i++) row.cells[ranksAt + i].textContent = texts[i];
        }
        var ok = (language === "all" || (" " + row.getAttribute("data-langs") + " ").indexOf(" " + language + " ") >= 0)
          && (!values.family || row.getAttribute("data-family") === values.family)
          && (!values.training || row.getAttribute("data-training") === values.training);
        row.hidden = !ok;
        if (ok) shown++;
      });
      var count = controls.querySelector(".overview-count");
      if (count) count.textContent = shown + " of " + rows.length + " configurations";
      applySort();
    }

    heads.forEach(function (th, index) {
      th.classList.add("sortable");
      th.tabIndex = 0;
      th.addEventListener("click", function (event) {
        if (event.target.tagName === "A") return;  // the task's link opens its board
        sortBy(index);
      });
      th.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(index); }
      });
    });
    if (controls) {
      controls.querySelectorAll("select[data-filter]").forEach(function (select) {
        select.addEventListener("change", applyFilters);
      });
      applyFilters();
    }
  }

  document.querySelectorAll("table.overview").forEach(setUp);
  document.documentElement.setAttribute("data-overview-ready", "1");
})();
