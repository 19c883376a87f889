"""The cirulla.v1 service through its generated stubs, against an in-process
server on a free port of 127.0.0.1: every RPC, every error path, deadlines,
cancellation, limits, authentication, TLS, and clients from outside Python."""
from __future__ import annotations

import json
import logging
import random
import shutil
import subprocess
import time

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.server.config import ServerConfig
from cirulla.server.errors import json_path, retry_delay
from cirulla.server.service import STRENGTHS, Service
from cirulla.solver import Match, Rules, record
from cirulla.solver.players import GreedyPlayer, self_play
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import arena_pb2, bounds_pb2, embedded_engine_pb2
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import rules_service_pb2 as rpb
from server_support import Call, choice_position, failure, running, stubs, until, view_msg

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest.fixture(scope="module")
def server():
    with running(max_concurrent_searches=8, max_threads=2, max_budget_ms=3_000,
                 default_budget_ms=100, grace_seconds=1) as s:
        yield s


@pytest.fixture(scope="module")
def api(server):
    return stubs(server)


@pytest.fixture(scope="module")
def match():
    return choice_position(min_moves=4)


# The deadline tests' server keeps this much of every call's deadline back to send the answer (the default is
# 25 ms): a search the deadline bounds then answers in time however busy the machine is, and the tests hold
# what ends the search. How close to its deadline an answer comes by default is bench/bench_deadlines.py's.
DEADLINE_MARGIN_S = 1.0


@pytest.fixture(scope="module")
def margin_api():
    with running(deadline_margin_ms=int(DEADLINE_MARGIN_S * 1000)) as s:
        yield stubs(s)


def cpu_seconds_until(done) -> float:
    """The CPU time this process (the in-process server and its client) spends
    until done() holds: the work a cancelled search goes on doing, which a busy
    machine does not stretch as it stretches the wall clock. A hang fails after
    5 s, half the 10 s budgets of the searches it waits for."""
    start = time.process_time()
    until(done)
    return time.process_time() - start


def texts(moves) -> list[str]:
    return [m.text for m in moves]


# --- GetEngineInfo ---

def test_engine_info(api, server):
    info = api.engine.GetEngineInfo(epb.GetEngineInfoRequest())
    assert info.version
    presets = {p.name: p.rules for p in info.presets}
    assert set(presets) >= {"classic", "online", "relaxed", "extended", "cirullone", "five"}
    assert presets["five"].players == 5 and presets["classic"].players == 2
    options = {o.name: list(o.values) for o in info.options}
    assert options["capture"] == ["mandatory", "optional"] and options["re_bello"] == ["true", "false"]
    assert list(info.player_counts) == [2, 3, 4, 5]
    assert epb.STRENGTH_BEGINNER in info.strengths and epb.STRENGTH_FULL in info.strengths
    assert (info.max_time_ms, info.max_threads, info.default_time_ms, info.max_concurrent_searches) == \
        (3_000, 2, 100, 8)
    assert list(info.languages) == ["en", "it"]         # what a request's language may ask for


def test_engine_info_names_the_levels_in_the_players_language(api):
    """An app's menu of levels shows each level's label and about to players:
    in the request's language (they were English only), the name the same
    identifier in every language; a malformed tag is the field's error."""
    english = api.engine.GetEngineInfo(epb.GetEngineInfoRequest())
    italian = api.engine.GetEngineInfo(epb.GetEngineInfoRequest(language="it-IT"))
    casual = {s.name: s for s in italian.strength_info}["casual"]
    assert (casual.label, casual.about) == ("amatore", "guarda un po' avanti, qualche svista")
    assert [s.name for s in italian.strength_info] == [s.name for s in english.strength_info]
    assert [(s.label, s.about) for s in english.strength_info] == \
        [(lv.name, lv.about) for lv in (STRENGTHS[s.strength] for s in english.strength_info)]
    assert all(i.label != e.label and i.about != e.about
               for i, e in zip(italian.strength_info, english.strength_info, strict=True))
    code, violations, _ = failure(api.engine.GetEngineInfo, epb.GetEngineInfoRequest(language="it_IT!"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and [f for f, _ in violations] == ["language"]


def test_engine_info_is_built_once_and_each_caller_gets_its_own(monkeypatch):
    """Reading the installed version's metadata took most of a GetEngineInfo
    call (4.8 ms of server CPU): it is read once a server, and what one caller
    changes in its answer is not what the next gets."""
    from cirulla.server import service as service_module
    reads = []
    monkeypatch.setattr(service_module.metadata, "version", lambda name: reads.append(name) or "9.9")
    service = Service(ServerConfig())
    first = service.get_engine_info(epb.GetEngineInfoRequest(), Call())
    first.version, first.max_time_ms = "changed", 1
    second = service.get_engine_info(epb.GetEngineInfoRequest(), Call())
    assert reads == ["cirulla"]
    assert (second.version, second.max_time_ms) == ("9.9", ServerConfig().max_budget_ms)


# --- RulesService ---

def test_list_legal_moves_is_the_matchs(api):
    rng = random.Random(2)
    for rules in (Rules(), Rules.preset("online", players=4), Rules.preset("five")):
        m = Match(rules, seed=4)
        for _ in range(12):
            got = api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(m)))
            assert texts(got.moves) == [str(x) for x in m.legal_moves]
            m.play(rng.choice(m.legal_moves))


