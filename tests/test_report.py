"""The HTML report of `cirulla analyze --html`, opened in headless Chromium
(Debian's `chromium` package): the DOM it builds has the graph, the errors
and the tables, saying what the analysis says, and a screenshot shows the
graph drawn (its blunder marker and luck bars in their colours). Its script
is driven by a probe: a copy of the page with a script appended that clicks
and presses keys, then writes what the page shows into the DOM, which
--dump-dom prints: the position beside the graph follows a click on the
graph or the table and the ← / → keys; the costliest errors come first; at
360 px (in an iframe that wide: headless Chromium's window is at least 500 px)
and wider no text is cut by its box, and the graph says where it scrolls; and
its Content-Security-Policy blocks every network load.

Without a Chromium on the PATH these tests skip (in CI a skip is a failure:
conftest.py).
"""
from __future__ import annotations

import html
import json
import re
import struct
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser_support import chromium, find_browser
from test_analysis import drop_handing_a_scopa, record_where

from cirulla.cli.report import CSP, GRADE_COLOURS, PART_COLOURS, SIDE_COLOURS, card_text, html_report, page_data
from cirulla.solver import Rules
from cirulla.solver.analysis import PointKind, analyze_all
from cirulla.solver.cards import sort_key

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@pytest.fixture(scope="module")
def browser() -> str:
    return find_browser()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """Two hands with a known blunder (a drop that hands over a scopa), analysed."""
    match, event = record_where(drop_handing_a_scopa, rules=Rules(hands=2))
    decisions, summary = analyze_all(match, iterations=1_500, seed=1)
    page = tmp_path_factory.mktemp("report") / "report.html"
    page.write_text(html_report(match, decisions, summary), encoding="utf-8")
    blunder = next(d for d in decisions if d.event_index == event)
    assert blunder.judgement == "blunder"
    return page, match, decisions, summary, blunder


class Dom(HTMLParser):
    """The elements of a dumped DOM: (tag, attributes, text inside) in order."""

    def __init__(self, text: str):
        super().__init__()
        self.elements: list[tuple[str, dict, list[str]]] = []
        self._open: list[list[str]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        texts: list[str] = []
        self.elements.append((tag, dict(attrs), texts))
        if tag not in VOID:
            self._open.append(texts)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), []))

    def handle_endtag(self, tag):
        if self._open and tag not in VOID:
            self._open.pop()

    def handle_data(self, data):
        for texts in self._open:
            texts.append(data)

    def find(self, tag: str, **attrs) -> list[tuple[dict, str]]:
        out = []
        for t, a, texts in self.elements:
            if t == tag and all((k == "class_" and v in a.get("class", "").split()) or a.get(k) == v
                                for k, v in attrs.items()):
                out.append((a, " ".join("".join(texts).split())))
        return out


def test_the_report_in_chromium_shows_the_graph_and_the_tables(browser, report, tmp_path):
    page, match, decisions, summary, blunder = report
    done = chromium(browser, tmp_path, "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = Dom(done.stdout)
    # the graph: one point per event of the timeline, a marker per error, a bar per deal
    (svg, _), = dom.find("svg", id="evaluation")
    assert int(svg["data-points"]) == len(summary.timeline) > len(decisions)
    errors = [d for d in decisions if d.judgement]
    markers = dom.find("circle", class_="err")
    assert sorted(int(a["data-decision"]) for a, _ in markers) == [d.number for d in errors]
    (marker, tip), = [(a, t) for a, t in markers if int(a["data-decision"]) == blunder.number]
    assert "blunder" in marker["class"] and marker["fill"] == GRADE_COLOURS["blunder"]
    assert str(blunder.played) in tip and str(blunder.best) in tip
    bars = dom.find("rect", class_="luck")
    assert [float(a["data-luck"]) for a, _ in bars] == pytest.approx([d.luck for d in summary.deals], abs=1e-3)
    assert len(dom.find("text")) > 10 and "Hand 2" in [t for _, t in dom.find("text")]
    # the players: accuracy and error counts as the summary has them
    for p in summary.players:
        (card, text), = dom.find("div", class_="player", **{"data-seat": str(p.seat)})
        assert p.name in text and f"{p.accuracy:.1f}" in text
        assert f"{p.blunders} blunder" in text and f"{p.mistakes} mistake" in text
    # where the result came from: the split adds up to the score
    for s in summary.sides:
        (_, text), = dom.find("tr", **{"data-side": str(s.side)})
        assert f"{s.result:+.0f}" in text and f"{s.luck:+.2f}" in text and f"{s.play:+.2f}" in text
    assert summary.sides[0].result == match.scores[0] - match.scores[1]
    # every decision has its row; the blunder's says so, with its best move
    rows = dom.find("tr", **{"data-decision": str(blunder.number)})
    assert len(dom.find("tr", class_="blunder")) == sum(d.judgement == "blunder" for d in decisions)
    assert len([a for t, a, _ in dom.elements if t == "tr" and "data-decision" in a]) == len(decisions)
    (_, text), = rows
    assert "blunder" in text and f"{blunder.loss:.2f}" in text
    assert blunder.best.card.symbol in text and blunder.played.card.symbol in text


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGB(A) pixels of an 8-bit non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 4 if colour == 6 else 3
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp)]


