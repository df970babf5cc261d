/* statbench per-query explorer: lists queries across all pages from the board's explorer
   data (window.statbenchExplorer, data/SLUG.js). Text from the data is only ever set as
   text (textContent), never as HTML. The address says what is shown (#view=none,
   #view=one, #view=pair&a=KEY&b=KEY, #view=system&s=KEY, #q-N opens a query), so a board's
   row can link to its system's worst queries. */
(function () {
  "use strict";
  var X = window.statbenchExplorer;
  if (!X) return;
  var LIST = 25;  // wins and losses shown each
  var WORST = 50; // a system's worst queries shown first
  var view = document.getElementById("ex-view");
  var selA = document.getElementById("ex-a"), selB = document.getElementById("ex-b");
  var selS = document.getElementById("ex-system");
  var results = document.getElementById("ex-results");
  var summary = results.querySelector(".ex-summary");
  var thead = results.querySelector("thead"), tbody = results.querySelector("tbody");
  var index = {};
  X.systems.forEach(function (s, i) { index[s.key] = i; });

  function fmt(v) { return v === null || v === undefined ? "—" : v.toFixed(4); }
  function signed(v) { return (v > 0 ? "+" : "") + v.toFixed(4); }
  function href(n) {
    var file = X.pages[Math.floor(n / X.page_size)];
    return file + "#q-" + n;
  }
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function head(labels) {
    thead.textContent = "";
    var tr = document.createElement("tr");
    labels.forEach(function (l) {
      var th = document.createElement("th");
      th.textContent = l[0];
      if (l[1]) th.className = l[1];
      tr.appendChild(th);
    });
    thead.appendChild(tr);
  }
  function queryCells(tr, n) {
    var td = cell(tr, "");
    var a = document.createElement("a");
    a.href = href(n);
    a.className = "ex-open";
    a.textContent = X.queries[n];
    td.appendChild(a);
    cell(tr, X.snippets[n] || "", "snippet");
  }
  function best(i, n) {
    var b = X.best[i];
    if (!b) return "—";
    return b[n] === null ? "not found" : String(b[n]);
  }
  function row(n) {
    var tr = document.createElement("tr");
    tr.dataset.n = String(n);
    tbody.appendChild(tr);
    return tr;
  }

  function showNone(only) {
    var hits = [];
    X.answers.forEach(function (a, n) { if (a.length === (only ? 1 : 0)) hits.push(n); });
    head([["Query"], ["Text"]].concat(only ? [["The one system"], ["its best rank", "num"]] : []));
    hits.forEach(function (n) {
      var tr = row(n);
      queryCells(tr, n);
      if (only) {
        var i = X.answers[n][0];
        cell(tr, X.systems[i].label);
        cell(tr, best(i, n), "num");
      }
    });
    summary.textContent = hits.length + " of " + X.queries.length + " queries " +
      (only ? "answered in the top " + X.depth + " by exactly one of " : "answered in the top " + X.depth + " by none of ") +
      X.systems.length + " systems.";
  }

  function showPair() {
    var a = index[selA.value], b = index[selB.value];
    if (a === b) { summary.textContent = "Choose two different systems."; head([]); return; }
    var sa = X.scores[a], sb = X.scores[b], diffs = [];
    for (var n = 0; n < X.queries.length; n++) {
      if ((sa[n] === null) !== (sb[n] === null)) {
        summary.textContent = "Not paired: " + X.systems[a].label + " and " + X.systems[b].label +
          " were scored on different queries (query " + X.queries[n] + ").";
        head([]);
        return;
      }
      if (sa[n] !== null && sb[n] - sa[n] !== 0) diffs.push([sb[n] - sa[n], n]);
    }
    var wins = diffs.filter(function (d) { return d[0] > 0; }).sort(function (x, y) { return y[0] - x[0] || x[1] - y[1]; });
    var losses = diffs.filter(function (d) { return d[0] < 0; }).sort(function (x, y) { return x[0] - y[0] || x[1] - y[1]; });
    head([["Query"], ["Text"], ["A: " + X.tested, "num"], ["B: " + X.tested, "num"], ["B − A", "num"],
          ["A best rank", "num"], ["B best rank", "num"]]);
    function add(list, cls) {
      list.slice(0, LIST).forEach(function (d) {
        var tr = row(d[1]);
        tr.className = cls;
        queryCells(tr, d[1]);
        cell(tr, fmt(sa[d[1]]), "num");
        cell(tr, fmt(sb[d[1]]), "num");
        cell(tr, signed(d[0]), "num");
        cell(tr, best(a, d[1]), "num");
        cell(tr, best(b, d[1]), "num");
      });
    }
    add(wins, "win");
    add(losses, "loss");
    var paired = sa.filter(function (v) { return v !== null; }).length;
    summary.textContent = "B = " + X.systems[b].label + " against A = " + X.systems[a].label + " on " + X.tested +
      ", " + paired + " paired queries: " + wins.length + " wins, " + (paired - wins.length - losses.length) +
      " ties, " + losses.length + " losses (the paired test's per-query differences); the " +
      Math.min(LIST, wins.length) + " largest wins, then the " + Math.min(LIST, losses.length) + " largest losses.";
  }

  function showSystem(all) {
    var i = index[selS.value], s = X.scores[i], order = [];
    for (var n = 0; n < X.queries.length; n++) if (s[n] !== null) order.push(n);
    order.sort(function (x, y) { return s[x] - s[y] || x - y; });
    head([["Query"], ["Text"], [X.tested, "num"], ["best rank of a relevant article", "num"]]);
    (all ? order : order.slice(0, WORST)).forEach(function (n) {
      var tr = row(n);
      queryCells(tr, n);
      cell(tr, fmt(s[n]), "num");
      cell(tr, best(i, n), "num");
    });
    summary.textContent = X.systems[i].label + ": " + (all ? "all " + order.length : "the " +
      Math.min(WORST, order.length) + " worst of " + order.length) + " queries by " + X.tested + ", worst first. ";
    if (!all && order.length > WORST) {
      var more = document.createElement("button");
      more.type = "button";
      more.className = "toggle ex-all";
      more.textContent = "show all";
      more.addEventListener("click", function () { tbody.textContent = ""; showSystem(true); });
      summary.appendChild(more);
    }
  }

  function render() {
    var v = view.value;
    document.querySelector(".ex-pair").hidden = v !== "pair";
    document.querySelector(".ex-system").hidden = v !== "system";
    results.hidden = v === "page";
    tbody.textContent = "";
    if (v === "none" || v === "one") showNone(v === "one");
    else if (v === "pair") showPair();
    else if (v === "system") showSystem(false);
  }
  function address() {
    var v = view.value, h = "view=" + v;
    if (v === "pair") h += "&a=" + encodeURIComponent(selA.value) + "&b=" + encodeURIComponent(selB.value);
    if (v === "system") h += "&s=" + encodeURIComponent(selS.value);
    history.replaceState(null, "", v === "page" ? location.pathname : "#" + h);
  }
  function fromAddress() {
    var h = location.hash.slice(1);
    if (h.indexOf("view=") !== 0) return;
    var p = {};
    h.split("&").forEach(function (kv) { var i = kv.indexOf("="); p[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); });
    if (p.a in index) selA.value = p.a;
    if (p.b in index) selB.value = p.b;
    if (p.s in index) selS.value = p.s;
    var option = view.querySelector("option[value='" + p.view + "']");
    if (option && !option.disabled) view.value = p.view;
  }
  [view, selA, selB, selS].forEach(function (el) {
    el.addEventListener("change", function () { render(); address(); });
  });
  fromAddress();
  render();
  performance.mark("explorer-ready");
})();
