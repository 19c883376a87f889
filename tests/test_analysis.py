"""Post-game analysis: decisions judged from the seat's own view,
the hindsight (every card visible) beside it, the luck of the deals, and the
identity result = start + luck + hidden luck + play + noise, event by event,
and what an error did, in words (English and Italian).

Records are built by the rules and replayed from their JSON, as a user's
would be; budgets are small to keep the tests fast. Rule ids refer to
docs/rules.md.
"""
from __future__ import annotations

import math
import re
import time
from concurrent.futures import CancelledError

import pytest

from cirulla.solver import Match, Rules, StateError, record
from cirulla.solver.analysis import (
    SIGNIFICANCE,
    THRESHOLDS,
    Decision,
    ErrorKind,
    HandPhase,
    PointKind,
    Summary,
    analyze,
    analyze_all,
    category_gains,
    decision_count,
    explain,
    grade,
    hand_phase,
    move_words,
    point_worth,
)
from cirulla.solver.events import Deal, HandEnd
from cirulla.solver.i18n import LANGUAGES, translator
from cirulla.solver.players import GreedyPlayer, RandomPlayer
from cirulla.solver.search import CancelToken

IT = 4_000                      # iterations per search in these tests
greedy = GreedyPlayer()


def sweeps(match: Match) -> list:
    """The moves of the seat to move that take the whole table (R-SCOPA)."""
    return [m for m in match.legal_moves if m.captured and len(m.captured) == len(match.table)]


def finish_hand(match: Match) -> Match:
    while not match.is_over:
        match.play(greedy.choose(match))
    return match


def replayed(match: Match) -> Match:
    """The match as a user's record gives it: saved to JSON and replayed."""
    return record.loads(record.dumps(match))


def record_where(pick, *, rules: Rules | None = None, seeds=range(300)) -> tuple[Match, int]:
    """A one-hand match played greedily, except that at the first position
    where pick(match) names a move, that move is played and the next seat
    sweeps the table; the match and the index of the picked move's event."""
    rules = rules or Rules(hands=1)
    for seed in seeds:
        m = Match(rules, seed=seed)
        while not m.is_over:
            move = pick(m)
            if move is not None:
                m.play(move)
                event = len(m.events) - 1
                m.play(sweeps(m)[0])
                return replayed(finish_hand(m)), event
            m.play(greedy.choose(m))
    raise AssertionError("no such position")


def drop_handing_a_scopa(m: Match):
    """One card on the table that a held card takes (a scopa), no declaration to
    make, and a card that cannot capture: dropping it lets the next seat sweep."""
    moves = m.legal_moves
    if len(m.table) != 1 or m.stock_size <= 6 or any(x.is_declaration for x in moves):
        return None
    if not any(x.captured for x in moves):
        return None
    for drop in (x for x in moves if not x.captured):
        after = m.copy()
        after.play(drop)
        if after.phase == "play" and sweeps(after):
            return drop
    return None


def forced_drop_handing_a_scopa(m: Match):
    moves = m.legal_moves
    if len(moves) != 1 or moves[0].captured or moves[0].is_declaration:
        return None
    after = m.copy()
    after.play(moves[0])
    return moves[0] if after.phase == "play" and sweeps(after) else None


@pytest.fixture(scope="module")
def blunder():
    match, event = record_where(drop_handing_a_scopa)
    decisions, summary = analyze_all(match, iterations=IT, seed=1)
    return match, event, decisions, summary


# --- judging decisions ------------------------------------------------------------

def test_a_dropped_card_that_hands_over_a_scopa_is_a_blunder(blunder):
    match, event, decisions, _ = blunder
    d = next(d for d in decisions if d.event_index == event)
    assert not d.played.captured and match.events[event + 1].scopa       # R-SCOPA: the next seat swept
    assert len(d.best.captured) == 1 and d.judged_by == "points"     # the one table card: a scopa
    assert d.judgement == "blunder" and d.severity >= 1.0 and d.loss_stderr > 0
    assert d.severity >= SIGNIFICANCE * d.severity_stderr
    assert d.accuracy < 25
    # the seat's summary counts it
    p = next(p for p in blunder[3].players if p.seat == d.seat)
    assert p.blunders >= 1 and p.accuracy < 100


