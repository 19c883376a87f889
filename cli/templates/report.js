// The decision in focus: its position shown beside the graph, its point ringed, its row marked.
// ← / → step through the decisions; a click on a point of the graph, a row of the table or one
// of the costliest errors focuses it; #d13 in the address opens decision 13.
(function () {
  "use strict";
  var articles = Array.prototype.slice.call(document.querySelectorAll("article.position"));
  if (!articles.length) { return; }
  var order = articles.map(function (a) { return Number(a.getAttribute("data-decision")); });
  var byNumber = {};
  articles.forEach(function (a) { byNumber[a.getAttribute("data-decision")] = a; });
  var svg = document.getElementById("evaluation");
  var cursor = document.getElementById("cursor");
  var count = document.getElementById("count");
  var panel = document.getElementById("panel");
  var points = svg ? Array.prototype.slice.call(svg.querySelectorAll("circle.pt")) : [];
  var current = null;

  function rows(n) {
    return document.querySelectorAll('table.dec tr[data-decision="' + n + '"]');
  }

  function go(n, how) {
    n = Number(n);
    var article = byNumber[n];
    if (!article) { return; }
    if (current !== null && byNumber[current]) {
      byNumber[current].hidden = true;
      Array.prototype.forEach.call(rows(current), function (r) { r.classList.remove("current"); });
    }
    article.hidden = false;
    current = n;
    document.body.setAttribute("data-current", String(n));
    Array.prototype.forEach.call(rows(n), function (r) { r.classList.add("current"); });
    if (count) {        // "decision 3 of 40", in the page's language
      count.textContent = count.getAttribute("data-pattern").replace("{number}", String(n + 1))
        .replace("{total}", String(order.length));
    }
    var pt = svg && svg.querySelector('circle.pt[data-decision="' + n + '"]');
    if (cursor && pt) {
      var x = pt.getAttribute("cx"), y = pt.getAttribute("cy");
      var line = cursor.querySelector("line"), ring = cursor.querySelector("circle");
      line.setAttribute("x1", x); line.setAttribute("x2", x);
      ring.setAttribute("cx", x); ring.setAttribute("cy", y);
      cursor.setAttribute("visibility", "visible");
      var box = svg.parentNode, scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      if (box && box.scrollWidth > box.clientWidth && scale) {     // a narrow screen: the graph scrolls
        box.scrollLeft = Math.max(0, Number(x) * scale - box.clientWidth / 2);
      }
    }
    if (how && how.hash !== false) {
      try { history.replaceState(null, "", "#d" + (n + 1)); } catch (e) { /* a file: page may refuse */ }
    }
    if (how && how.scroll && panel && panel.scrollIntoView) {
      var box = panel.getBoundingClientRect();
      if (box.top < 0 || box.bottom > (window.innerHeight || 0)) {
        panel.scrollIntoView({block: "nearest"});
      }
    }
  }

  function step(by) {
    var i = order.indexOf(current);
    var j = Math.max(0, Math.min(order.length - 1, (i < 0 ? 0 : i) + by));
    go(order[j], {});
  }

  function fromHash() {
    var m = /^#d(\d+)$/.exec(window.location.hash || "");
    if (m && byNumber[Number(m[1]) - 1]) { go(Number(m[1]) - 1, {hash: false, scroll: true}); return true; }
    return false;
  }

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) { return; }
    var tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") { return; }
    if (e.key === "ArrowRight") { step(1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { step(-1); e.preventDefault(); }
    else if (e.key === "Enter" && e.target.classList && e.target.classList.contains("err-card")) {
      go(e.target.getAttribute("data-decision"), {scroll: true});
    }
  });

  if (svg) {
    svg.addEventListener("click", function (e) {
      var hit = e.target.closest ? e.target.closest("[data-decision]") : null;
      if (hit) { go(hit.getAttribute("data-decision"), {}); return; }
      // elsewhere on the graph: the nearest move along the x axis
      if (!points.length || !svg.getScreenCTM) { return; }
      var m = svg.getScreenCTM();
      if (!m) { return; }
      var p = svg.createSVGPoint();
      p.x = e.clientX; p.y = e.clientY;
      var x = p.matrixTransform(m.inverse()).x, best = null, gap = Infinity;
      points.forEach(function (c) {
        var d = Math.abs(Number(c.getAttribute("cx")) - x);
        if (d < gap) { gap = d; best = c; }
      });
      if (best) { go(best.getAttribute("data-decision"), {}); }
    });
  }

  document.addEventListener("click", function (e) {
    if (!e.target.closest) { return; }
    var card = e.target.closest(".err-card");
    if (card) { go(card.getAttribute("data-decision"), {scroll: true}); return; }
    var row = e.target.closest("table.dec tr[data-decision], table.dec tr[data-for]");
    if (row) { go(row.getAttribute("data-decision") || row.getAttribute("data-for"), {scroll: true}); }
  });

  var prev = document.getElementById("prev"), next = document.getElementById("next");
  if (prev) { prev.addEventListener("click", function () { step(-1); }); }
  if (next) { next.addEventListener("click", function () { step(1); }); }
  window.addEventListener("hashchange", fromHash);

  var shown = articles.filter(function (a) { return !a.hidden; })[0];
  current = shown ? Number(shown.getAttribute("data-decision")) : null;
  if (!fromHash()) { go(current === null ? order[0] : current, {hash: false}); }
  window.cirullaReport = {go: go, step: step, current: function () { return current; }};
})();