def test_list_legal_moves_needs_the_seat_to_move(api, match):
    code, violations, _ = failure(api.rules.ListLegalMoves,
                                  rpb.ListLegalMovesRequest(view=view_msg(match, 1 - match.to_move)))
    assert code == INVALID and violations[0][0] == "view.to_move"


def test_replay_whole_match(api):
    m = self_play(Rules(), [GreedyPlayer(), GreedyPlayer()], seed=9)
    got = api.rules.ReplayRecord(rpb.ReplayRecordRequest(record=record.to_proto(m)))
    assert got.WhichOneof("outcome") == "state"
    s = got.state
    assert s.phase == rpb.PHASE_OVER and list(s.scores) == m.scores
    assert s.HasField("winner") == (m.winner is not None) and s.winner == (m.winner or 0)


def test_replay_part_of_a_match(api, match):
    got = api.rules.ReplayRecord(rpb.ReplayRecordRequest(record=record.to_proto(match))).state
    assert got.phase == rpb.PHASE_PLAY and not got.HasField("winner")
    assert (got.to_move, list(got.table)) == (match.to_move, [str(c) for c in match.table])
    assert [list(h.cards) for h in got.hands] == [[str(c) for c in match.hand(s)] for s in range(2)]
    assert texts(got.legal_moves) == [str(x) for x in match.legal_moves]
    assert [p.total for p in got.hand_points] == [sum(r.values()) for r in match.hand_points()]


def test_replay_names_the_first_illegal_event(api, match):
    msg = record.to_proto(match)
    i = next(k for k, e in enumerate(msg.events) if e.HasField("turn"))
    seat = msg.events[i].turn.seat
    other = next(c for c in msg.events[0].deal.hands[1 - seat].cards)
    msg.events[i].turn.move.Clear()
    msg.events[i].turn.move.card = other                 # a card the other seat holds
    got = api.rules.ReplayRecord(rpb.ReplayRecordRequest(record=msg))
    assert got.WhichOneof("outcome") == "illegal_event"
    e = got.illegal_event
    assert (e.index, e.field) == (i, f"record.events[{i}].turn.move") and f"does not hold {other}" in e.reason


def test_replay_checks_the_records_claims(api):
    m = self_play(Rules(), [GreedyPlayer(), GreedyPlayer()], seed=9)
    msg = record.to_proto(m)
    msg.winner = 1 - m.winner if m.winner is not None else 0
    e = api.rules.ReplayRecord(rpb.ReplayRecordRequest(record=msg)).illegal_event
    assert (e.index, e.field) == (-1, "record.winner")
    msg = record.to_proto(m)
    i = next(k for k, e in enumerate(msg.events) if e.HasField("turn") and not e.turn.scopa)
    msg.events[i].turn.scopa = True                     # R-SCOPA claimed where there was none
    e = api.rules.ReplayRecord(rpb.ReplayRecordRequest(record=msg)).illegal_event
    assert e.index == i and "scopa" in e.reason


def test_replay_of_something_that_is_not_a_record(api, match):
    msg = record.to_proto(match)
    i = next(k for k, e in enumerate(msg.events) if e.HasField("turn"))
    msg.events[i].turn.move.card = "ZZ"
    msg.schema_version = 3
    code, violations, _ = failure(api.rules.ReplayRecord, rpb.ReplayRecordRequest(record=msg))
    fields = dict(violations)
    assert code == INVALID and "'ZZ'" in fields[f"record.events[{i}].turn.move.card"]
    assert "record.schema_version" in fields
    msg = record.to_proto(match)
    msg.rules.preset = "poker"
    assert failure(api.rules.ReplayRecord, rpb.ReplayRecordRequest(record=msg))[1][0][0] == "record.rules.preset"
    msg = record.to_proto(match)
    msg.events.add()                                    # an event of no kind
    assert failure(api.rules.ReplayRecord, rpb.ReplayRecordRequest(record=msg))[1] == \
        [(f"record.events[{len(msg.events) - 1}]", "an empty event: set one of deal, turn, hand_end")]


# --- GetHint, StreamHint ---

def test_get_hint_ranks_every_legal_move(api, match):
    hint = api.engine.GetHint(epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(time_ms=60),
                                                 seed=1)).hint
    assert sorted(texts(m.move for m in hint.moves)) == sorted(str(x) for x in match.legal_moves)
    assert hint.best == hint.moves[0].move
    assert hint.ranked_by == epb.RANKED_BY_EXPECTED_POINTS           # far from the target
    expected = [m.expected_points for m in hint.moves]
    assert expected[0] == max(expected)
    for m in hint.moves:
        assert m.diff_to_best == pytest.approx(m.expected_points - expected[0], abs=1e-9)
        assert sum(getattr(m.categories, f.name) for f in epb.CategoryPoints.DESCRIPTOR.fields) == \
            pytest.approx(m.expected_points, abs=1e-9)
        assert m.expected_points_stderr >= 0 and m.diff_to_best_stderr >= 0 and m.samples > 0
        assert 0 <= m.scopa_risk <= 1
    assert hint.stats.iterations > 0 and hint.stats.threads == 1 and hint.stats.seed == 1
    assert hint.stats.method == epb.SEARCH_METHOD_ISMCTS
    assert not hint.cut_short


@pytest.mark.usefixtures("exact_against_any_opponent")
def test_get_hint_solves_the_last_round_exactly(api):
    for seed in range(50):
        m = Match(Rules(), seed=seed)
        greedy = GreedyPlayer()
        while not m.is_over and (m.stock_size or len(m.legal_moves) < 2):
            m.play(greedy.choose(m))
        if not m.is_over and m.hand_number == 0:
            break
    hint = api.engine.GetHint(epb.GetHintRequest(view=view_msg(m), budget=epb.Budget(exhaust=True, time_ms=500))).hint
    assert hint.stats.method == epb.SEARCH_METHOD_EXACT and not hint.cut_short
    assert all(x.expected_points_stderr == 0 for x in hint.moves)


