"""One search budget (search.SearchBudget), made and checked once on the path
of a hint, and the stopping rule that ends a search once its answer is
settled; every answer says why its search stopped."""
from __future__ import annotations

import inspect
import json
import math
from collections import Counter

import pytest
from google.protobuf import json_format

from cirulla.cli.main import main
from cirulla.server import convert
from cirulla.server.config import ServerConfig
from cirulla.server.limits import Limits
from cirulla.server.service import Service
from cirulla.solver import Match, Rules, StateError
from cirulla.solver.events import CATEGORIES
from cirulla.solver.moves import Move
from cirulla.solver.players import choose_move, level
from cirulla.solver.search import (
    DEFAULT_BUDGET,
    DEFAULT_STOPPING,
    MoveStats,
    SearchBudget,
    SearchMethod,
    SearchResult,
    StoppingRule,
    StopReason,
    run_search,
    search,
)
from cirulla.v1 import engine_service_pb2 as epb
from server_support import Call, choice_position, view_msg


def played_to(found) -> Match:
    """The first position of greedy self-play (2 players, classic) where
    `found(match)` holds."""
    for seed in range(200):
        match = Match(Rules(), seed=seed)
        while not match.is_over:
            if found(match):
                return match
            match.play(match.greedy_move())
    raise AssertionError("no such position")


def sweep() -> Match:
    """A choice whose best move is plain, before the last two rounds: a scopa
    (not an ace's sweep) worth 1.5 points more than any other move to the
    greedy heuristic (a scopa alone is not always best: taking a diamond
    and leaving a card the opponent cannot sweep can be worth more)."""
    def plain(m: Match) -> bool:
        if not (m.stock_size > 6 and len(m.legal_moves) >= 3 and len(m.table) >= 2):
            return False
        worths = m.core.greedy_worths(m.core.legal_moves())
        scopa = [len(mv.captured) == len(m.table) and mv.card is not None and str(mv.card)[0] != "A"
                 for mv in m.legal_moves]
        best = max((w for w, s in zip(worths, scopa, strict=True) if s), default=None)
        return best is not None and all(best >= w + 150 for w, s in zip(worths, scopa, strict=True) if not s)

    return played_to(plain)


# --- one budget type, checked once --------------------------------------------------

def test_run_search_takes_the_knowledge_the_budget_and_the_tuning():
    assert list(inspect.signature(run_search).parameters) == ["know", "budget", "tuning"]


@pytest.mark.parametrize("fields, named", [
    ({"iterations": 0}, "iterations"), ({"iterations": 2.5}, "iterations"), ({"time_ms": -1.0}, "time_ms"),
    ({"threads": 0}, "threads"), ({"seed": "1"}, "seed"), ({"progress_interval_ms": 0}, "progress_interval_ms")])
def test_a_budget_is_checked_when_it_is_made(fields, named):
    with pytest.raises(StateError, match=named):
        SearchBudget(**fields)


@pytest.mark.parametrize("fields, named", [({"min_gain": math.nan}, "min_gain"), ({"min_gain": -1.0}, "min_gain"),
                                           ({"target_stderr": math.inf}, "target_stderr"),
                                           ({"first_look": 0}, "first_look")])
def test_a_stopping_rule_is_checked_when_it_is_made(fields, named):
    with pytest.raises(StateError, match=named):
        StoppingRule(**fields)


@pytest.fixture
def counted(monkeypatch) -> Counter[str]:
    """How many budgets are made (each checked as it is made) and how many
    requests' budgets are checked against the server's caps."""
    counts: Counter[str] = Counter()
    made, capped = SearchBudget.__post_init__, Limits.check_budget

    def making(self):
        counts["made"] += 1
        made(self)

    def capping(self, *args, **kwargs):
        counts["capped"] += 1
        return capped(self, *args, **kwargs)
    monkeypatch.setattr(SearchBudget, "__post_init__", making)
    monkeypatch.setattr(Limits, "check_budget", capping)
    return counts


