"""A reason with every hint (cirulla.solver.reasons): the recommended move and
each move within reach of it say why in words, in English or Italian, built
only from their own figures against the runner-up's or the best's.

Over 200 seeded positions (2 to 5 players, presets with declarations and
optional captures, matches near their target where the chance of winning
ranks the moves, exact endgames, forced moves), searched on small budgets:
every number in every reason is one of that move's figures as the wire
carries them (MoveEvaluation), formatted as the reason formats them, in
both languages; the moves that get one are those the rule names. The
analysis's reasons (the same generator) are tests/test_analysis.py's.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from cirulla.server import convert
from cirulla.solver import Match, Rules
from cirulla.solver.cards import Card
from cirulla.solver.i18n import LANGUAGES, translator
from cirulla.solver.moves import Move
from cirulla.solver.players import GreedyPlayer, RandomPlayer
from cirulla.solver.reasons import MAX_REASONS, REACH, move_words
from cirulla.solver.search import SearchBudget, search
from cirulla.v1 import engine_service_pb2 as epb
from rules_support import drawn

ROOT = Path(__file__).resolve().parent.parent
POSITIONS = 200
ITERATIONS = 300
CATEGORIES = [f.name for f in epb.CategoryPoints.DESCRIPTOR.fields]
# (rules, seeds): each match played to its end by a random and a greedy player, every third decision kept
GAMES = [(Rules(), range(3)), (Rules.preset("online"), range(1)), (Rules(players=4, hands=2), range(1)),
         (Rules.preset("relaxed", hands=2), range(1)), (Rules.preset("five", hands=1), range(1)),
         (Rules(players=3, hands=2), range(1))]


def _numbers(text: str) -> list[str]:
    """The figures of a reason: signed decimals, percentages and table sums,
    not the digits of card codes (7D). As tests/test_analysis.py reads them."""
    return re.findall(r"(?<![\w.])[+-]?\d+(?:\.\d+)?%?(?![A-Z\w])", text)


def positions():
    """(view, seed) of POSITIONS decisions of seeded matches: every third one."""
    out = []
    for rules, seeds in GAMES:
        for seed in seeds:
            match = Match(rules, seed=seed)
            players = [RandomPlayer(seed), GreedyPlayer()] * 3
            decision = 0
            while not match.is_over:
                if decision % 3 == 0:
                    out.append(match.view(match.to_move))
                decision += 1
                match.play(players[match.to_move].choose(match))
    assert len(out) >= POSITIONS, len(out)
    step = len(out) / POSITIONS
    return [(out[int(k * step)], k) for k in range(POSITIONS)]


def example_view(scores: tuple[int, int] = (12, 30)):
    """The view of examples/view.json (a GetHintRequest in JSON), at these scores."""
    request = json_format.Parse((ROOT / "examples" / "view.json").read_text(encoding="utf-8"), epb.GetHintRequest())
    request.view.scores[:] = scores
    return convert.view_from_proto(request.view)


def table_after(table: tuple[Card, ...], move: Move) -> list[Card]:
    if move.card is None:
        return list(table)
    left = [c for c in table if c not in move.captured]
    return left if move.captured else [*left, move.card]


def allowed(m: epb.MoveEvaluation, other: epb.MoveEvaluation, points: float, table: tuple[Card, ...],
            rules: Rules) -> set[str]:
    """The figures a reason of `m` against `other` may write: their difference
    of points (either sign, signed or not), of each category, of the chance of
    winning; both scopa risks; the sum of the cards `m` leaves on the table."""
    out = {f"{abs(points):.2f}", f"{points:+.2f}", f"{-points:+.2f}",
           f"{m.scopa_risk:.0%}", f"{other.scopa_risk:.0%}"}
    for c in CATEGORIES:
        d = getattr(m.categories, c) - getattr(other.categories, c)
        out |= {f"{d:+.2f}", f"{-d:+.2f}"}
    if m.HasField("win_chance") and other.HasField("win_chance"):
        out.add(f"{abs(m.win_chance - other.win_chance):.1%}")
    move = Move.parse(m.move.text, matta=rules.matta_card)
    out.add(str(sum(c.rank + 1 for c in table_after(table, move))))
    return out


def reasoned(hint: epb.Hint) -> list[int]:
    """The moves the rule gives a reason: the recommended one, the runner-up,
    the others whose difference to the best is within REACH standard errors;
    MAX_REASONS at most, in the ranking's order."""
    picked = [i for i, m in enumerate(hint.moves)
              if i <= 1 or -m.diff_to_best <= REACH * m.diff_to_best_stderr]
    return picked[:MAX_REASONS]


