"""Puzzles cut from real games (`cirulla puzzles`, cirulla.solver.puzzles).

The batch analysis of 100 seeded one-hand games (tests/data/puzzles, made by
its regenerate.py: 50 duplicate pairs of the casual level against greedy,
analysed at 2,000 iterations a search) gives at least 30 puzzles, each from
its own position, each a cirulla.v1.Puzzle line; every solution is the move
a new search of its position at the default budget (another seed) finds best;
the themes say what the figures say; every reason is the analysis's reason
for that move against the solution. An answer is right whatever the order of
its cards; a puzzle's view is a GetHint request as it is. The page, in
headless Chromium (Debian's `chromium`): a click on the solution's cards and
Play says right, a wrong move says why it is wrong, a move that is not legal
says so; at 360 px no text is cut; nothing is fetched. In Italian with --lang
it, reasons and page alike.

The Chromium tests skip without a Chromium on the PATH (in CI a skip is a
failure: conftest.py).
"""
from __future__ import annotations

import gzip
import html
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from browser_support import chromium, find_browser
from google.protobuf import json_format
from test_i18n import english_left
from test_report import measure

from cirulla.cli.report import CSP, card_text
from cirulla.server.convert import move_to_proto, puzzle_from_proto, puzzle_hint_request, puzzle_to_proto
from cirulla.solver import Card, Match, Move, Rules, record
from cirulla.solver.events import CATEGORIES, Turn
from cirulla.solver.players import GreedyPlayer
from cirulla.solver.puzzles import (
    LEAD_Z,
    MIN_LEAD,
    MIN_MOVES,
    Puzzle,
    Theme,
    clear_lead,
    difficulty_of,
    position_id,
    position_seed,
    puzzle_budget,
    search_position,
    theme_of,
)
from cirulla.solver.search import DEFAULT_BUDGET, MoveStats, RankedBy, SearchMethod, SearchResult, StopReason
from cirulla.v1 import puzzle_pb2 as zpb
from server_support import running, stubs

DATA = Path(__file__).resolve().parent / "data" / "puzzles"
CLI = [sys.executable, "-m", "cirulla.cli.main"]
SETTEBELLO = Card.parse("7D")
ENV = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120"}


def unpack(folder: Path, games: int | None = None) -> Path:
    """The fixture's records and results in `folder` (the first `games` results); the results' path."""
    (folder / "records.jsonl").write_bytes(gzip.decompress((DATA / "records.jsonl.gz").read_bytes()))
    lines = gzip.decompress((DATA / "results.jsonl.gz").read_bytes()).decode("utf-8").splitlines(keepends=True)
    results = folder / "results.jsonl"
    results.write_text("".join(lines[:games]), encoding="utf-8")
    return results


@dataclass(frozen=True)
class Made:
    folder: Path
    results: Path
    lines: list[str]                # as the command wrote them
    puzzles: list[Puzzle]
    page: Path
    stdout: str