def test_a_screenshot_shows_the_graph_drawn(browser, report, tmp_path):
    page = report[0]
    shot = tmp_path / "report.png"
    done = chromium(browser, tmp_path, "--window-size=1200,1300", f"--screenshot={shot}", page.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, pixels = png_pixels(shot)
    assert (width, height) == (1200, 1300)
    counts: dict[bytes, int] = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1

    def near(colour: str, tolerance: int = 6) -> int:
        want = bytes.fromhex(colour[1:])
        return sum(n for p, n in counts.items() if all(abs(x - y) <= tolerance for x, y in zip(p, want, strict=False)))

    assert near(GRADE_COLOURS["blunder"]) > 60          # the blunder's marker (and its chip)
    assert near(SIDE_COLOURS[0]) > 100 and near(SIDE_COLOURS[1]) > 20   # luck bars, names, accents
    assert len(counts) > 500                            # text, anti-aliasing: a page, not a blank


def test_the_page_is_self_contained(report):
    text = report[0].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert not re.search(r"<(script|link|img|iframe|object|embed)\b[^>]*\b(src|href)\s*=", text)
    assert "@import" not in text and "url(" not in text.replace("url(#above)", "").replace("url(#below)", "")
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert meta and html.unescape(meta.group(1)) == CSP
    assert "default-src 'none'" in CSP and "connect-src" not in CSP        # everything else falls back to none


# --- the page's script, driven by a probe ----------------------------------------------------

PROBE = """
function cards(root, zone) {
  return Array.prototype.map.call(root.querySelectorAll('[data-zone="' + zone + '"] .card'),
                                  function (c) { return c.getAttribute("data-card"); });
}
function state() {
  var a = document.querySelector("article.position:not([hidden])");
  var row = document.querySelector("table.dec tr.current");
  return {shown: document.querySelectorAll("article.position:not([hidden])").length,
          decision: Number(a.getAttribute("data-decision")), hand: cards(a, "hand"), table: cards(a, "table"),
          unseen: cards(a, "unseen"), row: row && Number(row.getAttribute("data-decision")),
          cursor: document.querySelector("#cursor circle").getAttribute("cx")};
}
function click(el) { el.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); }
function key(name) {
  document.dispatchEvent(new KeyboardEvent("keydown", {key: name, bubbles: true, cancelable: true}));
}
function report(value) {
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(value);
  document.body.appendChild(out);
}
"""


def probe(browser: str, tmp: Path, page: Path, script: str, *args: str, fragment: str = "") -> object:
    """Open a copy of `page` with PROBE and `script` appended; what the script
    report()s, read back from the dumped DOM."""
    copy = tmp / f"probe-{len(list(tmp.glob('probe-*.html')))}.html"
    copy.write_text(page.read_text().replace("</body>", f"<script>{PROBE}\n{script}</script></body>"))
    done = chromium(browser, tmp, "--virtual-time-budget=3000", *args, "--dump-dom", copy.as_uri() + fragment)
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-3000:]
    return json.loads(html.unescape(found.group(1)))


