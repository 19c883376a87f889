// The puzzles, one at a time: a click on a card of the hand picks the card to play, a click on a
// table card adds it to (or takes it from) the cards it takes, Play answers; a declaration is its
// own button. The answer is one of the legal moves listed (hidden) in the puzzle, whatever the
// order of the cards: right or wrong, its reason is shown, then the solution and the theme.
// ‹ › (or ← →) go to the other puzzles; #p3 in the address opens puzzle 3.
(function () {
  "use strict";
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.puzzle"));
  if (!sections.length) { return; }
  var texts = document.getElementById("texts");
  var count = document.getElementById("count");
  var current = 0;

  var SUITS = {D: "\u2666", H: "\u2665", C: "\u2663", S: "\u2660"};

  function pretty(move) {     // 7C x 2C 5S as the page draws moves: 7♣ × 2♣ 5♠
    return move.replace(/\b([A2-7JQK])([DHCS])(?![A-Za-z])/g, function (m, rank, suit) { return rank + SUITS[suit]; })
      .split(" x ").join(" \u00d7 ");
  }

  function say(name, values) {
    var t = texts.getAttribute("data-" + name) || "";
    Object.keys(values || {}).forEach(function (k) { t = t.split("{" + k + "}").join(values[k]); });
    return t;
  }

  function cardsIn(section, zone, cls) {
    return Array.prototype.slice.call(section.querySelectorAll('[data-zone="' + zone + '"] .card' + (cls || "")));
  }

  function codes(list) {
    return list.map(function (c) { return c.getAttribute("data-card"); }).sort();
  }

  function go(i, how) {
    i = Math.max(0, Math.min(sections.length - 1, i));
    sections[current].hidden = true;
    sections[i].hidden = false;
    current = i;
    document.body.setAttribute("data-current", String(i + 1));
    if (count) {        // "puzzle 3 of 40", in the page's language
      count.textContent = count.getAttribute("data-pattern").replace("{number}", String(i + 1))
        .replace("{total}", String(sections.length));
    }
    if (!how || how.hash !== false) {
      try { history.replaceState(null, "", "#p" + (i + 1)); } catch (e) { /* a file: page may refuse */ }
    }
    if (how && how.scroll && sections[i].scrollIntoView) { sections[i].scrollIntoView({block: "nearest"}); }
  }

  function feedback(section, verdict, line, reason) {
    var box = section.querySelector(".feedback");
    box.hidden = false;
    box.setAttribute("data-verdict", verdict);
    box.textContent = "";
    var head = document.createElement("p");
    head.className = "verdict";
    head.textContent = line;
    box.appendChild(head);
    if (reason) {       // the reason as the page drew it (its cards in their colours)
      var why = document.createElement("p");
      why.className = "why";
      why.innerHTML = reason.innerHTML;
      box.appendChild(why);
    }
  }

  function settle(section, answer) {
    var right = section.querySelector('.answers li[data-right="1"]');
    section.setAttribute("data-answered", answer ? answer.getAttribute("data-move") : "");
    section.querySelector(".solved").hidden = false;
    Array.prototype.forEach.call(section.querySelectorAll(".actions button.play, .actions button.clear, " +
                                                          ".actions button.show, button.declare"),
                                 function (b) { b.disabled = true; });
    cardsIn(section, "hand").concat(cardsIn(section, "table")).forEach(function (c) {
      var code = c.getAttribute("data-card");
      var own = right.getAttribute("data-card") === code;
      var taken = (right.getAttribute("data-taken") || "").split(" ").indexOf(code) >= 0;
      if (own || taken) { c.classList.add("best"); }
    });
  }

  function answer(section, li, text) {
    if (section.hasAttribute("data-answered")) { return; }
    if (!li) {
      feedback(section, "illegal", say("illegal", {move: pretty(text)}));
      return;
    }
    var move = li.getAttribute("data-move");
    if (li.getAttribute("data-right") === "1") {
      feedback(section, "right", say("right", {move: pretty(move)}), li);
    } else {
      feedback(section, "wrong", say("wrong", {move: pretty(move), loss: li.getAttribute("data-loss") || ""}), li);
    }
    settle(section, li);
  }

  function play(section) {
    var chosen = cardsIn(section, "hand", ".sel");
    if (!chosen.length) {
      feedback(section, "illegal", say("pick"));
      return;
    }
    var card = chosen[0].getAttribute("data-card");
    var taken = codes(cardsIn(section, "table", ".pick"));
    var found = null;
    Array.prototype.forEach.call(section.querySelectorAll(".answers li"), function (li) {
      var want = (li.getAttribute("data-taken") || "").split(" ").filter(Boolean).sort();
      if (li.getAttribute("data-card") === card && want.join(" ") === taken.join(" ")) { found = li; }
    });
    answer(section, found, card + (taken.length ? " x " + taken.join(" ") : ""));
  }

  function clear(section) {
    cardsIn(section, "hand", ".sel").concat(cardsIn(section, "table", ".pick")).forEach(function (c) {
      c.classList.remove("sel", "pick");
    });
  }

  function pick(card) {
    var section = card.closest("section.puzzle");
    if (!section || section.hasAttribute("data-answered")) { return; }
    var zone = card.closest("[data-zone]").getAttribute("data-zone");
    if (zone === "hand") {
      var was = card.classList.contains("sel");
      cardsIn(section, "hand", ".sel").forEach(function (c) { c.classList.remove("sel"); });
      if (!was) { card.classList.add("sel"); }
    } else if (zone === "table") {
      card.classList.toggle("pick");
    }
  }

  sections.forEach(function (section) {     // the cards that answer are buttons for the keyboard too
    cardsIn(section, "hand").concat(cardsIn(section, "table")).forEach(function (c) {
      c.setAttribute("role", "button");
      c.setAttribute("tabindex", "0");
    });
  });

  document.addEventListener("click", function (e) {
    if (!e.target.closest) { return; }
    var section = e.target.closest("section.puzzle");
    var card = e.target.closest('[data-zone="hand"] .card, [data-zone="table"] .card');
    if (card && section) { pick(card); return; }
    var button = e.target.closest("button");
    if (!button) { return; }
    if (button.id === "next" || button.id === "next2") { go(current + 1, {scroll: button.id === "next2"}); }
    else if (button.id === "prev") { go(current - 1, {}); }
    else if (!section || button.disabled) { return; }
    else if (button.classList.contains("play")) { play(section); }
    else if (button.classList.contains("clear")) { clear(section); }
    else if (button.classList.contains("declare")) {
      var text = button.getAttribute("data-move");
      var li = null;
      Array.prototype.forEach.call(section.querySelectorAll(".answers li"), function (x) {
        if (x.getAttribute("data-move") === text) { li = x; }
      });
      answer(section, li, text);
    } else if (button.classList.contains("show")) {
      var right = section.querySelector('.answers li[data-right="1"]');
      feedback(section, "shown", say("shown", {move: pretty(right.getAttribute("data-move"))}), right);
      settle(section, null);
    }
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) { return; }
    var el = e.target;
    if (el && el.classList && el.classList.contains("card") && (e.key === "Enter" || e.key === " ")) {
      pick(el); e.preventDefault(); return;
    }
    var tag = el && el.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || tag === "BUTTON") { return; }
    if (e.key === "ArrowRight") { go(current + 1, {}); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { go(current - 1, {}); e.preventDefault(); }
  });

  function fromHash() {
    var m = /^#p(\d+)$/.exec(window.location.hash || "");
    if (m && sections[Number(m[1]) - 1]) { go(Number(m[1]) - 1, {hash: false}); return true; }
    return false;
  }
  window.addEventListener("hashchange", fromHash);
  if (!fromHash()) { go(0, {hash: false}); }
  window.cirullaPuzzles = {go: go, current: function () { return current; }};
})();