def test_a_forced_move_is_never_an_error(blunder):
    _, _, decisions, summary = blunder
    forced = [d for d in decisions if d.forced]
    assert forced
    for d in forced:
        assert d.judgement is None and d.loss == 0 and d.severity == 0 and d.accuracy == 100
        assert d.played == d.best == d.hindsight_best and d.hindsight_loss == 0
    for p in summary.players:
        assert p.forced == sum(d.forced for d in decisions if d.seat == p.seat)


def test_a_forced_move_that_hands_over_a_scopa_is_still_no_error():
    match, event = record_where(forced_drop_handing_a_scopa)
    assert match.events[event + 1].scopa
    decisions, _ = analyze_all(match, iterations=1_000, seed=2)
    d = next(d for d in decisions if d.event_index == event)
    assert d.forced and d.judgement is None and d.accuracy == 100


def test_decisions_are_judged_from_the_seats_view_not_hindsight():
    """Two deals that differ only in the opponent's hidden cards: the seat's
    figures are the same, the hindsight and value searches are not."""
    rules = Rules(hands=1)
    table, mine = "2C 4S 6D JH", "3D 5C KS"
    analysed = []
    for theirs in ("AS 7C QD", "7S QC 2H"):
        m = Match(rules, dealer=1, manual_deal=True)
        m.deal([mine, theirs], table)
        move = m.legal_moves[0]
        m.play(move)
        (d,), summary = analyze_all(replayed(m), iterations=IT, seed=3)
        analysed.append(d)
    a, b = analysed
    for field in ("played", "best", "expected_points", "best_expected_points", "loss", "loss_stderr",
                  "judgement", "severity", "win_chance", "best_win_chance"):
        assert getattr(a, field) == getattr(b, field), field
    assert (a.value_before, a.hindsight_loss) != (b.value_before, b.hindsight_loss)


def test_grades_and_their_thresholds():
    assert [name for name, _ in THRESHOLDS] == ["blunder", "mistake", "inaccuracy"]
    assert grade(0.1) is None and grade(0.25) == "inaccuracy" and grade(0.7) == "mistake"
    assert grade(1.0) == "blunder" and grade(3.0) == "blunder"
    assert grade(1.5, stderr=0.8) is None          # within two standard errors: noise
    assert grade(1.5, stderr=0.7) == "blunder"
    worth = point_worth(Rules())
    assert 0.01 < worth < 0.03                     # one point at 0-0 of a match to 51
    assert point_worth(Rules(players=3)) is None    # no winning chance rated for 3 sides


def test_results_are_reproducible_and_do_not_depend_on_jobs(blunder):
    match = blunder[0]
    short = record.loads(record.dumps(match))
    one = [d for d in analyze(short, iterations=1_000, seed=5, jobs=1) if isinstance(d, Decision)]
    two = [d for d in analyze(short, iterations=1_000, seed=5, jobs=2) if isinstance(d, Decision)]
    assert one == two and len(one) == decision_count(match)


def test_bad_budgets_are_refused(blunder):
    with pytest.raises(StateError, match="iterations"):
        next(analyze(blunder[0], iterations=0))
    with pytest.raises(StateError, match="jobs"):
        next(analyze(blunder[0], jobs=0))


def test_analyze_all_cancelled_before_the_summary_raises(blunder):
    """A cancelled analysis yields no summary: analyze_all says so (it used to
    return a decision as the summary, or fail with an IndexError)."""
    cancel = CancelToken()
    cancel.cancel()
    with pytest.raises(CancelledError, match="before its summary"):
        analyze_all(blunder[0], iterations=1_000, seed=1, cancel=cancel)


# --- luck and the identity ---------------------------------------------------------