def codes(cards) -> list[str]:
    return [str(c) for c in sorted(cards, key=sort_key)]


def expect(d) -> dict:
    return {"decision": d.number, "hand": codes(d.position.hand), "table": codes(d.position.table),
            "unseen": codes(d.position.unseen)}


def test_a_click_on_the_graph_and_the_arrow_keys_show_each_decisions_position(browser, report, tmp_path):
    page, match, decisions, summary, blunder = report
    # a decision of the second hand with cards on the table, neither the first nor the last
    k = next(d.number for d in decisions if d.hand == 1 and d.position.table and 0 < d.number < len(decisions) - 2
             and d.number != blunder.number)
    steps = probe(browser, tmp_path, page, f"""
        var seen = [state()];
        click(document.querySelector('#evaluation circle.pt[data-decision="{k}"]')); seen.push(state());
        key("ArrowRight"); seen.push(state());
        key("ArrowRight"); seen.push(state());
        key("ArrowLeft"); key("ArrowLeft"); key("ArrowLeft"); seen.push(state());
        click(document.querySelector('table.dec tr[data-decision="2"] td.who')); seen.push(state());
        click(document.getElementById("prev")); seen.push(state());
        key("ArrowLeft"); seen.push(state());
        report(seen);""")
    assert isinstance(steps, list)
    first, *moved = steps
    # at first the costliest error is in focus
    costliest = max((d for d in decisions if d.judgement), key=lambda d: d.severity)
    assert first["decision"] == costliest.number
    for got, n in zip(moved, [k, k + 1, k + 2, k - 1, 2, 1, 0], strict=True):
        d = decisions[n]
        assert got["shown"] == 1 and got["row"] == n
        assert {key: got[key] for key in ("decision", "hand", "table", "unseen")} == expect(d)
    # the ring on the graph follows the focus
    assert len({s["cursor"] for s in steps}) == len({s["decision"] for s in steps})
    # the address opens a decision: #d5 is decision number 4
    opened = probe(browser, tmp_path, page, "report(state());", fragment="#d5")
    assert {key: opened[key] for key in ("decision", "hand", "table", "unseen")} == expect(decisions[4])


def test_the_costliest_errors_come_first_with_their_positions_and_reasons(browser, report, tmp_path):
    page, match, decisions, summary, blunder = report
    shown = probe(browser, tmp_path, page, """
        var worst = document.getElementById("worst"), graph = document.getElementById("evaluation");
        var players = Array.prototype.map.call(document.querySelectorAll(".worst-player"), function (p) {
          return {seat: Number(p.getAttribute("data-seat")),
                  errors: Array.prototype.map.call(p.querySelectorAll(".err-card"), function (c) {
                    return {decision: Number(c.getAttribute("data-decision")), hand: cards(c, "hand"),
                            table: cards(c, "table"), text: c.textContent}; })}; });
        var sections = Array.prototype.map.call(document.querySelectorAll("main > section"),
                                                function (s) { return s.id; });
        var last = document.querySelectorAll(".err-card");
        click(last[last.length - 1]);
        report({players: players, sections: sections, graph_after: !!(worst.compareDocumentPosition(graph) & 4),
                focus: state()});""")
    assert isinstance(shown, dict)
    assert shown["sections"][:2] == ["worst", "graph"] and shown["graph_after"]
    assert [p["seat"] for p in shown["players"]] == list(range(match.rules.players))
    cards_shown = 0
    for p in shown["players"]:
        errors = sorted((d for d in decisions if d.seat == p["seat"] and d.judgement),
                        key=lambda d: (-d.severity, d.number))[:3]
        assert [e["decision"] for e in p["errors"]] == [d.number for d in errors]
        for e, d in zip(p["errors"], errors, strict=True):
            assert e["hand"] == codes(d.position.hand) and e["table"] == codes(d.position.table)
            shown_reason = html.unescape(re.sub(r"<[^>]+>", "", str(card_text(d.reason))))    # its cards drawn
            assert d.reason and " ".join(shown_reason.split()) in " ".join(e["text"].split())
            assert d.judgement in e["text"] and f"{d.loss:.2f}" in e["text"]
            cards_shown += 1
    assert cards_shown >= 1 and blunder.number in [e["decision"] for p in shown["players"] for e in p["errors"]]
    # a click on one focuses it beside the graph
    last = [e for p in shown["players"] for e in p["errors"]][-1]
    assert shown["focus"]["decision"] == last["decision"]