def test_get_hint_with_two_threads(api, match):
    hint = api.engine.GetHint(epb.GetHintRequest(view=view_msg(match),
                                                 budget=epb.Budget(time_ms=60, threads=2))).hint
    assert hint.stats.threads == 2 and len(hint.moves) == len(match.legal_moves)


def _endgame(stock: int) -> Match:
    """A 2-player position with `stock` cards left to deal and a choice to make."""
    greedy = GreedyPlayer()
    for seed in range(50):
        m = Match(Rules(), seed=seed)
        while not m.is_over and (m.stock_size != stock or len(m.legal_moves) < 2 or len(m.hand(m.to_move)) < 3):
            m.play(greedy.choose(m))
        if not m.is_over and m.hand_number == 0:
            return m
    raise AssertionError("no such position")


@pytest.mark.usefixtures("exact_against_any_opponent")
def test_the_exact_endgame_answers_by_the_deadline(margin_api):
    """The last two rounds' exact solve (tens of ms) stops at the call's
    deadline (25 ms of search left) with the worlds solved by then, marked cut
    short; one that finishes is never cut short, however close the deadline was."""
    view = view_msg(_endgame(6))
    margin_api.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(iterations=100)))   # warm
    hint = margin_api.engine.GetHint(epb.GetHintRequest(view=view), timeout=DEADLINE_MARGIN_S + 0.025).hint
    assert hint.stats.method == epb.SEARCH_METHOD_EXACT and hint.cut_short
    assert all(m.expected_points_stderr > 0 for m in hint.moves)
    last = view_msg(_endgame(0))                   # one world: solved in a few ms
    hint = margin_api.engine.GetHint(epb.GetHintRequest(view=last, budget=epb.Budget(exhaust=True, time_ms=2_000)),
                                     timeout=DEADLINE_MARGIN_S + 0.5).hint
    assert hint.stats.method == epb.SEARCH_METHOD_EXACT and not hint.cut_short


def test_an_option_set_never_seen_answers_within_its_budget():
    """The first search of an option set does not build its tables inside the
    call (0.2-0.4 s of self-play): it answers within its budget, ranked by
    points (tables built inside the call would give each move its chance of
    winning), and the tables are built in the background for the next calls
    (at a low priority: on a busy machine, in seconds)."""
    rules = Rules.preset("relaxed", players=4, target=73, re_bello=True)   # warmed nowhere
    with running(warm_presets="") as s:
        api = stubs(s)
        view = view_msg(choice_position(rules=rules))
        hint = api.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=10)), timeout=10).hint
        assert hint.moves and hint.cut_short is False
        assert hint.ranked_by == epb.RANKED_BY_EXPECTED_POINTS and not any(m.HasField("win_chance") for m in hint.moves)
        deadline = time.monotonic() + 120
        while not any(m.HasField("win_chance") for m in hint.moves) and time.monotonic() < deadline:
            time.sleep(0.1)
            hint = api.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=10))).hint
        assert all(m.HasField("win_chance") for m in hint.moves)      # the tables came


def test_get_hint_is_reproducible_with_a_seed(api, match):
    def ask(seed):
        hint = api.engine.GetHint(epb.GetHintRequest(view=view_msg(match), seed=seed,
                                                     budget=epb.Budget(iterations=400))).hint
        hint.stats.ClearField("elapsed_ms")
        hint.stats.ClearField("cpu_ms")
        return hint
    assert ask(5) == ask(5)


def test_stream_hint_sends_interim_rankings_then_a_final_one(api, match):
    start = time.perf_counter()
    replies = list(api.engine.StreamHint(epb.StreamHintRequest(
        view=view_msg(match), budget=epb.Budget(exhaust=True, time_ms=400), interval_ms=50, seed=2)))
    elapsed = time.perf_counter() - start
    assert [r.final for r in replies] == [False] * (len(replies) - 1) + [True]
    assert len(replies) >= 4 and 0.35 < elapsed < 30       # the 400 ms budget ends it (30 s: a hang)
    legal = sorted(str(x) for x in match.legal_moves)
    for r in replies:
        assert sorted(texts(m.move for m in r.hint.moves)) == legal
    iterations = [r.hint.stats.iterations for r in replies]
    assert iterations == sorted(iterations) and not replies[-1].hint.cut_short


def test_reports_not_taken_give_way_to_the_latest(match):
    """A reader slower than the reports is not sent a backlog: those it has not
    taken are replaced by the newest, and the final one replaces them all."""
    service = Service(ServerConfig(max_concurrent_searches=1))
    reports = service.stream_hint(epb.StreamHintRequest(view=view_msg(match),
                                                        budget=epb.Budget(exhaust=True, time_ms=1_000),
                                                        interval_ms=10), Call())
    first = next(reports)
    assert not first.final and service.limits.slots.in_use == 1
    waited = time.monotonic()
    while service.limits.slots.in_use:          # freed after the search's final report
        assert time.monotonic() - waited < 60, "the search did not end"
        time.sleep(0.01)
    last = next(reports)
    assert last.final and last.hint.stats.iterations > first.hint.stats.iterations
    assert next(reports, None) is None


# --- ChooseMove ---