@pytest.mark.parametrize("rpc", ["get_hint", "stream_hint", "choose_move"])
@pytest.mark.parametrize("budget", [None, epb.Budget(iterations=600)])
def test_a_hint_checks_its_budget_once(counted, rpc, budget):
    service, view = Service(ServerConfig()), view_msg(choice_position())
    if rpc == "choose_move":
        assert service.choose_move(epb.ChooseMoveRequest(view=view, budget=budget, strength=epb.STRENGTH_FULL),
                                   Call()).move.text
    elif rpc == "stream_hint":
        assert list(service.stream_hint(epb.StreamHintRequest(view=view, budget=budget), Call()))[-1].final
    else:
        assert service.get_hint(epb.GetHintRequest(view=view, budget=budget), Call()).hint.moves
    assert counted == {"made": 1, "capped": 1}


def test_a_budget_past_the_caps_is_refused_naming_each_field():
    service = Service(ServerConfig(max_budget_ms=1000))
    bad = epb.Budget(time_ms=5000, target_stderr=math.nan)
    with pytest.raises(Exception) as e:
        service.get_hint(epb.GetHintRequest(view=view_msg(choice_position()), budget=bad), Call())
    fields = [field for field, _ in e.value.violations]
    assert fields == ["budget.time_ms", "budget.target_stderr"]


def test_the_defaults_are_one():
    """The service's budget of a request naming none, ChooseMove's at full
    strength, `cirulla hint`'s and the levels' full: DEFAULT_BUDGET."""
    limits = Limits(ServerConfig())
    served = limits.budget(epb.Budget(), Call(), seed=4)
    assert (served.iterations, served.time_ms, served.stopping) == \
        (DEFAULT_BUDGET.iterations, DEFAULT_BUDGET.time_ms, DEFAULT_BUDGET.stopping)
    assert level("full").budget(4) == DEFAULT_BUDGET.replace(seed=4)
    assert SearchBudget.of(seed=4) == DEFAULT_BUDGET.replace(seed=4)
    assert ServerConfig().default_budget_ms == DEFAULT_BUDGET.time_ms
    info = Service(ServerConfig()).get_engine_info(epb.GetEngineInfoRequest(), Call())
    assert info.default_budget.iterations == DEFAULT_BUDGET.iterations
    assert info.default_budget.time_ms == info.default_time_ms == DEFAULT_BUDGET.time_ms
    assert info.stopping_rule == convert.to_message(DEFAULT_STOPPING, epb.StoppingRule)
    assert info.stopping_rule.min_gain > 0 and info.stopping_rule.first_look > 0


# --- the stopping rule ---------------------------------------------------------------

def result_of(leads: list[tuple[float, float]]) -> SearchResult:
    """A ranking whose moves trail the best by these (lead, its standard error)."""
    moves = tuple(MoveStats(move=Move.parse("A234567JQK"[k] + "C"), expected_points=-lead, expected_points_stderr=se,
                            diff_to_best=-lead, diff_to_best_stderr=se, categories=dict.fromkeys(CATEGORIES, 0.0),
                            scopa_risk=0.0, win_chance=None, samples=100)
                  for k, (lead, se) in enumerate([(0.0, 0.0), *leads]))
    return SearchResult(moves=moves, best=moves[0].move, iterations=1000, elapsed_ms=1.0, stopped_because=None,
                        cpu_ms=1.0, method=SearchMethod.ISMCTS, threads=1, info={"worlds": 100})


def test_a_lead_of_many_standard_errors_settles():
    rule = StoppingRule()
    assert rule.settled(result_of([(1.5, 0.2), (3.0, 0.3)]), done=2000, left=48_000)


def test_a_close_runner_up_is_searched_on():
    rule = StoppingRule()
    assert not rule.settled(result_of([(0.05, 0.2), (3.0, 0.3)]), done=2000, left=48_000)


def test_a_close_runner_up_with_little_left_cannot_catch_up():
    rule = StoppingRule()
    close = result_of([(0.05, 0.2)])
    assert not rule.settled(close, done=2000, left=2000)
    assert rule.settled(close, done=48_000, left=0)       # the cap: nothing more to learn