def check_ledger(match: Match, decisions: list[Decision], summary: Summary) -> None:
    events = match.events
    s0, s1 = summary.sides
    margin = match.scores[0] - match.scores[1]
    # the result is the score, and it splits exactly
    assert s0.result == margin and s1.result == -margin
    for s in summary.sides:
        assert math.isclose(s.start + s.luck + s.hidden_luck + s.play + s.noise, s.result, abs_tol=1e-9)
        assert math.isclose(s.rest, s.hidden_luck + s.noise)
    # every point of the graph: its step is its parts, and the parts add up to the sides' figures
    previous = 0.0
    for p in summary.timeline:
        parts = p.luck + p.hidden_luck + p.play + p.noise
        if p.kind == "start":
            assert parts == 0.0
        else:
            assert math.isclose(p.margin - previous, parts, abs_tol=1e-9), p
        previous = p.margin
    for part in ("luck", "hidden_luck", "play", "noise"):
        assert math.isclose(sum(getattr(p, part) for p in summary.timeline), getattr(s0, part), abs_tol=1e-9)
    # hidden luck: the value search's swing of each move less its play
    hidden = sum((d.value_after - d.value_before) * (1 if d.side == 0 else -1) - (-d.loss if d.side == 0 else d.loss)
                 for d in decisions)
    assert math.isclose(s0.hidden_luck, hidden, abs_tol=1e-9)
    # play is the view's losses, own seats' against the others'
    play = sum(-d.loss if d.side == 0 else d.loss for d in decisions)
    assert math.isclose(s0.play, play, abs_tol=1e-9)
    # luck is the sum of the deals' luck, one entry per round dealt
    assert math.isclose(s0.luck, sum(x.luck for x in summary.deals), abs_tol=1e-9)
    rounds = {(e.hand, e.round) for e in events if isinstance(e, Deal)}
    assert {(x.hand, x.round) for x in summary.deals} == rounds
    # each decision right after a deal carries that deal's luck
    with_luck = [d for d in decisions if d.luck is not None]
    assert [d.luck[0] for d in with_luck] == pytest.approx([x.luck for x in summary.deals])
    assert all(d.luck[1] == -d.luck[0] for d in with_luck)
    # the graph ends every hand at the score margin, and the match at the result
    ends = [p for p in summary.timeline if p.kind == "end"]
    totals = [e.sides[0].match_total - e.sides[1].match_total for e in events if isinstance(e, HandEnd)]
    assert [p.margin for p in ends] == totals and totals[-1] == margin
    turns = [p for p in summary.timeline if p.kind == "turn"]
    assert [p.decision for p in turns] == [d.number for d in decisions]


def test_luck_hidden_luck_play_and_noise_add_up_to_the_result(blunder):
    match, _, decisions, summary = blunder
    check_ledger(match, decisions, summary)


def test_two_hands_and_four_players_add_up_too():
    for rules, seed in ((Rules(hands=2), 11), (Rules(players=4, hands=1), 12)):
        m = finish_hand(Match(rules, seed=seed))
        decisions, summary = analyze_all(replayed(m), iterations=1_500, seed=1)
        assert len(decisions) == decision_count(m)
        check_ledger(m, decisions, summary)
        assert {p.side for p in summary.players} == {0, 1}


@pytest.fixture(scope="module")
def twenty_games():
    """20 seeded one-hand games, greedy against random, analysed at a small budget."""
    games = []
    for seed in range(20):
        m = Match(Rules(hands=1), seed=500 + seed, names=["greedy", "random"])
        players = [greedy, RandomPlayer(seed)]
        while not m.is_over:
            m.play(players[m.to_move].choose(m))
        games.append((m, *analyze_all(replayed(m), iterations=300, seed=seed)))
    return games


def test_the_parts_add_up_to_the_result_for_every_side_of_20_games(twenty_games):
    for match, decisions, summary in twenty_games:
        check_ledger(match, decisions, summary)


