"""The HTML report of `cirulla analyze --html`, opened in headless Chromium
(Debian's `chromium` package): the DOM it builds has the graph, the errors
and the tables, saying what the analysis says, and a screenshot shows the
graph drawn (its blunder marker and luck bars in their colours).

Without a Chromium on the PATH these tests skip, unless
CIRULLA_REQUIRE_CHROMIUM=1 (CI sets it: there a missing browser is a failure).
"""
from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_analysis import drop_handing_a_scopa, record_where

from cirulla.cli.report import GRADE_COLOURS, SIDE_COLOURS, html_report
from cirulla.solver import Rules
from cirulla.solver.analysis import analyze_all

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@pytest.fixture(scope="module")
def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CIRULLA_REQUIRE_CHROMIUM") == "1":
        pytest.fail("no Chromium on the PATH (apt-get install -y chromium)")
    pytest.skip("no Chromium on the PATH")


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


def chromium(browser: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--hide-scrollbars", *args],
        capture_output=True, text=True, timeout=90)


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
    assert "<script" not in text and "@import" not in text
