"""`cirulla habits`: a player's habits over many analysed games. 20 seeded
one-hand games between the greedy, random and beginner engines, analysed at a
tiny budget (so they hold errors of every kind), written as the batch mode
writes them; the habits count each error kind (by phase) as the decisions say,
the page shows those counts and the costliest examples, renders in headless
Chromium without a horizontal scroll at 360 px, bad input is reported by file
and line while the rest is counted, and the command runs end to end.

The Chromium tests skip without a Chromium on the PATH (in CI a skip is a
failure: conftest.py)."""
from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from browser_support import chromium, find_browser
from google.protobuf import json_format

from cirulla.cli import batch, habits
from cirulla.cli.analyze import game_analysis
from cirulla.cli.batch import game_id, line_text
from cirulla.cli.main import main
from cirulla.cli.report import card_text
from cirulla.solver import Match, Rules, record
from cirulla.solver.analysis import Decision, Summary, analyze_all
from cirulla.solver.players import make_player
from cirulla.v1 import analysis_service_pb2 as apb

GAMES = 20
ITERATIONS = 300                # a tiny budget: errors of every kind, the module in seconds
LINEUPS = (("greedy", "random"), ("beginner", "greedy"), ("random", "beginner"))
NAMES = {"greedy": "Greta", "random": "Rand <i>&", "beginner": "Bea"}     # a name the page must escape


@dataclass(frozen=True)
class Analysed:
    match: Match
    decisions: list[Decision]
    summary: Summary
    line: str                   # as `cirulla analyze --out` writes it


def play(seed: int) -> Match:
    """A one-hand match between two of the engines, seats swapped every other seed."""
    a, b = LINEUPS[seed % len(LINEUPS)]
    if seed % 2:
        a, b = b, a
    m = Match(Rules(hands=1), seed=seed, names=[NAMES[a], NAMES[b]])
    players = [make_player(a, seed=seed), make_player(b, seed=seed + 1000)]
    while not m.is_over:
        m.play(players[m.to_move].choose(m))
    return m


def record_file(seed: int) -> str:
    """The record a batch line names as its source."""
    return f"games/g{seed}.json"


@pytest.fixture(scope="module")
def games() -> list[Analysed]:
    out = []
    for seed in range(GAMES):
        m = play(seed)
        decisions, summary = analyze_all(m, iterations=ITERATIONS, seed=seed, jobs=1)
        line = line_text(game_id(record.to_proto(m)), record_file(seed), game_analysis(decisions, summary))
        out.append(Analysed(m, decisions, summary, line))
    return out