def test_choose_move_at_every_strength(api, match):
    legal = {str(x) for x in match.legal_moves}
    for strength in (epb.STRENGTH_BEGINNER, epb.STRENGTH_CASUAL, epb.STRENGTH_INTERMEDIATE,
                     epb.STRENGTH_ADVANCED, epb.STRENGTH_FULL):
        req = epb.ChooseMoveRequest(view=view_msg(match), strength=strength, seed=3,
                                    budget=epb.Budget(iterations=2_000))
        got = api.engine.ChooseMove(req)
        assert got.move.text in legal and got.strength == strength
        assert api.engine.ChooseMove(req).move == got.move          # the seed decides


def test_full_strength_plays_the_hints_best_move(api, match):
    budget = epb.Budget(iterations=1_500)
    best = api.engine.GetHint(epb.GetHintRequest(view=view_msg(match), budget=budget, seed=8)).hint.best
    got = api.engine.ChooseMove(epb.ChooseMoveRequest(view=view_msg(match), strength=epb.STRENGTH_FULL,
                                                      seed=8, budget=budget))
    assert got.move == best and got.strength == epb.STRENGTH_FULL


def test_a_strength_is_required(api, match):
    """A client that misspells a strength (proto-loader turns an unknown name into
    0) must hear of it, not get full strength silently."""
    code, violations, _ = failure(api.engine.ChooseMove, epb.ChooseMoveRequest(view=view_msg(match), seed=8))
    assert code == INVALID and violations[0][0] == "strength" and "required" in violations[0][1]


def test_a_view_left_out_is_named_as_required(api, match):
    """An empty request (`getHint: {}`) is told its view is missing, not that the
    history of a position it never gave leaves an empty table."""
    for call, request in ((api.engine.GetHint, epb.GetHintRequest()),
                          (api.engine.ChooseMove, epb.ChooseMoveRequest(strength=epb.STRENGTH_BEGINNER))):
        code, violations, _ = failure(call, request)
        assert code == INVALID and violations[0][0] == "view" and violations[0][1].startswith("required"), violations


def test_choose_move_checks_a_budget_it_does_not_use(api, match):
    """Below full strength the level's own budget applies, but a budget sent is
    still checked: a client learns of its mistake before it matters."""
    request = epb.ChooseMoveRequest(view=view_msg(match), strength=epb.STRENGTH_BEGINNER,
                                    budget=epb.Budget(time_ms=-5, threads=99))
    code, violations, _ = failure(api.engine.ChooseMove, request)
    assert code == INVALID and [f for f, _ in violations] == ["budget.time_ms", "budget.threads"]


def test_a_beginner_slips(api, match):
    """Over many seeds a beginner does not always play its own search's best move."""
    moves = set()
    for seed in range(30):
        moves.add(api.engine.ChooseMove(epb.ChooseMoveRequest(
            view=view_msg(match), strength=epb.STRENGTH_BEGINNER, seed=seed)).move.text)
    assert len(moves) >= 2


def test_a_forced_move_needs_no_search(api):
    for seed in range(100):
        m = Match(Rules(), seed=seed)
        while not m.is_over and len(m.legal_moves) != 1:
            m.play(m.legal_moves[-1])
        if not m.is_over:
            got = api.engine.ChooseMove(epb.ChooseMoveRequest(view=view_msg(m), seed=1,
                                                              strength=epb.STRENGTH_CASUAL))
            assert got.move.text == str(m.legal_moves[0]) and got.stats.method == epb.SEARCH_METHOD_FORCED
            return
    pytest.skip("no forced move found")


# --- bad input ---

def test_every_problem_of_a_request_in_one_answer(api, match):
    """Three problems in two parts of the request (the view and the budget): one
    INVALID_ARGUMENT names all three, so a client fixes them in one go."""
    msg = view_msg(match)
    msg.hand[0] = "ZZ"
    msg.seat = 7
    code, violations, message = failure(api.engine.GetHint,
                                        epb.GetHintRequest(view=msg, budget=epb.Budget(time_ms=-5)))
    assert code == INVALID
    assert [f for f, _ in violations] == ["view.hand[0]", "view.seat", "budget.time_ms"]
    assert "(and 2 more)" in message


def test_unknown_enum_values_are_refused(api, match):
    """An enum number the schema does not define is bad input, never a default."""
    msg = view_msg(match)
    msg.rules.capture = 7
    code, violations, _ = failure(api.engine.GetHint, epb.GetHintRequest(view=msg))
    assert code == INVALID and violations[0][0] == "view.rules.capture" and "1..2" in violations[0][1]
    code, violations, _ = failure(api.engine.ChooseMove, epb.ChooseMoveRequest(view=view_msg(match), strength=9))
    assert code == INVALID and violations == [("strength", violations[0][1])] and "unknown value 9" in violations[0][1]


@pytest.mark.parametrize("scores,hand_number,rules,field", [
    ([60, 0], 0, {}, "view.scores[0]"),                 # past the target, alone at the top: over
    ([0, 51], 0, {}, "view.scores[1]"),                 # at the target
    ([20, 9], 3, {"hands": 3}, "view.hand_number"),     # the fourth hand of a three-hand match
    ([5, -1], 0, {}, "view.scores[1]"),                 # a score no match gives
])
def test_a_view_of_a_finished_match_or_an_impossible_score_is_refused(api, match, scores, hand_number,
                                                                       rules, field):
    msg = view_msg(match)
    msg.scores[:] = scores
    msg.hand_number = hand_number
    for name, value in rules.items():
        setattr(msg.rules, name, value)
    code, violations, _ = failure(api.engine.GetHint, epb.GetHintRequest(view=msg))
    assert code == INVALID and field in [f for f, _ in violations], violations