def test_errors_get_a_kind_and_a_reason_and_the_others_none(twenty_games):
    kinds = set()
    for _, decisions, _ in twenty_games:
        for d in decisions:
            assert (d.kind is None) == (d.judgement is None) == (d.reason == "")
            kinds.add(d.kind)
    assert {ErrorKind.GAVE_SCOPA, ErrorKind.MISSED_CAPTURE} <= kinds      # random play makes both


def _numbers(text: str) -> list[str]:
    """The figures of a reason: signed decimals, percentages and table sums,
    not the digits of card codes (7D)."""
    return re.findall(r"(?<![\w.])[+-]?\d+(?:\.\d+)?%?(?![A-Z\w])", text)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_an_explanations_figures_are_the_decisions_own(twenty_games, lang):
    """In every language: the figures are formatted alike, whatever the words around them."""
    tr = translator(lang)
    checked = 0
    for _, decisions, _ in twenty_games:
        for d in (d for d in decisions if d.judgement):
            reason = explain(d, tr)
            if lang == "en":
                assert reason == d.reason               # the analysis's own is the English one
            gains = category_gains(d)
            allowed = {f"{d.loss:.2f}", f"{d.played_scopa_risk:.0%}", f"{d.best_scopa_risk:.0%}",
                       *(f"{g:+.2f}" for g in gains.values()), *(f"{-g:+.2f}" for g in gains.values()),
                       str(len(d.played.captured)), str(len(d.best.captured))}
            if d.win_chance_loss is not None:
                allowed.add(f"{d.win_chance_loss:.1%}")
            table = d.position.table
            left = [c for c in table if c not in d.played.captured] + ([] if d.played.captured or not d.played.card
                                                                        else [d.played.card])
            allowed.add(str(sum(c.rank + 1 for c in left)))
            for n in _numbers(reason):
                assert n in allowed, (n, reason)
            assert f"{d.loss:.2f}" in reason and move_words(d.best, tr) in reason
            checked += 1
    assert checked >= 20


def test_the_blunders_explanation_names_the_scopa_and_its_measured_chance(blunder):
    _, event, decisions, _ = blunder
    d = next(d for d in decisions if d.event_index == event)
    assert d.kind is ErrorKind.GAVE_SCOPA
    assert d.played_scopa_risk >= d.best_scopa_risk + 0.1
    assert "sweeps it" in d.reason and "scope" in d.reason
    assert f"{d.played_scopa_risk:.0%} of the time" in d.reason
    assert f"scope {-category_gains(d)['scope']:+.2f}" in d.reason
    assert f"{d.loss:.2f} points more" in d.reason


def test_the_blunders_explanation_in_italian(blunder):
    _, event, decisions, _ = blunder
    d = next(d for d in decisions if d.event_index == event)
    reason = explain(d, translator("it-IT"))
    assert reason.startswith(f"{d.played} lascia sul tavolo ")
    assert f"chi gioca dopo fa scopa con probabilità {d.played_scopa_risk:.0%}" in reason
    assert f"(scope {-category_gains(d)['scope']:+.2f})" in reason
    assert f"la mossa migliore, {d.best}, vale {d.loss:.2f} punti in più" in reason


def test_a_decision_keeps_the_position_the_seat_saw(blunder):
    match, event, decisions, _ = blunder
    d = next(d for d in decisions if d.event_index == event)
    replay = Match(match.rules, dealer=match.first_dealer, manual_deal=True)
    for e in match.events[:event]:
        replay.deal(e.hands, e.table) if isinstance(e, Deal) else replay.play(e.move)
    view = replay.view(d.seat)
    assert d.position.hand == view.hand and d.position.table == view.table
    assert set(d.position.unseen) == set(view.unseen()) and d.played.card in d.position.hand
    assert d.position.scores == tuple(replay.scores) and len(d.position.hand_sizes) == match.rules.players


def test_the_phases_of_a_hand():
    two, four = Rules(), Rules(players=4)
    assert [hand_phase(two, r) for r in range(6)] == [HandPhase.FIRST_ROUND] + [HandPhase.MIDDLE] * 3 + \
        [HandPhase.LAST_TWO_ROUNDS] * 2
    assert [hand_phase(four, r) for r in range(3)] == [HandPhase.FIRST_ROUND] + [HandPhase.LAST_TWO_ROUNDS] * 2