# In an iframe of the width measured (headless Chromium's own window is at least 500 px), once laid
# out: every piece of text (a text node's boxes) within the box that clips it and within the screen,
# unless that box scrolls; and every box that scrolls sideways shown with a visible hint just before it.
MEASURE = """
var doc = f.contentDocument, win = f.contentWindow, root = doc.documentElement, cut = [], scrolls = [];
function clip(node) {
  for (var e = node.parentElement; e && e !== doc.body; e = e.parentElement) {
    if (win.getComputedStyle(e).overflowX !== "visible") { return e; }
  }
  return null;
}
var walker = doc.createTreeWalker(doc.querySelector("main"), NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {
  var t = walker.currentNode;
  if (!t.data.trim() || t.parentElement.closest("svg")) { continue; }
  var box = clip(t), scroller = box && /auto|scroll/.test(win.getComputedStyle(box).overflowX);
  if (scroller) { continue; }                       // scrolled, not cut: the scrollers' own check
  var edge = box ? box.getBoundingClientRect() : {left: 0, right: root.clientWidth};
  var range = doc.createRange();
  range.selectNodeContents(t);
  Array.prototype.forEach.call(range.getClientRects(), function (r) {
    if (r.width && (r.left < Math.max(edge.left, 0) - 0.5 || r.right > Math.min(edge.right, root.clientWidth) + 0.5)) {
      cut.push(t.data.trim().slice(0, 40) + " in " + t.parentElement.tagName + "." + t.parentElement.className);
    }
  });
}
doc.querySelectorAll("main *").forEach(function (e) {
  if (/auto|scroll/.test(win.getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1) {
    var hint = e.previousElementSibling;
    scrolls.push({box: e.className, hint: hint && hint.classList.contains("scroll-hint") && hint.offsetHeight > 0
                                         ? hint.textContent : ""});
  }
});
"""