def test_a_tie_at_the_target_plays_on(api, match):
    """R-WINNER: sides level at the top past the target play another hand."""
    msg = view_msg(match)
    msg.scores[:] = [55, 55]
    assert api.engine.GetHint(epb.GetHintRequest(view=msg, budget=epb.Budget(iterations=200))).hint.moves

@pytest.mark.parametrize("rpc", ["GetHint", "StreamHint", "ChooseMove", "ListLegalMoves"])
def test_every_view_rpc_names_an_unknown_card(api, match, rpc):
    msg = view_msg(match)
    msg.hand[2] = "ZZ"
    request = {"GetHint": epb.GetHintRequest, "StreamHint": epb.StreamHintRequest,
               "ChooseMove": epb.ChooseMoveRequest,
               "ListLegalMoves": rpb.ListLegalMovesRequest}[rpc](view=msg)
    stub = api.rules if rpc == "ListLegalMoves" else api.engine
    call = getattr(stub, rpc)
    code, violations, message = failure(lambda r: list(call(r)) if rpc == "StreamHint" else call(r), request)
    assert code == INVALID and violations[0][0] == "view.hand[2]" and "'ZZ'" in violations[0][1]
    assert message.startswith("view.hand[2]")


@pytest.mark.parametrize("mutate,field,words", [
    (lambda v: v.table.append(v.hand[0]), "view.table", "also in hand"),            # a card seen twice
    (lambda v: v.hand.pop(), "view.hand", "it holds 3"),                           # wrong holding size
    (lambda v: v.hand_sizes.append(3), "view.hand_sizes", "3 entries, but 2 players make 2"),
    (lambda v: v.history[0].deal.hands[1 - v.seat].cards.append("AD"),
     None, "cannot hold seat"),                                                      # another seat's cards
    (lambda v: v.ClearField("hand"), "view.hand", "it holds 3"),
])
def test_bad_views(api, match, mutate, field, words):
    msg = view_msg(match)
    mutate(msg)
    code, violations, _ = failure(api.engine.GetHint, epb.GetHintRequest(view=msg))
    assert code == INVALID
    f, problem = violations[0]
    assert (field is None or f == field) and words in problem


@pytest.mark.parametrize("budget,field", [
    (epb.Budget(exhaust=True, time_ms=3_001), "budget.time_ms"), (epb.Budget(time_ms=-5), "budget.time_ms"),
    (epb.Budget(iterations=10**12), "budget.iterations"), (epb.Budget(threads=3), "budget.threads"),
])
def test_budget_caps(api, match, budget, field):
    code, violations, _ = failure(api.engine.GetHint, epb.GetHintRequest(view=view_msg(match), budget=budget))
    assert code == INVALID and violations[0][0] == field


def test_bad_interval_and_strength(api, match):
    code, violations, _ = failure(lambda r: list(api.engine.StreamHint(r)),
                                  epb.StreamHintRequest(view=view_msg(match), interval_ms=1))
    assert code == INVALID and violations[0][0] == "interval_ms"
    code, violations, _ = failure(api.engine.ChooseMove, epb.ChooseMoveRequest(view=view_msg(match), strength=42))
    assert code == INVALID and violations[0][0] == "strength"


def test_a_violation_names_its_field_as_proto_and_as_json(api, match):
    """The field is the proto path; where the JSON mapping names it otherwise,
    the description ends with that name: a client that sent JSON finds its own."""
    msg = view_msg(match)
    msg.hand[0] = "ZZ"
    code, violations, message = failure(api.engine.GetHint, epb.GetHintRequest(
        view=msg, budget=epb.Budget(exhaust=True, time_ms=3_001, iterations=10**12)))
    assert code == INVALID
    assert violations == [
        ("view.hand[0]", "'ZZ': unknown rank 'Z' (ranks are A 2 3 4 5 6 7 J Q K)"),
        ("budget.time_ms", "3001 is out of range 0..3000 (JSON: budget.timeMs)"),
        ("budget.iterations", "1000000000000 is out of range 0..5000000"),
    ], violations
    assert message.startswith("view.hand[0]: 'ZZ'")


def test_every_field_of_the_schema_has_the_json_name_violations_give():
    """json_path's rule (lowerCamelCase) is protobuf's for every field of
    cirulla.v1: no field sets a json_name of its own."""
    def fields(message):
        yield from message.fields
        for nested in message.nested_types:
            yield from fields(nested)

    modules = (pb, epb, rpb, apb, embedded_engine_pb2, arena_pb2, bounds_pb2)
    every = [f for m in modules for message in m.DESCRIPTOR.message_types_by_name.values() for f in fields(message)]
    assert len(every) > 100
    assert [(f.full_name, f.json_name) for f in every if json_path(f.name) != f.json_name] == []