def test_three_sides_get_decisions_but_no_luck():
    m = finish_hand(Match(Rules(players=3, hands=1), seed=4))
    decisions, summary = analyze_all(replayed(m), iterations=1_000, seed=1)
    assert len(decisions) == decision_count(m) and len(summary.players) == 3
    assert summary.sides == () and summary.deals == () and summary.timeline == ()
    assert all(d.luck is None and d.win_chance is None and d.value_before is None for d in decisions)


def test_an_unfinished_record_counts_its_last_hand_at_its_value():
    m = Match(Rules(), seed=8)
    for _ in range(10):
        m.play(greedy.choose(m))
    decisions, summary = analyze_all(replayed(m), iterations=1_000, seed=1)
    s0 = summary.sides[0]
    assert len(decisions) == 10 and summary.winner is None
    assert math.isclose(s0.result, decisions[-1].value_after * (1 if decisions[-1].side == 0 else -1))
    assert math.isclose(s0.start + s0.luck + s0.hidden_luck + s0.play + s0.noise, s0.result, abs_tol=1e-9)


# --- the service: AnalysisService.AnalyzeGame through its stub ----------------------

@pytest.fixture(scope="module")
def service():
    from server_support import running
    with running(max_concurrent_searches=4, max_threads=2, max_iterations=200_000,
                 grace_seconds=1) as server:
        import grpc

        from cirulla.v1 import analysis_service_pb2_grpc
        channel = grpc.insecure_channel(f"127.0.0.1:{server.port}")
        yield server, analysis_service_pb2_grpc.AnalysisServiceStub(channel)
        channel.close()


def test_analyze_game_streams_decisions_then_the_summary(service, blunder):
    from cirulla.server.convert import decision_from_proto, decision_to_proto, summary_from_proto, summary_to_proto
    from cirulla.v1 import analysis_service_pb2 as apb
    server, stub = service
    match = blunder[0]
    replies = list(stub.AnalyzeGame(apb.AnalyzeGameRequest(record=record.to_proto(match),
                                                           iterations=1_000, seed=7), timeout=60))
    total = decision_count(match)
    assert [r.WhichOneof("result") for r in replies] == ["decision"] * total + ["summary"]
    assert [r.done for r in replies] == list(range(1, total + 1)) + [total]
    assert {r.total for r in replies} == {total}
    local, summary = analyze_all(match, iterations=1_000, seed=7)
    assert [r.decision for r in replies[:-1]] == [decision_to_proto(d) for d in local]
    got = replies[-1].summary
    assert got.players == summary_to_proto(summary).players and got.sides == summary_to_proto(summary).sides
    # and back: what the CLI's --server mode reads
    assert [decision_from_proto(r.decision, match.rules) for r in replies[:-1]] == local
    back = summary_from_proto(got)
    assert back.sides == summary.sides and back.timeline == summary.timeline
    assert {p.kind for p in got.timeline} <= {apb.POINT_KIND_START, apb.POINT_KIND_DEAL, apb.POINT_KIND_TURN,
                                               apb.POINT_KIND_END}
    assert all(type(p.kind) is PointKind for p in back.timeline)
    assert server.service.limits.slots.in_use == 0


def test_analyze_game_gives_the_reasons_in_the_requests_language(service, blunder):
    """An app that shows the errors to Italian players asks for `language: "it"`:
    the same figures, each error's reason in Italian."""
    from cirulla.server.convert import decision_to_proto
    from cirulla.solver.i18n import translator
    from cirulla.v1 import analysis_service_pb2 as apb
    _, stub = service
    match = blunder[0]
    local, _ = analyze_all(match, iterations=1_000, seed=7)
    for lang in ("it", "it-IT", "en", "de"):
        replies = list(stub.AnalyzeGame(apb.AnalyzeGameRequest(record=record.to_proto(match), iterations=1_000,
                                                               seed=7, language=lang), timeout=60))
        got = [r.decision for r in replies[:-1]]
        assert got == [decision_to_proto(d, translator(lang)) for d in local]
        errors = [(d, g) for d, g in zip(local, got, strict=True) if d.judgement]
        assert errors and all(g.reason == explain(d, translator(lang)) for d, g in errors)
        italian = lang.startswith("it")
        assert all(("la mossa migliore" in g.reason) == italian for _, g in errors), [g.reason for _, g in errors]
        assert all(g.played_categories == decision_to_proto(d).played_categories for d, g in errors)