@pytest.fixture(scope="module")
def results(tmp_path_factory, games) -> Path:
    path = tmp_path_factory.mktemp("habits") / "results.jsonl"
    path.write_text("".join(g.line + "\n" for g in games), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def report(results) -> habits.Report:
    problems: list[tuple[str, str]] = []
    r = habits.habits([results], lambda where, why: problems.append((where, why)))
    assert problems == []
    return r


def name_of(g: Analysed, d: Decision) -> str:
    return next(p.name for p in g.summary.players if p.seat == d.seat)


def direct(games: list[Analysed]) -> dict[str, dict[str, Counter]]:
    """Per player, straight from the analyses' Decision objects: unforced decisions by phase,
    errors by (phase, kind), by kind and by grade."""
    out: dict[str, dict[str, Counter]] = {}
    for g in games:
        for d in g.decisions:
            c = out.setdefault(name_of(g, d), {"phase": Counter(), "phase_kind": Counter(), "kind": Counter(),
                                                "grade": Counter()})
            if d.forced:
                continue
            c["phase"][str(d.phase)] += 1
            if d.judgement is not None:
                assert d.kind is not None, f"an error without its kind: {d}"
                c["phase_kind"][str(d.phase), str(d.kind)] += 1
                c["kind"][str(d.kind)] += 1
                c["grade"][str(d.judgement)] += 1
    return out


# --- the counts -----------------------------------------------------------------------

def test_the_seeded_games_hold_errors_of_many_kinds_and_phases(games):
    errors = [d for g in games for d in g.decisions if d.judgement is not None]
    assert len(errors) >= 30
    assert len({d.kind for d in errors}) >= 4 and len({d.phase for d in errors}) >= 2


def test_the_habits_count_each_error_kind_as_the_decisions_say(games, report):
    want = direct(games)
    assert report.games == GAMES
    assert sorted(report.players) == sorted(want)
    for name, c in want.items():
        h = report.players[name]
        assert dict(h.phase_kinds) == dict(c["phase_kind"]), name
        assert dict(h.kinds) == dict(c["kind"]), name
        assert dict(h.grades) == dict(c["grade"]), name
        assert {p: n for p, n in h.phase_unforced.items() if n} == dict(c["phase"]), name
        assert h.errors == sum(c["kind"].values()) and h.unforced == sum(c["phase"].values())
        for phase in habits.PHASES:                 # errors per 100 of the phase's own decisions
            errors = sum(n for (p, _), n in c["phase_kind"].items() if p == phase)
            assert h.phase_rate(phase) == (pytest.approx(100 * errors / c["phase"][phase]) if c["phase"][phase]
                                           else None)
        for kind in habits.KINDS:
            assert h.per_100(h.kinds[kind]) == pytest.approx(100 * c["kind"][kind] / h.unforced)


def test_accuracy_over_time_is_each_game_s_accuracy_in_the_order_read(games, report):
    for name, h in report.players.items():
        mine = [(i + 1, g) for i, g in enumerate(games) if name in g.match.names]
        assert [p.game for p in h.games] == [i for i, _ in mine]
        for point, (_, g) in zip(h.games, mine, strict=True):
            seat = g.match.names.index(name)
            summary = next(p for p in g.summary.players if p.seat == seat)
            assert point.unforced == summary.decisions - summary.forced
            assert point.accuracy == pytest.approx(summary.accuracy)
        free = [d for _, g in mine for d in g.decisions if not d.forced and name_of(g, d) == name]
        assert h.accuracy == pytest.approx(sum(d.accuracy for d in free) / len(free))


def test_the_most_frequent_kind_and_its_two_costliest_examples(games, report):
    for name, h in report.players.items():
        named = {k: n for k, n in h.kinds.items() if k != "other" and n}
        top = h.top_kind
        assert top is not None and h.kinds[top] == max(named.values())
        errors = sorted(((d.severity, i, d) for i, g in enumerate(games) for d in g.decisions
                         if d.kind == top and name_of(g, d) == name and not d.forced), key=lambda x: -x[0])
        assert [e.severity for e in h.examples] == pytest.approx([s for s, _, _ in errors[:2]])
        for e in h.examples:
            g = games[e.game - 1]
            d = next(d for d in g.decisions if d.number == e.number)
            assert (d.kind, str(d.played), str(d.best), d.reason) == (top, e.played.text, e.best.text, e.reason)
            assert e.hand_cards == tuple(map(str, d.position.hand)) and e.table == tuple(map(str, d.position.table))
            assert e.reason


def test_each_example_cites_the_record_it_came_from(capsys, games, report, results, tmp_path):
    """The batch line's source (the record's file), not the game's id; for a single
    game's --json, which names no record, that file."""
    examples = [e for h in report.ordered() for e in h.examples]
    assert examples and all(e.source == record_file(e.game - 1) for e in examples)
    code, out, _ = cli(capsys, "habits", results)
    assert code == 0
    for e in examples:
        assert f"game {e.game} ({record_file(e.game - 1)}), decision {e.number + 1}," in out
    assert not any(json.loads(g.line)["gameId"][:12] in out for g in games)
    page = habits.html(report)
    assert all(f'<span class="source">{e.source}</span>' in page for e in examples)
    single = tmp_path / "one.json"
    single.write_text(json_format.MessageToJson(game_analysis(games[0].decisions, games[0].summary)), encoding="utf-8")
    [game] = habits.read_games([single], lambda where, why: pytest.fail(why))
    assert game.source == str(single)


def test_decisions_and_unforced_name_one_count_each(report, results):
    """The habits count the unforced decisions, as "unforced"; the batch table's
    "decisions" are every decision, forced ones included."""
    first = habits.tables(report)[0]
    headers = [str(c.header) for c in first.columns]
    assert "decisions" not in headers
    assert list(first.columns[headers.index("unforced")].cells) == [str(h.unforced) for h in report.ordered()]
    totals = batch.Totals()
    for line in results.read_text(encoding="utf-8").splitlines():
        totals.add(batch.read_line(line)[1])
    column = batch.Totals.COLUMNS.index("decisions")
    assert {row[0]: int(row[column]) for row in totals.rows()} == {n: h.decisions for n, h in report.players.items()}
    assert all(h.decisions > h.unforced for h in report.players.values())


def test_every_kind_and_phase_of_the_protocol_has_its_words():
    for enum, words in ((apb.ErrorKind, habits.KINDS), (apb.DecisionAnalysis.DESCRIPTOR.fields_by_name["phase"]
                                                         .enum_type, habits.PHASES)):
        descriptor = getattr(enum, "DESCRIPTOR", enum)
        names = {v.name for v in descriptor.values if v.number}
        prefix = descriptor.values[0].name.removesuffix("UNSPECIFIED")
        assert {n.removeprefix(prefix).lower() for n in names} == set(words)


@pytest.fixture(scope="module")
def browser() -> str:
    return find_browser()


# --- the page -------------------------------------------------------------------------

class Page(HTMLParser):
    """The page's counts: per player section, its rows' data-* attributes and texts."""

    def __init__(self, text: str):
        super().__init__()
        self.players: dict[str, dict] = {}
        self.current: dict | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section" and "data-player" in a:
            self.current = self.players[a["data-player"]] = {"phase": {}, "kind": {}, "grade": {}, "examples": 0,
                                                             "unforced": {}, "top": None, "dots": 0}
        elif self.current is not None:
            if "data-phase" in a:
                self.current["phase"][a["data-phase"]] = int(a["data-count"])
                self.current["unforced"][a["data-phase"]] = int(a["data-unforced"])
            elif "data-kind" in a:
                self.current["kind"][a["data-kind"]] = int(a["data-count"])
            elif "data-grade" in a:
                self.current["grade"][a["data-grade"]] = int(a["data-count"])
            elif "data-top" in a:
                self.current["top"] = a["data-top"]
            elif tag == "article":
                self.current["examples"] += 1
            elif tag == "circle":
                self.current["dots"] += 1


@pytest.fixture(scope="module")
def page(tmp_path_factory, report) -> Path:
    path = tmp_path_factory.mktemp("page") / "habits.html"
    path.write_text(habits.html(report), encoding="utf-8")
    return path


def test_the_page_shows_the_counts(games, report, page):
    text = page.read_text(encoding="utf-8")
    shown = Page(text).players
    want = direct(games)
    assert sorted(shown) == sorted(want)
    for name, c in want.items():
        p, h = shown[name], report.players[name]
        assert p["phase"] == {ph: sum(n for (x, _), n in c["phase_kind"].items() if x == ph) for ph in habits.PHASES}
        assert p["unforced"] == {ph: c["phase"][ph] for ph in habits.PHASES}
        assert p["kind"] == {k: c["kind"][k] for k in habits.KINDS}
        assert p["grade"] == {g: c["grade"][g] for g in habits.GRADES}
        assert p["top"] == h.top_kind and p["examples"] == len(h.examples) == min(2, h.kinds[h.top_kind])
        assert p["dots"] == sum(pt.accuracy is not None for pt in h.games)
        for e in h.examples:
            assert str(card_text(e.reason)) in text             # the reason, its cards drawn
    assert "Rand &lt;i&gt;&amp;" in text and "Rand <i>" not in text       # escaped


def test_the_page_is_self_contained(page):
    text = page.read_text(encoding="utf-8")
    assert "default-src 'none'; style-src 'unsafe-inline'; img-src data:" in text
    assert "<script" not in text and "@import" not in text and "url(" not in text
    assert "http://" not in text and "https://" not in text


def test_the_page_renders_in_chromium(browser, page, tmp_path):
    done = chromium(browser, tmp_path, "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    shown = Page(done.stdout).players
    assert sorted(shown) == sorted(Page(page.read_text()).players)
    assert all(p["dots"] and p["examples"] for p in shown.values())


def test_no_horizontal_scroll_at_360_px(browser, page, tmp_path):
    """The page in a 360 px wide frame (as srcdoc: same origin) measured by the wrapper's script."""
    wrapper = tmp_path / "frame.html"
    wrapper.write_text(
        '<!doctype html><html><body style="margin:0"><iframe id="f" style="width:360px;height:900px;border:0" '
        f'srcdoc="{html.escape(page.read_text(encoding="utf-8"), quote=True)}"></iframe><script>'
        'addEventListener("load", () => { const d = document.getElementById("f").contentDocument.documentElement;'
        ' document.body.dataset.scroll = d.scrollWidth; document.body.dataset.client = d.clientWidth; });'
        "</script></body></html>", encoding="utf-8")
    done = chromium(browser, tmp_path, "--dump-dom", wrapper.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    body = next(a for t, a in _tags(done.stdout) if t == "body")
    assert 300 < int(body["data-client"]) <= 360
    assert int(body["data-scroll"]) <= int(body["data-client"])


def _tags(text: str) -> list[tuple[str, dict]]:
    class Tags(HTMLParser):
        found: list[tuple[str, dict]] = []

        def handle_starttag(self, tag, attrs):
            self.found.append((tag, dict(attrs)))
    t = Tags()
    t.found = []
    t.feed(text)
    return t.found


# --- reading, and the command ---------------------------------------------------------

def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_bad_line_is_reported_with_its_line_number_and_the_rest_counted(capsys, games, tmp_path):
    lines = [g.line for g in games]
    lines.insert(4, '{"gameId": "x", "analysis": {"decisions": [{"seat": "north"}]}}')     # line 5: not one
    lines.insert(9, "{ not json")                                                         # line 10
    lines.append(games[0].line[:200])                                                     # line 23: cut short
    lines.append("[" * 100_000)                                                           # line 24: too deep
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    page = tmp_path / "habits.html"
    code, out, err = cli(capsys, "habits", bad, "--html", page)
    assert code == 1
    for number in (5, 10, 23, 24):
        assert f"{bad}:{number}:" in err
    assert "JSON nested too deeply" in err
    assert f"{bad}:1:" not in err and "4 bad analyses" in err and f"{GAMES} games counted" in err
    assert f"Habits over {GAMES} games" in out and page.exists()


def test_a_folder_of_single_games_and_the_batch_file_count_each_game_once(capsys, games, results, tmp_path):
    folder = tmp_path / "analyses"
    folder.mkdir()
    for i, g in enumerate(games[:3]):       # `cirulla analyze RECORD --json`: a GameAnalysis, indented
        (folder / f"g{i}.json").write_text(json_format.MessageToJson(game_analysis(g.decisions, g.summary),
                                                                     indent=2), encoding="utf-8")
    record.save(games[0].match, folder / "record.json")                 # a record, not its analysis
    (folder / "notes.txt").write_text("not read")
    problems: list[tuple[str, str]] = []
    files = habits.analysis_files([str(results), str(results), str(folder)])
    r = habits.habits(files, lambda where, why: problems.append((where, why)))
    assert problems == [(str(folder / "record.json"), problems[0][1])] and "game record" in problems[0][1]
    assert r.games == GAMES + 3             # the batch file read twice counts once; the --json files have no id
    assert r.bad == 1


def test_the_command_end_to_end(tmp_path, results):
    page = tmp_path / "bea.html"
    done = subprocess.run([sys.executable, "-m", "cirulla.cli.main", "habits", str(results), "--player", "Bea",
                           "--html", str(page)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "100"})
    assert done.returncode == 0, done.stderr
    assert "Bea" in done.stdout and "Greta" not in done.stdout and "by kind" in done.stdout
    assert "most often" in done.stdout and f"Page written to {page}" in done.stdout
    assert list(Page(page.read_text(encoding="utf-8")).players) == ["Bea"]


def test_the_command_s_errors(capsys, results, tmp_path):
    code, _, err = cli(capsys, "habits", tmp_path / "missing.jsonl")
    assert code == 5 and "missing.jsonl: no such file or folder" in err
    code, _, err = cli(capsys, "habits", results, "--player", "Nobody")
    assert code == 2 and "--player Nobody: not among the players (Bea, Greta, Rand <i>&)" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, _, err = cli(capsys, "habits", empty)
    assert code == 3 and "no analysed game" in err
    code, out, _ = cli(capsys, "habits", results, "--html", tmp_path / "no" / "such" / "dir.html")
    assert code == 1


def test_help(capsys):
    with pytest.raises(SystemExit):
        main(["habits", "--help"])
    out = capsys.readouterr().out
    assert "cirulla habits results.jsonl --html habits.html" in out and "--player NAME" in out


def test_decisions_round_trip_through_the_line(games):
    """The habits read the line's fields, not the domain objects: the same figures."""
    g = games[0]
    line = json_format.Parse(g.line, apb.GameAnalysisLine())
    for d, msg in zip(g.decisions, line.analysis.decisions, strict=True):
        assert habits._enum(msg, "phase") == str(d.phase)
        assert habits._enum(msg, "kind") == (None if d.kind is None else str(d.kind))
        assert json.loads(json_format.MessageToJson(msg))["position"]["hand"] == [str(c) for c in d.position.hand]


def test_analyses_from_before_kinds_and_phases_still_count(games, tmp_path):
    """Lines without the kind and phase fields (older analyses): errors count as "other", the
    decisions under an unknown phase, and the page says so."""
    old = tmp_path / "old.jsonl"
    with old.open("w", encoding="utf-8") as f:
        for g in games[:5]:
            data = json.loads(g.line)
            for d in data["analysis"]["decisions"]:
                d.pop("kind", None)
                d.pop("phase", None)
            f.write(json.dumps(data) + "\n")
    r = habits.habits([old], lambda where, why: pytest.fail(f"{where}: {why}"))
    errors = Counter(name_of(g, d) for g in games[:5] for d in g.decisions if d.judgement is not None)
    for name, h in r.players.items():
        assert dict(+h.kinds) == ({"other": errors[name]} if errors[name] else {})
        assert h.unclassified == errors[name] and h.phase_errors[habits.UNKNOWN_PHASE] == errors[name]
        assert set(+h.phase_unforced) == {habits.UNKNOWN_PHASE}
    text = habits.html(r)
    assert 'data-phase="unknown"' in text and "phase not recorded" in text