def test_fuzz_malformed_requests_leave_the_server_serving(api, server, match):
    """Hundreds of broken requests: raw garbage, and valid views with a field
    knocked out of shape. Each gets OK or INVALID_ARGUMENT, never a crash or an
    INTERNAL error, and the server still answers afterwards."""
    rng = random.Random(1234)
    raw = api.channel.unary_unary("/cirulla.v1.EngineService/GetHint",
                                  request_serializer=lambda b: b, response_deserializer=lambda b: b)
    codes: dict = {}
    for _ in range(60):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        try:
            raw(blob, timeout=5)
            codes["OK"] = codes.get("OK", 0) + 1
        except grpc.RpcError as e:
            codes[e.code().name] = codes.get(e.code().name, 0) + 1
    base = view_msg(match)
    unseen = [str(c) for c in match.view(match.to_move).unseen()]
    scalar = ["seat", "hand_number", "dealer", "round", "to_move", "stock_size", "matta_as"]
    cards = ["AD", "7H", "KS", "ZZ", "", "7", "10D", "7♦", "xx", "QH"]
    for i in range(300):
        v = pb.SeatView()
        v.CopyFrom(base)
        for _ in range(rng.randrange(1, 4)):
            kind = rng.randrange(7)
            if kind == 0:
                name = rng.choice(scalar)
                setattr(v, name, rng.choice(["", "Q", "7", "ZZ"]) if name == "matta_as"
                        else rng.choice([-1, 0, 1, 2, 5, 2**31 - 1, -2**31]))
            elif kind == 1:
                target = rng.choice([v.hand, v.table, v.piles[0].cards, v.public[1].cards])
                if target and rng.random() < 0.5:
                    del target[rng.randrange(len(target))]
                else:
                    target.append(rng.choice(cards))
            elif kind == 2:
                lst = rng.choice([v.hand_sizes, v.scope, v.scores, v.declarations])
                if lst and rng.random() < 0.5:
                    lst[rng.randrange(len(lst))] = rng.choice([-1, 0, 3, 7, 99, 2**31 - 1])
                else:
                    lst.append(rng.randrange(-2, 9))
            elif kind == 3:
                v.rules.players = rng.choice([0, 1, 3, 4, 5, 6])
                v.rules.preset = rng.choice(["", "classic", "five", "cirullone", "x"])
            elif kind == 4:
                v.declared.append(rng.random() < 0.5)
                v.played_this_round.add().cards.append(rng.choice(cards))
            elif kind == 5 and v.stock_size > 1:
                k = rng.randrange(1, v.stock_size)          # stock cards moved to a pile: 40 still
                v.piles[1].cards.extend(unseen[:k])
                v.stock_size -= k
            else:
                ev = v.history.add()
                if rng.random() < 0.5:
                    ev.turn.seat = rng.randrange(-1, 6)
                    ev.turn.move.card = rng.choice(cards)
        request = epb.GetHintRequest(view=v, budget=epb.Budget(iterations=50, time_ms=200), seed=i)
        for call in (api.engine.GetHint, lambda r: api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=r.view))):
            try:
                call(request, timeout=10) if call is api.engine.GetHint else call(request)
                codes["OK"] = codes.get("OK", 0) + 1
            except grpc.RpcError as e:
                codes[e.code().name] = codes.get(e.code().name, 0) + 1
    assert set(codes) <= {"OK", "INVALID_ARGUMENT"}, codes
    assert codes["INVALID_ARGUMENT"] > 300
    health = health_pb2_grpc.HealthStub(api.channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert api.engine.GetHint(epb.GetHintRequest(view=base, budget=epb.Budget(iterations=50))).hint.moves


def test_message_size_is_bounded(match):
    with running(max_message_bytes=32 * 1024) as s:
        api = stubs(s)
        msg = view_msg(match)
        for _ in range(2_000):
            msg.history.add().turn.move.text = "7D x " + " ".join(["AD"] * 5)
        code, _, _ = failure(api.rules.ListLegalMoves, rpb.ListLegalMovesRequest(view=msg))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(match))).moves


# --- deadlines, cancellation, limits ---

def test_deadline_answers_in_time_with_the_best_so_far(margin_api, match):
    """An answer at all is in time: the client ends a call at its deadline."""
    hint = margin_api.engine.GetHint(epb.GetHintRequest(view=view_msg(match),
                                                        budget=epb.Budget(time_ms=2_500, exhaust=True)),
                                     timeout=DEADLINE_MARGIN_S + 0.3).hint
    assert hint.cut_short and hint.moves and hint.stats.iterations > 0
    assert hint.stats.stopped_because == epb.STOP_REASON_DEADLINE


def test_deadline_bounds_an_iteration_budget_too(margin_api, match):
    hint = margin_api.engine.GetHint(epb.GetHintRequest(view=view_msg(match),
                                                        budget=epb.Budget(iterations=4_000_000, exhaust=True)),
                                     timeout=DEADLINE_MARGIN_S + 0.25).hint
    assert hint.cut_short and hint.stats.iterations < 4_000_000


def test_cancel_frees_the_core_within_50_ms(match):
    """Within 50 ms of CPU time after the cancel (cpu_seconds_until)."""
    with running(max_concurrent_searches=1) as s:
        api = stubs(s)
        request = epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(exhaust=True, time_ms=10_000))
        future = api.engine.GetHint.future(request)
        deadline = time.perf_counter() + 5
        while s.service.limits.slots.in_use == 0:
            assert time.perf_counter() < deadline
            time.sleep(0.002)
        code, _, _ = failure(api.engine.GetHint, request)       # the one search slot is taken
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        time.sleep(0.1)
        future.cancel()
        spent = cpu_seconds_until(lambda: not s.service.limits.slots.in_use)
        assert spent < 0.05, f"the search went on for {spent * 1000:.0f} ms of CPU after the cancel"
        assert api.engine.GetHint(epb.GetHintRequest(view=view_msg(match),
                                                     budget=epb.Budget(iterations=50))).hint.moves