def test_figures_less_precise_than_asked_are_searched_on():
    clear = result_of([(5.0, 0.8)])
    assert StoppingRule(target_stderr=1.0).settled(clear, done=2000, left=48_000)
    assert not StoppingRule(target_stderr=0.5).settled(clear, done=2000, left=48_000)


def test_a_plain_choice_stops_early_with_the_move_the_whole_budget_finds():
    match = sweep()
    view = match.view(match.to_move)
    res = search(view, DEFAULT_BUDGET.replace(seed=1))
    assert res.stopped_because is StopReason.SETTLED and not res.cut_short
    assert res.iterations < DEFAULT_BUDGET.iterations and res.cpu_ms > 0
    exhausted = search(view, SearchBudget(iterations=DEFAULT_BUDGET.iterations, seed=2))
    assert exhausted.stopped_because is StopReason.BUDGET and exhausted.iterations > res.iterations
    assert exhausted.best == res.best


def test_the_stopping_rule_is_reproducible_by_seed():
    match = choice_position(min_moves=4)
    v = match.view(match.to_move)
    a, b = (search(v, SearchBudget(iterations=20_000, seed=3, stopping=StoppingRule())) for _ in range(2))
    assert (a.iterations, a.best, a.stopped_because) == (b.iterations, b.best, b.stopped_because)
    assert [m.expected_points for m in a.moves] == [m.expected_points for m in b.moves]


@pytest.mark.usefixtures("exact_against_any_opponent")
def test_every_method_says_why_it_stopped():
    forced = played_to(lambda m: m.stock_size > 6 and len(m.legal_moves) == 1)
    assert search(forced.view(forced.to_move)).stopped_because is StopReason.FORCED
    last = played_to(lambda m: m.stock_size == 0 and len(m.legal_moves) >= 2)
    assert search(last.view(last.to_move)).stopped_because is StopReason.EXACT


# --- the answers -----------------------------------------------------------------------

def test_the_hint_proto_carries_why_it_stopped_and_its_cpu():
    service = Service(ServerConfig())
    hint = service.get_hint(epb.GetHintRequest(view=view_msg(sweep()), seed=1), Call()).hint
    assert hint.stats.stopped_because == epb.STOP_REASON_SETTLED and hint.stats.cpu_ms > 0
    exhausted = service.get_hint(epb.GetHintRequest(view=view_msg(sweep()), seed=1,
                                                    budget=epb.Budget(iterations=3000, exhaust=True)), Call()).hint
    assert exhausted.stats.stopped_because == epb.STOP_REASON_BUDGET and exhausted.stats.iterations >= 2900


def test_choose_move_at_full_strength_plays_the_default_budget():
    match = choice_position(min_moves=4)
    view = match.view(match.to_move)
    served = Service(ServerConfig()).choose_move(epb.ChooseMoveRequest(view=view_msg(match), seed=7,
                                                                       strength=epb.STRENGTH_FULL), Call())
    assert served.stats.stopped_because in (epb.STOP_REASON_SETTLED, epb.STOP_REASON_BUDGET)
    assert served.move.text == str(choose_move(view, "full", 7))


def test_the_cli_json_says_why_it_stopped(tmp_path, capsys):
    path = tmp_path / "view.json"
    path.write_text(json_format.MessageToJson(view_msg(sweep())))
    assert main(["hint", "--view", str(path), "--seed", "1", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["hint"]["stats"]
    assert stats["stoppedBecause"] == "STOP_REASON_SETTLED" and stats["cpuMs"] > 0
    assert main(["hint", "--view", str(path), "--iterations", "2000", "--exhaust", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)["hint"]["stats"]
    assert stats["stoppedBecause"] == "STOP_REASON_BUDGET" and int(stats["iterations"]) >= 1900


def test_a_time_cap_alone_stops_once_settled_too():
    """The stages count iterations whatever the caps: a budget of time alone
    with the rule stops when settled (it once ran the whole time in one stage)."""
    match = sweep()
    res = search(match.view(match.to_move), SearchBudget(time_ms=5_000, seed=1, stopping=StoppingRule()))
    assert res.stopped_because is StopReason.SETTLED and res.elapsed_ms < 5_000
