"""Deadlines kept everywhere, against a real `cirulla-server` process.

A call whose deadline leaves the search 50, 100 or 250 ms answers OK (the
client ends a call at its deadline: a late answer is DEADLINE_EXCEEDED), with
a time budget larger than that or no budget at all (the server's default,
1000 ms), in every phase of the search: ISMCTS for 2, 3 and 4 players, the
exact endgames (2 players, a stock of 6 and of 0), a forced move, an option
set the server has not seen (its tables are built in the background while
the call answers without them), and a cold server (the first call after the
start, with `--warm-presets ""` and with the default). An ISMCTS search is
cut short: the deadline, not the budget, ended it.

How the server keeps them: every search is bounded by the call's time
remaining less `deadline_margin_ms` (to encode and send the answer), a call
waits for a search slot no longer than its deadline allows
(server/limits.py), and an unseen option set's tables are built in the
background (solver/search.py, tables_ready): an answer has no chance of
winning while they are missing, so one that waited for them shows it.

The servers here keep MARGIN_MS back (the default is 25 ms), so that a
machine however busy does not make an answer late: these tests hold what
ends each search, not how close to its deadline the answer comes.
`bench/bench_deadlines.py` measures that, with the default margin. The file
takes ~20 s.
"""
from __future__ import annotations

import itertools
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
import pytest
from test_server_process import Process

from cirulla.solver import Match, Rules
from cirulla.solver.errors import RulesError
from cirulla.solver.players import GreedyPlayer, RandomPlayer
from cirulla.v1 import engine_service_pb2 as epb
from server_support import choice_position, view_msg

DEADLINES_MS = (50, 100, 250)   # the search's time left by a call's deadline, less the server's margin
MARGIN_MS = 1_000               # --deadline-margin-ms of the tests' servers (see the module docstring)
MARGIN = ("--deadline-margin-ms", str(MARGIN_MS))
# a time budget larger than every deadline, searched to its end, which the deadline must cut short; and
# none (the server's default budget, capped at 1000 ms), which the deadline or the stopping rule ends
BUDGETS: tuple[tuple[str, epb.Budget | None], ...] = (("time_ms=1000", epb.Budget(time_ms=1_000, exhaust=True)),
                                                       ("no budget", None))
REPS = 2                    # calls per phase, deadline and budget (seeds 0, 1): ~6 s for the six search phases
WARM_PRESETS = {"": ("--warm-presets", ""), "classic": ()}      # the cold servers: none warmed, the default
# boolean options no preset sets: each combination is an option set with its own self-play tables
UNSEEN_OPTIONS = ("re_bello", "capotun", "grande_long", "piccola_to_seven", "buona_stack", "single_match_first",
                  "grande_in_hand")


# --- the positions ------------------------------------------------------------------------

def endgame(stock: int) -> Match:
    """A 2-player match played until `stock` cards are left to deal and the seat
    to move, holding 3 or more cards, has a choice (the largest exact solve of
    those rounds): the dealer plays at random, so that the seat to move does not
    read it as the greedy program (whose last rounds the default plays out
    rather than solving them), the other seat plays GreedyPlayer."""
    greedy = GreedyPlayer()
    for seed in range(50):
        match = Match(Rules(), seed=seed)
        chance = RandomPlayer(seed)
        while not match.is_over and (match.stock_size != stock or len(match.legal_moves) < 2
                                     or len(match.hand(match.to_move)) < 3):
            match.play((chance if match.to_move == match.dealer else greedy).choose(match))
        if not match.is_over and match.hand_number == 0:
            return match
    raise AssertionError(f"no position with a stock of {stock}")


def forced_position() -> Match:
    """A 2-player match played by GreedyPlayer until the seat to move has one legal move."""
    greedy = GreedyPlayer()
    for seed in range(50):
        match = Match(Rules(), seed=seed)
        while not match.is_over and len(match.legal_moves) != 1:
            match.play(greedy.choose(match))
        if not match.is_over:
            return match
    raise AssertionError("no forced move")