def test_stream_cancel_stops_the_search(match):
    with running(max_concurrent_searches=1) as s:
        api = stubs(s)
        stream = api.engine.StreamHint(epb.StreamHintRequest(
            view=view_msg(match), budget=epb.Budget(exhaust=True, time_ms=10_000), interval_ms=20))
        first = next(stream)
        assert not first.final and s.service.limits.slots.in_use == 1
        stream.cancel()
        assert cpu_seconds_until(lambda: not s.service.limits.slots.in_use) < 0.05


def test_cheap_calls_go_on_while_searches_fill_the_cap(match):
    with running(max_concurrent_searches=1, slot_wait_ms=50) as s:
        api = stubs(s)
        future = api.engine.GetHint.future(epb.GetHintRequest(view=view_msg(match),
                                                              budget=epb.Budget(exhaust=True, time_ms=10_000)))
        while s.service.limits.slots.in_use == 0:
            time.sleep(0.002)
        assert api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(match))).moves
        assert api.engine.GetEngineInfo(epb.GetEngineInfoRequest()).version
        try:
            api.engine.ChooseMove(epb.ChooseMoveRequest(view=view_msg(match), strength=epb.STRENGTH_CASUAL))
            raise AssertionError("the call found a slot")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "retry" in e.details()
            # the retry delay is when the running search should end: within its 10 s
            assert 0.01 <= retry_delay(e) <= 10
        future.cancel()


def test_a_call_waits_a_short_while_for_a_search_slot(match):
    """Past the cap a call queues (first come, first served) for up to
    slot_wait_ms; with max_waiting_searches calls queued, the next is refused
    at once, with a RetryInfo."""
    with running(max_concurrent_searches=1, slot_wait_ms=10_000, max_waiting_searches=1) as s:
        api = stubs(s)
        request = epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(exhaust=True, time_ms=300))
        first = api.engine.GetHint.future(epb.GetHintRequest(view=view_msg(match),
                                                             budget=epb.Budget(exhaust=True, time_ms=10_000)))
        while s.service.limits.slots.in_use == 0:
            time.sleep(0.002)
        second = api.engine.GetHint.future(request)          # waits for the first to end
        while s.service.limits.slots.waiting == 0:
            time.sleep(0.002)
        started = time.perf_counter()
        try:
            api.engine.GetHint(request)                       # the queue is full
            raise AssertionError("the third call was served")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and retry_delay(e) is not None
        assert time.perf_counter() - started < 5              # refused at once, not after the 10 s wait
        first.cancel()                                        # the waiting call takes the slot
        assert second.result(timeout=30).hint.moves


def test_a_cancelled_call_stops_waiting_for_a_slot(match):
    with running(max_concurrent_searches=1, slot_wait_ms=10_000) as s:
        api = stubs(s)
        request = epb.GetHintRequest(view=view_msg(match), budget=epb.Budget(exhaust=True, time_ms=10_000))
        first = api.engine.GetHint.future(request)
        while s.service.limits.slots.in_use == 0:
            time.sleep(0.002)
        second = api.engine.GetHint.future(request)
        while s.service.limits.slots.waiting == 0:
            time.sleep(0.002)
        second.cancel()
        until(lambda: not s.service.limits.slots.waiting)     # out of the queue, not after the 10 s wait
        assert s.service.limits.slots.in_use == 1             # the first search goes on
        first.cancel()


# --- health, logs ---

def test_health_and_reflection_are_served(api):
    health = health_pb2_grpc.HealthStub(api.channel)
    for service in ("", "cirulla.v1.EngineService", "cirulla.v1.RulesService"):
        assert health.Check(health_pb2.HealthCheckRequest(service=service)).status == \
            health_pb2.HealthCheckResponse.SERVING
    assert failure(health.Check, health_pb2.HealthCheckRequest(service="nope"))[0] == grpc.StatusCode.NOT_FOUND


def test_one_log_line_per_call(api, match, caplog):
    caplog.set_level(logging.INFO, logger="cirulla.server")
    api.rules.ListLegalMoves(rpb.ListLegalMovesRequest(view=view_msg(match)))
    failure(api.rules.ListLegalMoves, rpb.ListLegalMovesRequest())
    lines = [r.getMessage() for r in caplog.records if r.name == "cirulla.server"]
    calls = [line for line in lines if line.startswith("/cirulla.v1.RulesService/ListLegalMoves")]
    assert len(calls) == 2
    assert calls[0].split()[1] == "OK" and calls[1].split()[1] == "INVALID_ARGUMENT"
    assert all(line.endswith(" ms") for line in calls)


# --- authentication ---