@pytest.fixture(scope="module")
def hints():
    """Each position searched once, its hint in every language."""
    out = []
    for view, k in positions():
        result = search(view, SearchBudget(iterations=ITERATIONS, seed=k))
        out.append((view, {lang: convert.hint_to_proto(result, k, table=view.table, tr=translator(lang))
                           for lang in LANGUAGES}))
    return out


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_number_in_a_hints_reasons_is_one_of_its_moves_figures(hints, lang):
    tr = translator(lang)
    seen = {"reasons": 0, "win_chance": 0, "forced": 0, "exact": 0, "declaration": 0, "risk": 0, "alternatives": 0}
    for view, by_lang in hints:
        hint = by_lang[lang]
        moves = list(hint.moves)
        if len(moves) == 1:
            assert moves[0].reason == tr.gettext("%(move)s is the only legal move.") % {
                "move": move_words(Move.parse(moves[0].move.text, matta=view.rules.matta_card), tr)}
            seen["forced"] += 1
            continue
        assert [i for i, m in enumerate(moves) if m.reason] == reasoned(hint)
        for i, m in enumerate(moves):
            if not m.reason:
                continue
            other = moves[1] if i == 0 else moves[0]
            points = -other.diff_to_best if i == 0 else m.diff_to_best
            figures = allowed(m, other, points, view.table, view.rules)
            # the moves it compares, by name (a declaration's verb in the reader's language; the
            # matta's rank in it, 7H=3, is no figure)
            names = [move_words(Move.parse(x.move.text, matta=view.rules.matta_card), tr) for x in (m, other)]
            assert all(name in m.reason for name in names), (names, m.reason)
            words = m.reason
            for name in sorted(names, key=len, reverse=True):
                words = words.replace(name, "MOVE")
            for n in _numbers(words):
                assert n in figures, (n, m.reason, sorted(figures))
            seen["reasons"] += 1
            seen["alternatives"] += i > 0
            seen["risk"] += f"{m.scopa_risk:.0%}" in m.reason
            seen["declaration"] += not m.move.card
            seen["win_chance"] += hint.ranked_by == epb.RANKED_BY_WIN_CHANCE
            seen["exact"] += hint.stats.method == epb.SEARCH_METHOD_EXACT
    # the positions are varied enough to try every kind of sentence
    assert seen["reasons"] >= 2 * POSITIONS * 0.8 and all(seen.values()), seen


def test_the_reasons_differ_by_language_and_keep_their_figures(hints):
    """Italian words, English words, the same figures in both."""
    for _, by_lang in hints:
        for en, it in zip(by_lang["en"].moves, by_lang["it"].moves, strict=True):
            assert bool(en.reason) == bool(it.reason)
            if en.reason and len(by_lang["en"].moves) > 1:
                assert en.reason != it.reason
                assert sorted(_numbers(en.reason)) == sorted(_numbers(it.reason)), (en.reason, it.reason)
                assert re.search(r"\b(worth|chance)\b", en.reason) and not re.search(r"\b(worth|chance)\b", it.reason)
                assert re.search(r"\b(vale|probabilità)\b", it.reason), it.reason