# phase -> (the position, the method the server must report for it)
PHASES: dict[str, tuple[Callable[[], Match], int]] = {
    "ismcts-2p": (lambda: choice_position(3), epb.SEARCH_METHOD_ISMCTS),
    "ismcts-3p": (lambda: choice_position(3, Rules(players=3)), epb.SEARCH_METHOD_ISMCTS),
    "ismcts-4p": (lambda: choice_position(3, Rules(players=4)), epb.SEARCH_METHOD_ISMCTS),
    "exact-stock6": (lambda: endgame(6), epb.SEARCH_METHOD_EXACT),
    "exact-stock0": (lambda: endgame(0), epb.SEARCH_METHOD_EXACT),
    "forced": (forced_position, epb.SEARCH_METHOD_FORCED),
}


def unseen_rules() -> Iterator[Rules]:
    """2-player option sets that no preset is (127 of them), each with tables of its own."""
    for k in range(1, len(UNSEEN_OPTIONS) + 1):
        for combo in itertools.combinations(UNSEEN_OPTIONS, k):
            try:
                yield Rules(**dict.fromkeys(combo, True))
            except RulesError:          # options that do not go together
                continue


# --- the measurements ------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    code: str
    elapsed_ms: float               # client wall time, from just before the call to its answer
    deadline_ms: float
    hint: epb.Hint | None = None

    @property
    def late_ms(self) -> float:
        return self.elapsed_ms - self.deadline_ms

    def __str__(self) -> str:
        return f"{self.code} {self.late_ms:+.1f} ms"


def timed(call: Callable[[], object]) -> tuple[str, float, object]:
    """(status, ms, answer) of one call."""
    start = time.perf_counter()
    try:
        answer: object = call()
        code = "OK"
    except grpc.RpcError as e:
        answer, code = None, e.code().name
    return code, (time.perf_counter() - start) * 1000, answer


def hint_call(process: Process, view, deadline_ms: float, budget: epb.Budget | None, seed: int = 0) -> Answer:
    request = epb.GetHintRequest(view=view, budget=budget, seed=seed)
    code, ms, answer = timed(lambda: process.engine.GetHint(request, timeout=deadline_ms / 1000))
    return Answer(code, ms, deadline_ms, answer.hint if isinstance(answer, epb.GetHintResponse) else None)


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return "load average " + " ".join(f.read().split()[:3])
    except OSError:
        return "load average unknown"


def check(results: list[tuple[str, Answer]]) -> None:
    """Every call answered: by its deadline, since the client ends a call there."""
    missed = [f"{label}: {answer}" for label, answer in results if answer.code != "OK"]
    assert not missed, (f"{len(missed)} of {len(results)} calls got no answer by the deadline ({loadavg()}):\n"
                        + "\n".join(missed))


def wait_for_tables(process: Process, view, seconds: float = 60.0) -> bool:
    """Whether the tables of the view's option set came within `seconds`
    (a hint then has a chance of winning): the background build's end (at a
    low priority: 0.2-0.4 s on a quiet machine, several on a busy one)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hint = process.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(iterations=50)),
                                      timeout=5).hint
        if all(m.HasField("win_chance") for m in hint.moves):
            return True
        time.sleep(0.02)
    return False


def start_servers(flags: list[tuple[str, ...]]) -> list[Process]:
    """Servers started at once (a cold start each), in the order of `flags`."""
    with ThreadPoolExecutor(max_workers=len(flags)) as pool:
        return list(pool.map(lambda args: Process(*args), flags))


def stop_all(processes: list[Process]) -> None:
    """SIGTERM to every server, then each one's exit (a stuck one is killed)."""
    for process in processes:
        if process.proc.poll() is None:
            process.proc.send_signal(signal.SIGTERM)
    for process in processes:
        try:
            process.proc.wait(10)
        except subprocess.TimeoutExpired:
            pass
        process.stop()


# --- the tests --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def server():
    """A server with the default flags but the margin (the classic tables warmed, a default budget of 1000 ms)."""
    process = Process(*MARGIN)
    try:
        yield process
    finally:
        stop_all([process])


@pytest.mark.parametrize("phase", list(PHASES))
def test_every_search_phase_answers_by_the_deadline(server, phase):
    build, method = PHASES[phase]
    view = view_msg(build())
    results = []
    for deadline, (name, budget), seed in itertools.product(DEADLINES_MS, BUDGETS, range(REPS)):
        label = f"{phase} {deadline} ms {name} seed {seed}"
        answer = hint_call(server, view, MARGIN_MS + deadline, budget, seed)
        results.append((label, answer))
        if answer.hint is not None:
            assert answer.hint.stats.method == method, label
            assert answer.hint.moves, label
            if method == epb.SEARCH_METHOD_ISMCTS and budget is not None:
                assert answer.hint.cut_short, f"{label}: not cut short, so not ended by the deadline"
    check(results)