def test_bearer_token(match):
    with running(token="s3cret") as s:
        api = stubs(s)
        request = rpb.ListLegalMovesRequest(view=view_msg(match))
        for metadata in (None, [("authorization", "Bearer wrong")], [("authorization", "s3cret")]):
            assert failure(api.rules.ListLegalMoves, request, metadata=metadata)[0] == \
                grpc.StatusCode.UNAUTHENTICATED
        code, _, _ = failure(lambda r: list(api.engine.StreamHint(r)), epb.StreamHintRequest(view=view_msg(match)))
        assert code == grpc.StatusCode.UNAUTHENTICATED
        assert api.rules.ListLegalMoves(request, metadata=[("authorization", "Bearer s3cret")]).moves
        health = health_pb2_grpc.HealthStub(api.channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING       # probes need no secret


# --- TLS ---

def _certificates(tmp_path):
    """A CA, a server certificate for 127.0.0.1 and a client certificate, as PEM files."""
    try:
        return _certificates_cryptography(tmp_path)
    except ImportError:
        return _certificates_openssl(tmp_path)


def _certificates_cryptography(tmp_path):
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(cn):
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def issue(subject, key, issuer, issuer_key, *, ca=False, usage=None, san=None):
        b = (x509.CertificateBuilder().subject_name(name(subject)).issuer_name(name(issuer))
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if usage:
            b = b.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if san:
            b = b.add_extension(x509.SubjectAlternativeName(san), critical=False)
        return b.sign(issuer_key, hashes.SHA256())

    files = {}

    def write(stem, cert, key):
        files[stem] = tmp_path / f"{stem}.pem"
        files[stem].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        if key is not None:
            files[stem + "_key"] = tmp_path / f"{stem}.key"
            files[stem + "_key"].write_bytes(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    write("ca", issue("test CA", ca_key, "test CA", ca_key, ca=True), None)
    write("server", issue("localhost", server_key, "test CA", ca_key, usage=ExtendedKeyUsageOID.SERVER_AUTH,
                          san=[x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
          server_key)
    write("client", issue("client", client_key, "test CA", ca_key, usage=ExtendedKeyUsageOID.CLIENT_AUTH),
          client_key)
    return files


def _certificates_openssl(tmp_path):
    def run(*args):
        subprocess.run(["openssl", *args], cwd=tmp_path, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
        "-subj", "/CN=test CA", "-keyout", "ca.key", "-out", "ca.pem")
    (tmp_path / "server.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    (tmp_path / "client.ext").write_text("extendedKeyUsage=clientAuth\n")
    for who in ("server", "client"):
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={who}",
            "-keyout", f"{who}.key", "-out", f"{who}.csr")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "1", "-extfile", f"{who}.ext", "-out", f"{who}.pem")
    return {stem: tmp_path / f"{stem}.pem" for stem in ("ca", "server", "client")} | \
        {f"{stem}_key": tmp_path / f"{stem}.key" for stem in ("server", "client")}


def _info(api):
    return api.engine.GetEngineInfo(epb.GetEngineInfoRequest(), timeout=5)


def test_tls(tmp_path):
    f = _certificates(tmp_path)
    with running(tls_cert=str(f["server"]), tls_key=str(f["server_key"])) as s:
        assert _info(stubs(s, grpc.ssl_channel_credentials(f["ca"].read_bytes()))).version
        assert failure(_info, stubs(s))[0] == grpc.StatusCode.UNAVAILABLE              # plaintext refused


def test_mutual_tls(tmp_path):
    f = _certificates(tmp_path)
    with running(tls_cert=str(f["server"]), tls_key=str(f["server_key"]), tls_client_ca=str(f["ca"])) as s:
        anonymous = grpc.ssl_channel_credentials(f["ca"].read_bytes())
        assert failure(_info, stubs(s, anonymous))[0] == grpc.StatusCode.UNAVAILABLE
        known = grpc.ssl_channel_credentials(f["ca"].read_bytes(), f["client_key"].read_bytes(),
                                             f["client"].read_bytes())
        assert _info(stubs(s, known)).version


def test_unreadable_certificate_is_a_clear_error(tmp_path):
    from cirulla.server.app import build
    from cirulla.server.config import ServerConfig
    with pytest.raises(ValueError, match="cannot read the TLS key"):
        build(ServerConfig(listen="127.0.0.1:0", tls_cert=str(tmp_path / "c.pem"), tls_key=str(tmp_path / "k")))


# --- clients not written here, through reflection ---

def _tool(name):
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not on the PATH (pip install -e '.[test]' in an active venv)")
    return path


@pytest.mark.parametrize("reflection", ["grpc-v1", "grpc-v1alpha"])
def test_buf_curl_through_reflection(server, match, reflection):
    """Reflection is served in both versions; buf asks for the one it is told."""
    buf = _tool("buf")
    base = f"http://127.0.0.1:{server.port}"
    args = [buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect-protocol", reflection]
    done = subprocess.run([*args, "--list-methods", base], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "cirulla.v1.EngineService/GetHint" in done.stdout.split(), done.stderr
    assert "grpc.reflection.v1.ServerReflection/ServerReflectionInfo" in done.stdout.split()
    view = json_format.MessageToJson(view_msg(match))
    done = subprocess.run([*args, "--data", json.dumps({"view": json.loads(view)}),
                           f"{base}/cirulla.v1.RulesService/ListLegalMoves"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert [m["text"] for m in json.loads(done.stdout)["moves"]] == [str(x) for x in match.legal_moves]
    bad = json.loads(view)
    bad["hand"][0] = "ZZ"
    done = subprocess.run([*args, "--data", json.dumps({"view": bad}),
                           f"{base}/cirulla.v1.EngineService/GetHint"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "invalid_argument" in done.stderr and "view.hand[0]" in done.stderr


def test_grpcurl_through_reflection(server, match):
    grpcurl = _tool("grpcurl")
    target = f"127.0.0.1:{server.port}"
    request = {"view": json.loads(json_format.MessageToJson(view_msg(match))), "budget": {"timeMs": 50}}
    done = subprocess.run([grpcurl, "-plaintext", "-d", json.dumps(request), target,
                           "cirulla.v1.EngineService/GetHint"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    hint = json.loads(done.stdout)["hint"]
    assert sorted(m["move"]["text"] for m in hint["moves"]) == sorted(str(x) for x in match.legal_moves)