def test_analyze_game_refuses_bad_records_and_budgets(service, blunder):
    import grpc

    from cirulla.v1 import analysis_service_pb2 as apb
    from server_support import failure
    _, stub = service
    msg = record.to_proto(blunder[0])
    msg.events[5].turn.move.Clear()
    msg.events[5].turn.move.card = "KD"
    for request, field in ((apb.AnalyzeGameRequest(record=msg), "record.events[5].turn.move"),
                           (apb.AnalyzeGameRequest(record=record.to_proto(blunder[0]), iterations=10**9),
                            "iterations"),
                           (apb.AnalyzeGameRequest(record=record.to_proto(blunder[0]), threads=3), "threads"),
                           (apb.AnalyzeGameRequest(record=record.to_proto(blunder[0]), language="it_IT"),
                            "language")):
        code, violations, _ = failure(lambda r: list(stub.AnalyzeGame(r, timeout=30)), request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT and violations[0][0] == field


def test_a_cancelled_analysis_frees_its_threads(service, blunder):
    import time

    from cirulla.v1 import analysis_service_pb2 as apb
    server, stub = service
    call = stub.AnalyzeGame(apb.AnalyzeGameRequest(record=record.to_proto(blunder[0]), iterations=150_000))
    first = next(call)
    assert first.WhichOneof("result") == "decision" and server.service.limits.slots.in_use == 2
    call.cancel()
    deadline = time.monotonic() + 10        # a hang: the analysis itself would hold them for minutes
    while server.service.limits.slots.in_use and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.service.limits.slots.in_use == 0


def test_an_analysis_past_the_servers_cap_is_refused_or_stopped(blunder, monkeypatch):
    """One client cannot hold the cores for hours: an analysis whose estimate
    passes --max-analysis-seconds is refused, naming the iterations it may ask
    for; one that runs twice the cap regardless is stopped."""
    import grpc

    from cirulla.server import service as service_module
    from cirulla.v1 import analysis_service_pb2 as apb
    from cirulla.v1 import analysis_service_pb2_grpc
    from server_support import failure, running
    msg = record.to_proto(blunder[0])
    with running(max_analysis_seconds=1, max_iterations=5_000_000, max_threads=1) as server:
        stub = analysis_service_pb2_grpc.AnalysisServiceStub(grpc.insecure_channel(f"127.0.0.1:{server.port}"))
        code, violations, _ = failure(lambda r: list(stub.AnalyzeGame(r, timeout=30)),
                                      apb.AnalyzeGameRequest(record=msg, iterations=5_000_000))
        assert code == grpc.StatusCode.INVALID_ARGUMENT and violations[0][0] == "iterations"
        assert "ask for at most" in violations[0][1]
        # an estimate far too low (a pace of 10^9 iterations a ms): the cap's timer stops it
        monkeypatch.setattr(service_module, "ITERATIONS_PER_MS", 10**9)
        started = time.monotonic()
        code, _, message = failure(lambda r: list(stub.AnalyzeGame(r, timeout=30)),
                                   apb.AnalyzeGameRequest(record=msg, iterations=3_000_000))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "twice the server's cap of 1 s" in message
        assert time.monotonic() - started < 6 and server.service.limits.slots.in_use == 0


def test_one_call_leaves_room_for_others_by_default():
    import os

    from cirulla.server.config import ServerConfig
    assert ServerConfig().max_threads == max((os.cpu_count() or 1) // 2, 1)