def make(folder: Path, *args: str, games: int | None = None) -> Made:
    """`cirulla puzzles RESULTS --out --html` run from another folder, as a player runs it
    (the records are found beside the results)."""
    results = unpack(folder, games)
    out, page = folder / "puzzles.jsonl", folder / "puzzles.html"
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([*CLI, "puzzles", str(results), "--out", str(out), "--html", str(page), *args],
                          capture_output=True, text=True, timeout=900, cwd=elsewhere, env=ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    return Made(folder, results, lines, [puzzle_from_proto(json_format.Parse(x, zpb.Puzzle())) for x in lines], page,
                done.stdout)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Made:
    return make(tmp_path_factory.mktemp("puzzles"))


@pytest.fixture(scope="module")
def browser() -> str:
    return find_browser()


# --- the puzzles of 100 games ------------------------------------------------------------

def test_a_hundred_analysed_games_give_thirty_puzzles_at_least(made):
    puzzles = made.puzzles
    games = [json.loads(x) for x in made.results.read_text().splitlines()]
    assert len(games) == 100 and len(puzzles) >= 30
    assert re.search(rf"^{len(puzzles)} puzzles from \d+ positions searched: ", made.stdout, re.M), made.stdout
    # no two from the same position; the id is the position's
    assert len({p.id for p in puzzles}) == len(puzzles)
    assert all(p.id == position_id(p.view) for p in puzzles)
    # easiest first; every theme named, and several of them
    assert [p.difficulty for p in puzzles] == sorted(p.difficulty for p in puzzles)
    assert all(1 <= p.difficulty <= 5 for p in puzzles) and len({p.difficulty for p in puzzles}) >= 3
    assert len({p.theme for p in puzzles}) >= 5
    assert all(p.language == "en" for p in puzzles)
    for p in puzzles:
        # the solution and the others: every legal move once, the closest first, each clearly behind
        assert {p.solution, *(o.move for o in p.others)} == set(p.view.legal_moves())
        assert len(p.others) + 1 == len(p.view.legal_moves()) >= MIN_MOVES
        assert [o.loss for o in p.others] == sorted(o.loss for o in p.others)
        assert p.lead == p.others[0].loss and p.lead_stderr == p.others[0].loss_stderr
        for o in p.others:
            assert o.loss >= MIN_LEAD
            assert o.loss >= LEAD_Z * o.loss_stderr if p.method is SearchMethod.ISMCTS else o.loss_stderr == 0
        assert p.method in (SearchMethod.ISMCTS, SearchMethod.EXACT)


def test_each_puzzle_cites_the_decision_it_was_cut_from(made):
    lines = (made.folder / "records.jsonl").read_text().splitlines()
    games = {g["gameId"]: g for g in map(json.loads, made.results.read_text().splitlines())}
    for p in made.puzzles:
        s = p.source
        number = int(s.record.removeprefix("records.jsonl:"))
        match = record.loads(lines[number - 1])
        turn = match.events[s.event_index]
        assert isinstance(turn, Turn) and turn.move == s.played and turn.seat == p.view.seat
        game = games[s.game_id]
        assert game["source"] == s.record
        decision = game["analysis"]["decisions"][s.decision]
        assert decision["eventIndex"] == s.event_index
        names = {x.get("seat", 0): x["name"] for x in game["analysis"]["summary"]["players"]}
        assert s.player == names[p.view.seat]


def test_every_solution_is_the_best_move_of_a_new_search_at_the_default_budget(made):
    """Searched again with other worlds (another seed), at the default budget's
    iterations and stopping rule, each position has its solution as its best move."""
    budget = puzzle_budget(5)
    assert (budget.iterations, budget.stopping, budget.time_ms) == (DEFAULT_BUDGET.iterations, DEFAULT_BUDGET.stopping,
                                                                   None)
    wrong = []
    for p in made.puzzles:
        result = search_position(p.view, position_seed(p.id, 1))
        if result.best != p.solution:
            wrong.append(f"{p.id[:8]}: {p.solution} (lead {p.lead:.2f} ± {p.lead_stderr:.2f}), now {result.best}")
    assert wrong == []


def test_each_theme_is_what_the_position_says(made):
    for p in made.puzzles:
        v, s, runner = p.view, p.solution, p.others[0].move
        if p.theme is Theme.DECLARATION:
            assert runner.is_declaration
        elif p.theme is Theme.SCOPA:
            assert s.captured and set(s.captured) == set(v.table)
        elif p.theme is Theme.SETTEBELLO:
            assert not any(SETTEBELLO in pile for pile in v.piles)       # still to be won
        elif p.theme is Theme.LAST_CAPTURE:
            assert v.stock_size == 0
        if s.is_declaration:
            assert p.theme is Theme.DECLARATION and runner.is_declaration


def test_every_reason_is_the_analysis_reason_for_that_move(made):
    for p in made.puzzles:
        assert p.reason == p.others[0].reason
        for o in p.others:
            assert o.reason.endswith(".") and f" {o.loss:.2f} points more" in o.reason, o.reason
            assert f"the best move, {p.solution}," in o.reason, o.reason
            named = [str(o.move)] if o.move.card else [str(c) for c in o.move.declared | o.move.declared_second]
            assert all(x in o.reason for x in named), o.reason


# --- for apps: checking an answer, asking for a hint -------------------------------------------

def test_an_answer_is_right_whatever_the_order_of_its_cards(made):
    p = next(p for p in made.puzzles if len(p.solution.captured) >= 2)
    card, taken = str(p.solution.card), [str(c) for c in p.solution.captured]
    symbols = str.maketrans("DHCS", "♦♥♣♠")
    for answer in (f"{card} x {' '.join(taken)}", f"{card} x {' '.join(reversed(taken))}",
                   f"{card.lower()} x {' '.join(t.lower() for t in reversed(taken))}",
                   f"{card[0]}{card[1].translate(symbols)} x "
                   + " ".join(t[0] + t[1].translate(symbols) for t in taken)):
        assert p.is_solution(answer) and p.other(answer) is None, answer
        assert Move.parse(answer) == p.solution and hash(Move.parse(answer)) == hash(p.solution)
    # the same through the wire: a message whose captured cards come in another order
    msg = puzzle_to_proto(p)
    answer = move_to_proto(p.solution)
    answer.captured.reverse()
    assert list(answer.captured) != list(msg.solution.captured)
    assert record_move(answer, p) == p.solution and puzzle_from_proto(msg).is_solution(p.solution)
    # a wrong legal move says why; a move that is not legal is neither
    wrong = p.others[-1]
    assert not p.is_solution(wrong.move) and p.other(str(wrong.move)) == wrong
    illegal = f"{card} x {' '.join(taken)} {p.view.unseen()[0]}"        # a card that is not on the table
    assert not p.is_solution(illegal) and p.other(illegal) is None
    assert p.view.why_illegal(illegal)


def record_move(msg, p: Puzzle) -> Move:
    return record.move_from_proto(msg, p.view.rules.matta_card)


def test_a_puzzles_view_is_a_hint_request(made):
    """An app sends the puzzle's view as it is: the server takes it, completes it
    to the same view, and ranks the solution first, with its reason in the
    puzzle's language."""
    with running() as server:
        engine = stubs(server).engine
        for p in made.puzzles[:: max(1, len(made.puzzles) // 6)]:
            msg = puzzle_to_proto(p)
            request = puzzle_hint_request(msg, seed=3)
            assert request.view == msg.view and request.seed == 3 and request.language == "en"
            answer = engine.GetHint(request, timeout=60)
            assert record_move(answer.hint.best, p) == p.solution
            assert answer.view == msg.view and answer.hint.moves[0].reason


def test_a_puzzle_line_round_trips_and_its_numbers_are_bounded(made):
    for line, p in zip(made.lines, made.puzzles, strict=True):
        msg = json_format.Parse(line, zpb.Puzzle())
        assert puzzle_to_proto(p) == msg
    msg = json_format.Parse(made.lines[0], zpb.Puzzle())
    msg.difficulty = 9
    msg.source.decision = -1
    from cirulla.server.errors import BadRequest
    with pytest.raises(BadRequest) as raised:
        puzzle_from_proto(msg)
    assert [f for f, _ in raised.value.violations] == ["puzzle.difficulty", "puzzle.source.decision"]


# --- the rule, on figures made by hand -----------------------------------------------------

def _position() -> Match:
    """A first-round position with a choice (greedy play from a seeded deal)."""
    match = Match(Rules(hands=1), seed=11)
    greedy = GreedyPlayer()
    while len(match.legal_moves) < 3:
        match.play(greedy.choose(match))
    return match


def _stats(move: Move, diff: float, se: float = 0.1, risk: float = 0.0, **categories: float) -> MoveStats:
    cats = {c: categories.get(c, 0.0) for c in CATEGORIES}
    return MoveStats(move=move, expected_points=sum(cats.values()), expected_points_stderr=se, diff_to_best=diff,
                     diff_to_best_stderr=se, categories=cats, scopa_risk=risk, win_chance=None, samples=100)


def _result(*moves: MoveStats, method: SearchMethod = SearchMethod.ISMCTS,
            ranked_by: RankedBy = RankedBy.EXPECTED_POINTS) -> SearchResult:
    return SearchResult(moves=moves, best=moves[0].move, iterations=1000, elapsed_ms=1.0,
                        stopped_because=StopReason.SETTLED, cpu_ms=1.0, method=method, threads=1, ranked_by=ranked_by)


def test_a_clear_lead_is_half_a_point_and_four_standard_errors_over_every_other_move():
    m = [Move.parse(t) for t in ("5C x 5S", "KD", "3H")]
    assert clear_lead(_result(_stats(m[0], 0.0), _stats(m[1], -0.6, 0.1), _stats(m[2], -2.0, 0.3)))
    assert not clear_lead(_result(_stats(m[0], 0.0), _stats(m[1], -0.45, 0.01), _stats(m[2], -2.0, 0.3)))
    assert not clear_lead(_result(_stats(m[0], 0.0), _stats(m[1], -0.6, 0.2), _stats(m[2], -2.0, 0.3)))
    exact = _result(_stats(m[0], 0.0, 0.0), _stats(m[1], -0.5, 0.0), _stats(m[2], -0.7, 0.0), method=SearchMethod.EXACT)
    assert clear_lead(exact)
    assert not clear_lead(_result(*exact.moves[:2], method=SearchMethod.EXACT))          # fewer than 3 moves
    assert not clear_lead(_result(*exact.moves, method=SearchMethod.EXACT, ranked_by=RankedBy.WIN_CHANCE))


def test_the_theme_is_the_first_that_the_figures_fit():
    view = _position().view(_position().to_move)
    hand, table = view.hand, view.table
    sweep = Move(card=hand[0], captured=frozenset(table))
    drop, other = Move(card=hand[1]), Move(card=hand[2])
    declare, declare2 = Move.parse("declare AS 2S 3S"), Move.parse("declare AS 2S 3S 7H=A")

    def theme(best: Move, runner: Move, *, best_risk: float = 0.0, runner_risk: float = 0.0, **gains: float):
        return theme_of(view, _result(_stats(best, 0.0, risk=best_risk, **gains),
                                      _stats(runner, -1.0, risk=runner_risk), _stats(other, -2.0)))

    assert theme(declare, declare2, scope=1.0) is Theme.DECLARATION
    assert theme(drop, declare, cards=1.0) is Theme.DECLARATION
    assert theme(declare, drop, declarations=3.0) is None                # declaring rather than not: no question
    assert theme(sweep, drop, scope=1.0) is Theme.SCOPA
    assert theme(sweep, drop, cards=1.0) is None                         # a sweep that scores nothing, no race
    assert theme(drop, sweep, runner_risk=0.6, scope=0.8, cards=0.2) is Theme.SWEEP_AVOIDED
    assert theme(drop, sweep, runner_risk=0.1, scope=0.8, cards=0.2) is None or view.stock_size == 0
    assert theme(drop, sweep, settebello=0.6, primiera=0.3) is Theme.SETTEBELLO
    assert theme(drop, sweep, settebello=0.1, primiera=0.3) is Theme.PRIMIERA
    assert theme(drop, sweep, diamonds=0.5, primiera=0.3) is Theme.DIAMONDS
    assert theme(drop, sweep, cards=0.5) is (Theme.LAST_CAPTURE if view.stock_size == 0 else None)


def test_the_difficulty_grows_with_the_plausible_moves_and_as_the_lead_shrinks():
    m = [Move.parse(t) for t in ("5C x 5S", "KD", "3H", "4C")]

    def level(*losses: float, greedy: Move | None = None) -> int:
        others = (_stats(x, -loss) for x, loss in zip(m[1:], losses, strict=False))
        return difficulty_of(_result(_stats(m[0], 0.0), *others), greedy)

    assert level(2.0, 3.0) == 1
    assert level(2.0, 3.0, greedy=m[0]) == 1 and level(2.0, 3.0, greedy=m[2]) == 2
    assert level(1.2, 3.0) == 2 and level(0.9, 3.0) == 3 and level(0.6, 0.9) == 5 and level(0.6, 0.9, 0.9) == 5


# --- the page ----------------------------------------------------------------------------------

PROBE = """
function current() { return document.querySelector("section.puzzle:not([hidden])"); }
function click(el) { el.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); }
function card(zone, code) {
  return current().querySelector('[data-zone="' + zone + '"] .card[data-card="' + code + '"]');
}
function press(cls) { click(current().querySelector("button." + cls)); }
function state() {
  var s = current(), f = s.querySelector(".feedback");
  return {puzzle: Number(s.getAttribute("data-puzzle")), verdict: f.hidden ? "" : f.getAttribute("data-verdict"),
          text: f.hidden ? "" : f.textContent, solved: !s.querySelector(".solved").hidden,
          best: Array.prototype.map.call(s.querySelectorAll(".zone .card.best"),
                                         function (c) { return c.getAttribute("data-card"); }).sort(),
          count: document.getElementById("count").textContent};
}
function answer(move) {           // [card, [taken...]]: click the card, then the cards it takes (last first)
  click(card("hand", move[0]));
  move[1].slice().reverse().forEach(function (c) { click(card("table", c)); });
  press("play");
  return state();
}
function report(value) {
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(value);
  document.body.appendChild(out);
}
"""


def probe(browser: str, tmp: Path, page: Path, script: str) -> object:
    copy = tmp / f"probe-{len(list(tmp.glob('probe-*.html')))}.html"
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", f"<script>{PROBE}\n{script}</script></body>"),
                    encoding="utf-8")
    done = chromium(browser, tmp, "--virtual-time-budget=3000", "--dump-dom", copy.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stdout[-3000:]
    return json.loads(html.unescape(found.group(1)))


def not_legal(p: Puzzle) -> Move | None:
    """A card of the hand with table cards that it cannot take (or a drop where it must take)."""
    legal = {p.solution, *(o.move for o in p.others)}
    table = p.view.table
    for card in p.view.hand:
        for taken in (frozenset(table), frozenset(table[:1]), frozenset()):
            if Move(card=card, captured=taken) not in legal:
                return Move(card=card, captured=taken)
    return None


def as_clicks(move: Move) -> list:
    return [str(move.card), sorted(str(c) for c in move.captured)]


def shown(reason: str) -> str:
    """A reason as the page draws it (card codes as suit symbols), as text."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", str(card_text(reason)))).split())


def test_the_page_in_chromium_says_right_wrong_with_the_reason_or_not_legal(browser, made, tmp_path):
    puzzles = made.puzzles
    first = next(i for i, p in enumerate(puzzles) if p.solution.captured)
    second = next(i for i, p in enumerate(puzzles)
                  if i > first and any(o.move.card for o in p.others) and not_legal(p) is not None)
    wrong = next(o for o in puzzles[second].others if o.move.card)
    illegal = as_clicks(not_legal(puzzles[second]))
    got = probe(browser, tmp_path, made.page, f"""
        var seen = [state()];
        window.cirullaPuzzles.go({first}); seen.push(answer({json.dumps(as_clicks(puzzles[first].solution))}));
        window.cirullaPuzzles.go({second - 1}); click(document.getElementById("next"));
        seen.push(answer({json.dumps(illegal)}));
        press("clear"); seen.push(answer({json.dumps(as_clicks(wrong.move))}));
        click(document.getElementById("next2")); seen.push(state());
        report(seen);""")
    assert isinstance(got, list)
    start, right, refused, wrong_one, after = got
    assert start["puzzle"] == 1 and start["verdict"] == "" and start["count"] == f"puzzle 1 of {len(puzzles)}"
    p = puzzles[first]
    assert right["puzzle"] == first + 1 and right["verdict"] == "right" and right["solved"]
    assert right["text"].startswith(f"Right! {shown(str(p.solution))} is the best move.")
    assert shown(p.reason) in right["text"]
    assert right["best"] == sorted([str(p.solution.card), *(str(c) for c in p.solution.captured)])
    assert refused["puzzle"] == second + 1 and refused["verdict"] == "illegal" and not refused["solved"]
    assert "is not a legal move here" in refused["text"]
    assert wrong_one["verdict"] == "wrong" and wrong_one["solved"]
    said = f"Not the best move: {shown(str(wrong.move))} gives up {wrong.loss:.2f} points."
    assert wrong_one["text"].startswith(said)
    assert shown(wrong.reason) in wrong_one["text"]
    assert after["puzzle"] == second + 2 and after["verdict"] == ""


def test_a_declaration_is_answered_by_its_button_and_the_solution_can_be_shown(browser, made, tmp_path):
    puzzles = made.puzzles
    with_button = [i for i, p in enumerate(puzzles) if any(o.move.is_declaration for o in p.others)]
    if not with_button:
        pytest.fail("no puzzle of the fixture offers a declaration")
    i = with_button[0]
    text = str(next(o.move for o in puzzles[i].others if o.move.is_declaration))
    got = probe(browser, tmp_path, made.page, f"""
        window.cirullaPuzzles.go({i});
        var button = Array.prototype.filter.call(current().querySelectorAll("button.declare"), function (b) {{
          return b.getAttribute("data-move") === {json.dumps(text)}; }})[0];
        click(button); var declared = state();
        window.cirullaPuzzles.go({i + 1 if i + 1 < len(puzzles) else 0}); press("show");
        report([declared, state()]);""")
    assert isinstance(got, list)
    declared, revealed = got
    assert declared["verdict"] == ("right" if text == str(puzzles[i].solution) else "wrong") and declared["solved"]
    assert revealed["verdict"] == "shown" and revealed["solved"] and "The best move is" in revealed["text"]


def test_at_360_pixels_no_text_is_cut_before_and_after_an_answer(browser, made, tmp_path):
    got = measure(browser, tmp_path, made.page, 360)
    assert got["inner"] == 360 and got["scroll"] <= got["client"] and got["cut"] == [], got
    answered = tmp_path / "answered.html"       # the solution shown: the feedback, the reason, the source
    answered.write_text(made.page.read_text(encoding="utf-8").replace(
        "</body>", '<script>document.querySelector("section.puzzle button.show").click();</script></body>'),
        encoding="utf-8")
    got = measure(browser, tmp_path, answered, 360)
    assert got["scroll"] <= got["client"] and got["cut"] == [], got
    shot = tmp_path / "narrow.png"
    done = chromium(browser, tmp_path, "--window-size=360,900", f"--screenshot={shot}", made.page.as_uri())
    assert done.returncode == 0 and shot.exists()


def test_the_page_is_self_contained(made):
    text = made.page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert not re.search(r"<(script|link|img|iframe|object|embed)\b[^>]*\b(src|href)\s*=", text)
    assert "@import" not in text and "url(" not in text
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert meta and html.unescape(meta.group(1)) == CSP
    assert text.count('<section class="puzzle"') == len(made.puzzles)


# --- in Italian ------------------------------------------------------------------------------

def test_in_italian_the_reasons_and_the_page(browser, tmp_path):
    italian = make(tmp_path, "--lang", "it", games=15)
    assert italian.puzzles and all(p.language == "it" for p in italian.puzzles)
    assert all("la mossa migliore" in o.reason for p in italian.puzzles for o in p.others)
    assert "Esercizi scritti in" in italian.stdout and "Pagina scritta in" in italian.stdout
    text = italian.page.read_text(encoding="utf-8")
    assert '<html lang="it">' in text and english_left(text) == []
    p = italian.puzzles[0]
    got = probe(find_browser(), tmp_path, italian.page, """press("show"); report(state());""")
    assert isinstance(got, dict)
    assert got["verdict"] == "shown" and got["text"].startswith(f"La mossa migliore è {shown(str(p.solution))}.")
    assert re.fullmatch(r"esercizio 1 di \d+", got["count"])
    narrow = measure(find_browser(), tmp_path, italian.page, 360)         # the longer Italian words fit too
    assert narrow["scroll"] <= narrow["client"] and narrow["cut"] == [], narrow


# --- what the command refuses ---------------------------------------------------------------

def test_a_game_whose_record_is_missing_or_another_is_reported_and_skipped(tmp_path):
    results = unpack(tmp_path, games=2)
    (tmp_path / "records.jsonl").unlink()
    done = subprocess.run([*CLI, "puzzles", str(results)], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path / "..", env=ENV)
    assert done.returncode == 1 and done.stdout == ""
    assert "no record records.jsonl:" in done.stderr and "2 inputs skipped" in done.stderr
    lines = gzip.decompress((DATA / "records.jsonl.gz").read_bytes()).decode().splitlines()
    (tmp_path / "records.jsonl").write_text("\n".join(reversed(lines)) + "\n")     # each line another game
    done = subprocess.run([*CLI, "puzzles", str(results)], capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 1 and "not the game analysed" in done.stderr
    single = tmp_path / "game.json"            # `cirulla analyze RECORD --json`: no record named
    single.write_text(json.dumps(json.loads(results.read_text().splitlines()[0])["analysis"]))
    done = subprocess.run([*CLI, "puzzles", str(single)], capture_output=True, text=True, timeout=300, env=ENV)
    assert done.returncode == 1 and "a single game's analysis (--json) names no record" in done.stderr


def test_the_example_puzzle_is_one_the_command_cuts():
    """examples/puzzle.json (the client guide's and the Python example's) is a line
    of the fixture's puzzles, indented: its id is its position's, its solution what
    the search finds best there."""
    path = Path(__file__).resolve().parent.parent / "examples" / "puzzle.json"
    p = puzzle_from_proto(json_format.Parse(path.read_text(encoding="utf-8"), zpb.Puzzle()))
    assert p.id == position_id(p.view) and p.language == "en" and p.theme is Theme.SETTEBELLO
    assert search_position(p.view, position_seed(p.id, 3)).best == p.solution
    assert p.is_solution("2C x 7D 6D") and p.other("5H x 6D 4S") is p.others[0]