@pytest.mark.parametrize("scores", [(12, 30), (0, 0)])
def test_a_sweep_says_what_it_takes_and_the_risk_the_runner_up_leaves(scores):
    """examples/view.json's position: 3C takes 4S JS (a fifteen) and sweeps the
    table; a drop leaves the next player a chance to sweep it. At 12-30 in a
    match to 51 the chance of winning the match ranks the moves, at 0-0 the points."""
    view = example_view(scores)
    result = search(view, SearchBudget(iterations=2_000, seed=1))
    hint = convert.hint_to_proto(result, 1, table=view.table, tr=translator("en"))
    best, runner = hint.moves[0], hint.moves[1]
    lead = f"{-runner.diff_to_best:.2f}"
    assert best.move.text == "3C x 4S JS" and runner.scopa_risk >= 0.1 and best.scopa_risk == 0
    assert best.reason.startswith(f"3C x 4S JS takes 4S JS and sweeps the table, leaving nothing to sweep, where "
                                  f"after {runner.move.text} the next player sweeps the table "
                                  f"{runner.scopa_risk:.0%} of the time; ")
    assert runner.reason.startswith(f"{runner.move.text} leaves ")
    italian = convert.hint_to_proto(result, 1, table=view.table, tr=translator("it")).moves[0].reason
    assert italian.startswith("3C x 4S JS prende 4S JS e porta via tutto il tavolo, senza lasciare niente da prendere")
    if scores == (0, 0):
        assert hint.ranked_by == epb.RANKED_BY_EXPECTED_POINTS
        assert f"it is worth {lead} points more than the runner-up, {runner.move.text}" in best.reason
        assert f"the best move, 3C x 4S JS, is worth {lead} points more" in runner.reason
        assert f"vale {lead} punti in più della seconda mossa migliore, {runner.move.text}" in italian
    else:
        assert hint.ranked_by == epb.RANKED_BY_WIN_CHANCE
        chance = f"{best.win_chance - runner.win_chance:.1%}"
        assert f"it gives {chance} more chance of winning the match than the runner-up, {runner.move.text}, " \
               f"with +{lead} points in this hand" in best.reason
        assert f"aumenta di {chance} la probabilità di vincere la partita" in italian


# --- through the gRPC server, the engine mode and the command line ----------------------------

ENGLISH = re.compile(r"\b(worth|chance|takes|leaves)\b")
ITALIAN = re.compile(r"\b(vale|probabilità|prende|lascia)\b")     # words only the Italian reasons have


def example_request(**fields) -> epb.GetHintRequest:
    request = json_format.Parse((ROOT / "examples" / "view.json").read_text(encoding="utf-8"), epb.GetHintRequest())
    request.budget.CopyFrom(epb.Budget(iterations=2_000))
    for name, value in fields.items():
        setattr(request, name, value)
    return request


def assert_says_why(hint: epb.Hint, lang: str) -> None:
    """The recommended move has a reason, in `lang`, naming it and the runner-up."""
    best, runner = hint.moves[0], hint.moves[1]
    assert best.reason.startswith(best.move.text) and runner.move.text in best.reason, best.reason
    assert runner.reason, "the runner-up has one too"
    for m in hint.moves:
        if m.reason:
            assert (ITALIAN if lang == "it" else ENGLISH).search(m.reason), m.reason
            assert not (ENGLISH if lang == "it" else ITALIAN).search(m.reason), m.reason


@pytest.fixture(scope="module")
def api():
    from server_support import running, stubs
    with running(max_concurrent_searches=4, grace_seconds=1) as server:
        yield stubs(server)


@pytest.mark.parametrize("language, lang", [("", "en"), ("en-GB", "en"), ("it", "it"), ("it-IT", "it"),
                                            ("fr", "en")])
def test_get_hint_says_why_in_the_requests_language(api, language, lang):
    answer = api.engine.GetHint(example_request(language=language), timeout=30)
    assert_says_why(answer.hint, lang)


def test_stream_hint_says_why_in_every_answer(api):
    request = example_request(language="it")
    answers = list(api.engine.StreamHint(epb.StreamHintRequest(view=request.view, language="it", interval_ms=10,
                                                               budget=epb.Budget(time_ms=600, exhaust=True)),
                                         timeout=60))
    assert answers[-1].final and len(answers) >= 2
    for answer in answers:
        assert_says_why(answer.hint, "it")