def test_an_unseen_option_set_answers_by_the_deadline():
    """Each call with an option set the server has not seen: it answers without
    the set's tables (ranked by points, no chance of winning), and they are
    built in the background meanwhile (waited for before the next call, so that
    each call meets one build, as a client would)."""
    process = Process(*MARGIN)
    fresh = unseen_rules()
    results = []
    try:
        for deadline, (name, budget) in itertools.product(DEADLINES_MS, BUDGETS):
            view = view_msg(choice_position(3, next(fresh)))
            answer = hint_call(process, view, MARGIN_MS + deadline, budget)
            results.append((f"unseen {deadline} ms {name}", answer))
            if answer.hint is not None:
                assert answer.hint.ranked_by == epb.RANKED_BY_EXPECTED_POINTS
                assert not any(m.HasField("win_chance") for m in answer.hint.moves), "the option set was not new"
            assert wait_for_tables(process, view), "the option set's tables were never built"
    finally:
        stop_all([process])
    check(results)


def test_a_cold_server_answers_by_the_deadline():
    """The first call to a server just started, with no preset warmed (its
    first hint starts the classic tables' build) and with the default (the
    classic tables built before it listens). Each deadline with each, the
    budgets taken in turn: six servers, started at once."""
    cases = [(warm, deadline, BUDGETS[i % len(BUDGETS)])
             for i, (warm, deadline) in enumerate(itertools.product(WARM_PRESETS, DEADLINES_MS))]
    view = view_msg(choice_position(3))
    processes = start_servers([(*WARM_PRESETS[warm], *MARGIN) for warm, _, _ in cases])
    results = []
    try:
        for process, (warm, deadline, (name, budget)) in zip(processes, cases, strict=True):
            answer = hint_call(process, view, MARGIN_MS + deadline, budget)     # the channel connects in the call too
            results.append((f"cold, warm presets {warm!r}, {deadline} ms {name}", answer))
            if answer.hint is not None:
                assert answer.hint.stats.method == epb.SEARCH_METHOD_ISMCTS
                # the tables: not built yet without a warmed preset, built before listening with the default
                assert all(m.HasField("win_chance") == bool(warm) for m in answer.hint.moves), warm
    finally:
        stop_all(processes)
    check(results)


def test_choose_move_and_stream_hint_answer_by_the_deadline(server):
    """The other searching calls: ChooseMove at full strength with a time budget
    larger than the deadline, at an advanced level (its own iteration budget),
    and StreamHint's final answer (interim ones every 20 ms before it)."""
    view = view_msg(PHASES["ismcts-4p"][0]())
    calls: dict[str, Callable[[float], object]] = {
        "ChooseMove full time_ms=1000": lambda timeout: server.engine.ChooseMove(epb.ChooseMoveRequest(
            view=view, strength=epb.STRENGTH_FULL, budget=epb.Budget(exhaust=True, time_ms=1_000)), timeout=timeout),
        "ChooseMove advanced": lambda timeout: server.engine.ChooseMove(epb.ChooseMoveRequest(
            view=view, strength=epb.STRENGTH_ADVANCED), timeout=timeout),
        "StreamHint no budget": lambda timeout: list(server.engine.StreamHint(epb.StreamHintRequest(
            view=view, interval_ms=20), timeout=timeout)),
    }
    results = []
    for (name, call), deadline in itertools.product(calls.items(), DEADLINES_MS):
        code, ms, answer = timed(lambda call=call, deadline=deadline: call((MARGIN_MS + deadline) / 1000))
        if isinstance(answer, list):          # a stream: it must end with its final answer
            assert answer and answer[-1].final
        results.append((f"{name} {deadline} ms", Answer(code, ms, MARGIN_MS + deadline)))
    check(results)


def test_the_phases_are_what_they_say():
    """The positions behind the phases (so that a phase measures what it names)."""
    assert len(PHASES["ismcts-3p"][0]().legal_moves) >= 3
    six, zero = endgame(6), endgame(0)
    assert (six.stock_size, zero.stock_size, six.rules.players) == (6, 0, 2)
    assert len(forced_position().legal_moves) == 1
    sets = list(itertools.islice(unseen_rules(), 40))
    assert len(set(sets)) == 40 and Rules() not in sets