def measure(browser: str, tmp: Path, page: Path, width: int) -> dict:
    """The page laid out `width` px wide: its width and what MEASURE finds."""
    source = json.dumps(page.read_text()).replace("</", "<\\/")
    harness = tmp / f"width-{width}.html"
    harness.write_text(f"""<!doctype html><html><body style="margin:0">
<iframe id="f" style="width:{width}px;height:800px;border:0"></iframe>
<script>
var f = document.getElementById("f");
f.onload = function () {{
  {MEASURE}
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({{inner: win.innerWidth, scroll: root.scrollWidth, client: root.clientWidth,
                                     cut: cut.slice(0, 10), scrolls: scrolls}});
  document.body.appendChild(out);
}};
f.srcdoc = {source};
</script></body></html>""")
    done = chromium(browser, tmp, "--virtual-time-budget=5000", "--dump-dom", harness.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_at_360_pixels_no_text_is_cut_and_the_graph_says_it_scrolls(browser, report, tmp_path):
    """A phone: the tables' rows become cards, so no text is cut by its box and
    nothing is wider than the screen but the graph, which keeps its size,
    scrolls in its box and says so."""
    got = measure(browser, tmp_path, report[0], 360)
    assert got["inner"] == 360 and got["scroll"] <= got["client"], got
    assert got["cut"] == [], got
    [graph] = got["scrolls"]
    assert graph["box"] == "svg-scroll" and "scrolls sideways" in graph["hint"]
    shot = tmp_path / "narrow.png"
    done = chromium(browser, tmp_path, "--window-size=360,800", f"--screenshot={shot}", report[0].as_uri())
    assert done.returncode == 0 and shot.exists()


@pytest.mark.parametrize("width", [600, 800, 901, 1200])
def test_wider_screens_cut_no_text_and_scroll_nothing_without_a_hint(browser, report, tmp_path, width):
    got = measure(browser, tmp_path, report[0], width)
    assert got["scroll"] <= got["client"] and got["cut"] == [], got
    assert all(s["hint"] for s in got["scrolls"]), got


def test_the_policy_blocks_every_network_load(browser, report, tmp_path):
    blocked = probe(browser, tmp_path, report[0], """
        var blocked = [];
        document.addEventListener("securitypolicyviolation", function (e) { blocked.push(e.blockedURI); });
        var img = new Image(); img.src = "http://127.0.0.1:9/x.png"; document.body.appendChild(img);
        var link = document.createElement("link"); link.rel = "stylesheet"; link.href = "http://127.0.0.1:9/y.css";
        document.head.appendChild(link);
        try { fetch("http://127.0.0.1:9/z").catch(function () {}); } catch (e) {}
        setTimeout(function () { report(blocked); }, 500);""")
    assert isinstance(blocked, list)
    assert {"http://127.0.0.1:9/x.png", "http://127.0.0.1:9/y.css", "http://127.0.0.1:9/z"} <= set(blocked)


# --- the page's data --------------------------------------------------------------------------

def test_every_decision_row_has_its_parts_and_they_add_up_to_the_result(report):
    page, match, decisions, summary, blunder = report
    data = page_data(match, decisions, summary)
    rows = data["rows"]
    shown = [r["d"] for r in rows if r["kind"] == "decision"]
    assert [d.number for d in shown] == [d.number for d in decisions]
    total = 0.0
    for r in rows:
        if r["kind"] == "start":
            total += float(r["edge"].text)
        else:
            parts = r["d"].parts if r["kind"] == "decision" else r["parts"]
            assert set(parts) == {"luck", "hidden_luck", "play", "noise"}
            total += sum(float(v.text) for v in parts.values())
    s0 = summary.sides[0]
    assert total == pytest.approx(s0.result, abs=0.01 * len(rows))
    # each TURN point's parts are its row's (plus the deal's luck before it)
    turn = {p.decision: p for p in summary.timeline if p.kind is PointKind.TURN}
    for d in shown:
        assert float(d.parts["play"].text) == pytest.approx(turn[d.number].play, abs=0.006)
    # the split: five parts, five colours, the result last
    steps = data["split"]["steps"]
    assert [s["key"] for s in steps] == [*PART_COLOURS, "result"]
    assert len({s["colour"] for s in steps[:5]}) == 5
    # no win chance rated in a match of two hands: no WIN column
    assert data["has_win"] == any(d.win_chance is not None for d in decisions)
    text = page.read_text()
    assert ('title="the chance of winning the match after the played move' in text) == data["has_win"]


def test_card_text_draws_the_cards_of_a_text_and_escapes_the_rest():
    shown = str(card_text("7D x 3C 4S leaves <9> on the table; KH"))
    assert '<span class="c r">7♦</span> × <span class="c">3♣</span>' in shown
    assert '<span class="c r">K♥</span>' in shown and "&lt;9&gt;" in shown and "<9>" not in shown


def test_an_unfinished_games_result_shows_the_value_its_parts_add_up_to():
    """A match stopped mid-hand counts that hand at its value: the result was
    shown in whole points ("+1") beside parts adding up to +1.33; a finished
    hand's result stays whole."""
    from rich.console import Console

    from cirulla.cli import render
    from cirulla.cli.report import split_data
    from cirulla.solver import Match
    from cirulla.solver.i18n import translator

    match = Match(Rules(hands=1), seed=3)
    for _ in range(3):
        match.play(match.greedy_move())
    _, summary = analyze_all(match, iterations=300, seed=1)
    side = summary.sides[0]
    parts = side.start + side.luck + side.hidden_luck + side.play + side.noise
    assert side.result != round(side.result) and abs(parts - side.result) < 1e-9
    console = Console(record=True, width=200, color_system=None)
    console.print(render.sides_table(summary))
    assert f"{side.result:+.2f}" in console.export_text()
    data = split_data(summary, translator("en"))
    shown = f"{side.result:+.2f}"
    assert data["rows"][0]["result"] == shown and data["steps"][-1]["value"].text == shown
    assert render.result_digits(-4.0) == 0 and render.result_digits(1.33) == 2