def test_a_malformed_language_tag_is_refused_naming_language(api):
    """In the same answer as the request's other problems, whichever check finds
    them: a budget past the server's caps, a number out of the schema's range."""
    from server_support import failure
    for tag in ("it_IT", "english!", "it-"):
        code, violations, _ = failure(api.engine.GetHint, example_request(language=tag), timeout=30)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert violations == [("language", f"{tag!r} is not a language tag (BCP 47, e.g. it, it-IT, en)")]
    request = example_request(language="it_IT")
    request.budget.time_ms = -5                         # past the server's caps
    code, violations, _ = failure(api.engine.GetHint, request, timeout=30)
    assert [f for f, _ in violations] == ["budget.time_ms", "language"]
    request = example_request(language="it_IT")
    request.view.seat = 7                               # out of the schema's range: nothing acts on the numbers
    code, violations, _ = failure(api.engine.GetHint, request, timeout=30)
    assert [f for f, _ in violations] == ["view.seat", "language"]
    code, violations, _ = failure(lambda r: list(api.engine.StreamHint(r, timeout=30)),
                                  epb.StreamHintRequest(view=request.view, language="it_IT"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and [f for f, _ in violations] == ["view.seat", "language"]


def test_the_engine_mode_says_why_in_the_querys_language(tmp_path):
    from test_engine_mode import Engine
    engine = Engine(tmp_path, "--max-concurrent-searches", "1")
    try:
        for query_id, language in (("en", ""), ("it", "it"), ("bad", "it_IT")):
            query = json_format.MessageToDict(example_request(language=language))
            engine.send({"id": query_id, "getHint": query})
        for query_id in ("en", "it"):
            [answer] = engine.answers(query_id)
            hint = json_format.ParseDict(answer["getHint"], epb.GetHintResponse()).hint
            assert_says_why(hint, query_id)
        [answer] = engine.answers("bad")
        assert answer["failure"]["code"] == "INVALID_ARGUMENT"
        assert [v["field"] for v in answer["failure"]["fieldViolations"]] == ["language"]
        assert engine.close() == 0
    finally:
        engine.kill()


def cli(capsys, *args) -> tuple[int, str, str]:
    from cirulla.cli.main import main
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def english_locale(monkeypatch):
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)


def test_cirulla_hint_says_why_in_json_and_in_its_table(capsys, english_locale, monkeypatch):
    view = ROOT / "examples" / "view.json"
    for args, lang in ((("--lang", "it"), "it"), ((), "en"), (("--lang", "en"), "en")):
        code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2_000, *args, "--json")
        assert code == 0
        data = json.loads(out)
        assert_says_why(json_format.ParseDict(data, epb.GetHintResponse()).hint, lang)
        assert data["hint"]["moves"][0]["reason"]                          # as "reason" in the JSON
    monkeypatch.setenv("LANG", "it_IT.UTF-8")                               # the locale's language by default
    code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2_000, "--json")
    assert_says_why(json_format.Parse(out, epb.GetHintResponse()).hint, "it")
    code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2_000, "--lang", "en")
    answer = search(example_view(), SearchBudget.of(iterations=2_000))       # as cirulla hint searches
    text = " ".join(out.split())
    assert code == 0 and "Seat 1 to move" in text and "why" in text
    hint = convert.hint_to_proto(answer, 0, table=example_view().table, tr=translator("en"))
    for m in hint.moves:
        if m.reason:
            assert drawn(m.reason) in text                                  # each reason, whole, its cards drawn
    code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2_000)
    assert "Tocca al posto 1" in out and "perché" in out


def test_cirulla_hint_through_a_server_says_why_in_its_language(capsys, english_locale):
    from server_support import running
    view = ROOT / "examples" / "view.json"
    with running(grace_seconds=1) as server:
        target = f"127.0.0.1:{server.port}"
        for lang in ("it", "en"):
            code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2_000, "--lang", lang, "--json",
                               "--server", target)
            assert code == 0
            assert_says_why(json_format.Parse(out, epb.GetHintResponse()).hint, lang)


def test_the_schema_says_which_moves_get_a_reason_and_how_a_bad_tag_is_refused():
    from test_docs import schema_comment
    reason = schema_comment("engine_service.proto", "MoveEvaluation", "reason")
    assert REACH == 2 and "within two of its standard errors" in reason, reason
    assert f"at most {MAX_REASONS} moves" in reason, reason
    language = schema_comment("engine_service.proto", "GetHintRequest", "language")
    assert "BCP 47" in language and 'INVALID_ARGUMENT naming "language"' in language, language
    assert "see GetHintRequest" in schema_comment("engine_service.proto", "StreamHintRequest", "language")
