"""Benchmark of what a hint costs: CPU time per decision, by phase, and hints/s.

Plays seeded whole hands (classic rules, one hand a match; 2 and 4 players)
where every decision of every seat is a GetHint to the service (in this
process, cirulla.server.service.Service with the server's default settings)
without a budget, so at the default budget (search.DEFAULT_BUDGET: the
stopping rule, capped), one thread; the seat plays the hint's best move.
`--time-ms` and `--iterations` give the hints a budget instead (caps the
stopping rule still ends early; `--exhaust` spends them all, as the former
fixed defaults did: 1,000 ms for the service, 100,000 iterations for `full`).
Prints one ``name: value unit`` line per figure (NP: 2p_classic, 4p_classic):

    cost_ms_mean_NP: ... ms            a decision's CPU time on the thread that served it
    cost_ms_p95_NP: ... ms
    iterations_mean_NP: ... it         the work a decision did (the hint's stats.iterations)
    decisions_NP: ... decisions
    ..._NP_first_rounds                the same four for the decisions with a choice before the last two rounds
    ..._NP_last_two_rounds             with a choice in the last two rounds (2 players: the exact solver)
    ..._NP_forced                      with one legal move (in any round)
    hands_NP: ... hands
    cpu_over_wall_NP: ... ratio        the decisions' CPU time over their wall time: below 1, the
                                       machine gave the search less than a core
    machine_load: ...                  the load average before and after the decisions (as `cirulla arena`)
    saturation_hints_per_s_default: ... hints/s   GetHint alone (no budget) from 16 clients against
                                       `cirulla-server` with its default flags, tests/test_load.py's
                                       load as bench/bench_saturation.py runs it; OK hints a second.
                                       The views are the decisions above (both player counts): the
                                       hint mix whose cost the figures above give
    saturation_hints_per_s_default_first_round: ... hints/s   the same on the load test's views
                                       (the first moves of a hand, the costliest decisions)

(with a budget flag, ``saturation_hints_per_s_100ms`` or ``_10000it``). The
hands are those of match seeds ``--seed``, ``--seed + 1``, ...; the hints'
seeds follow from ``--seed`` too. An iteration budget gives the same hands,
moves and iterations on every run.

A time budget runs until the wall clock says stop, whatever the CPU got
done: its CPU cost is about the budget on a quiet machine and less on a busy
one (the thread gets only its share of a core until the deadline), so read
cost with cpu_over_wall and the load average, and compare builds by the
iterations a decision used as well. An iteration budget's cost does not
depend on the load (the CPU a decision takes grows a little on a busy
machine, from caches shared with other work).

Default: 8 hands of 2 players and 4 of 4 (about 450 decisions), which at
the default budget take about 10 s (at the former fixed 1,000 ms a hint,
about 4 minutes), then 30 s of saturation after a 5 s warm-up.

Usage: python bench/bench_cost.py [--hands N] [--players 2 4] [--seed 1]
           [--time-ms MS] [--iterations N] [--skip-saturation] [--saturation-seconds 30]
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cirulla.server import convert
from cirulla.server.config import ServerConfig
from cirulla.server.service import Service
from cirulla.solver import Match, Rules
from cirulla.solver.arena import machine_load
from cirulla.solver.moves import Move
from cirulla.solver.players import self_play
from cirulla.solver.search import DEFAULT_BUDGET, build_tables
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_load import CLIENTS, percentile, saturate  # noqa: E402  (the tests' load and helpers, from tests/)
from test_server_process import Process  # noqa: E402

from server_support import Call, view_msg  # noqa: E402

DEFAULT_HANDS = {2: 8, 4: 4}
PHASES = ("first_rounds", "last_two_rounds", "forced")
SATURATION_WARMUP_S = 5.0


@dataclass(frozen=True)
class Decision:
    phase: str
    cpu_ms: float
    wall_ms: float
    iterations: int
    view: pb.SeatView       # what was asked: the saturation replays it


def phase_of(match: Match) -> str:
    if len(match.legal_moves) == 1:
        return "forced"
    rules = match.rules
    # one deal left in the stock at most: this round or the next is the last
    last_two = match.stock_size <= rules.players * rules.round_cards(match.round + 1)
    return "last_two_rounds" if last_two else "first_rounds"


class HintPlayer:
    """Every seat: asks the service for a hint on its view and plays the best
    move, timing the call on this thread (one search thread runs on the
    caller's, so its CPU time is the search's and the service's own work)."""

    name = "hint"

    def __init__(self, service: Service, budget: epb.Budget | None, seed: int):
        self.service = service
        self.budget = budget
        self.rng = random.Random(seed)
        self.decisions: list[Decision] = []

    def choose(self, match: Match) -> Move:
        request = epb.GetHintRequest(view=view_msg(match), seed=self.rng.getrandbits(63), budget=self.budget)
        phase = phase_of(match)
        cpu, wall = time.thread_time(), time.perf_counter()
        hint = self.service.get_hint(request, Call()).hint
        cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
        assert hint.stats.threads == 1, "the CPU time of one thread is all of a one-thread search's"
        self.decisions.append(Decision(phase, 1000 * cpu, 1000 * wall, hint.stats.iterations, request.view))
        return convert.move_from_proto(hint.best, match.rules, "hint.best")


def play_hands(service: Service, budget: epb.Budget | None, players: int, hands: int, seed: int) -> list[Decision]:
    rules = Rules(players=players, hands=1)
    build_tables(rules)                       # as the server warms them before serving: not timed
    player = HintPlayer(service, budget, seed)
    warm = Match(rules, seed=seed)
    player.choose(warm)                       # the first search's one-time costs: not counted
    player.decisions.clear()
    for k in range(hands):
        self_play(rules, [player] * players, seed=seed + k)
    return player.decisions


def print_costs(label: str, decisions: list[Decision]) -> None:
    groups = [(label, decisions)] + [(f"{label}_{p}", [d for d in decisions if d.phase == p]) for p in PHASES]
    for name, group in groups:
        cost = [d.cpu_ms for d in group]
        nan = float("nan")
        print(f"cost_ms_mean_{name}: {statistics.fmean(cost) if cost else nan:.1f} ms")
        print(f"cost_ms_p95_{name}: {percentile(cost, 0.95):.1f} ms")
        print(f"iterations_mean_{name}: {statistics.fmean(d.iterations for d in group) if group else nan:.0f} it")
        print(f"decisions_{name}: {len(group)} decisions", flush=True)


def default_budget_words(config: ServerConfig) -> str:
    """What a hint without a budget spends: the default budget's stopping rule under its caps."""
    return f"stops once settled, at most {DEFAULT_BUDGET.iterations:,} iterations or {config.default_budget_ms} ms"


def budget_of(args: argparse.Namespace) -> tuple[epb.Budget | None, str]:
    """The hints' budget (None: none, the service's default) and its name."""
    if args.time_ms is None and args.iterations is None:
        return None, "default"
    budget = epb.Budget(time_ms=args.time_ms or 0, iterations=args.iterations or 0)
    parts = ([f"{args.time_ms}ms"] if args.time_ms else []) + ([f"{args.iterations}it"] if args.iterations else [])
    return budget, "_".join(parts)


def saturation(budget: epb.Budget | None, name: str, seconds: float, views: list[pb.SeatView] | None) -> None:
    """Hints/s of a server saturated with GetHint on `views` (None: the load test's)."""
    load_before, start = os.getloadavg()[0], time.monotonic()
    server = Process()
    try:
        report = saturate(server.port, server.proc.pid, seconds=seconds, warmup=SATURATION_WARMUP_S,
                          clients=CLIENTS, views=views, hint_share=1.0, hint_budgets=[budget])
    finally:
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(30)
        server.stop()
    calls = report.measured()
    ok = [c.ms for c in calls if c.code == "OK"]
    name += "_first_round" if views is None else ""
    which = "the load test's views" if views is None else f"{len(views)} decisions' views"
    print(f"# saturation ({which}): {CLIENTS} clients, {len(calls)} GetHint calls in {seconds:g} s after a "
          f"{SATURATION_WARMUP_S:g} s warm-up, {dict(report.codes(calls))}, OK latency p50 "
          f"{statistics.median(ok) if ok else float('nan'):.0f} ms")
    print(f"saturation_machine_load: {machine_load(load_before, time.monotonic() - start, 'the server')}")
    print(f"saturation_hints_per_s_{name}: {len(ok) / seconds:.1f} hints/s", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hands", type=int, default=None,
                   help="hands per number of players (default: 8 with 2 players, 4 with 4)")
    p.add_argument("--players", type=int, nargs="+", choices=(2, 4), default=[2, 4])
    p.add_argument("--seed", type=int, default=1, help="the first hand's match seed (default 1)")
    p.add_argument("--time-ms", type=int, default=None, help="the hints' time budget (default: none, the "
                   f"default budget: {default_budget_words(ServerConfig())})")
    p.add_argument("--iterations", type=int, default=None, help="the hints' iteration budget (default: none)")
    p.add_argument("--skip-saturation", action="store_true")
    p.add_argument("--saturation-seconds", type=float, default=30.0, help="measured load (default 30)")
    args = p.parse_args()
    budget, name = budget_of(args)
    config = ServerConfig()
    service = Service(config)
    print(f"# budget: {name}" + (f" (GetHint without one: {default_budget_words(config)})" if budget is None
                                 else f" ({budget.time_ms or 'no'} ms, {budget.iterations or 'no'} iterations)"))
    print(f"seed: {args.seed}", flush=True)
    load_before, start = os.getloadavg()[0], time.monotonic()
    views = []
    for players in args.players:
        hands = args.hands if args.hands is not None else DEFAULT_HANDS[players]
        decisions = play_hands(service, budget, players, hands, args.seed)
        views += [d.view for d in decisions]
        label = f"{players}p_classic"
        print_costs(label, decisions)
        print(f"hands_{label}: {hands} hands")
        print(f"cpu_over_wall_{label}: {sum(d.cpu_ms for d in decisions) / sum(d.wall_ms for d in decisions):.2f} "
              f"ratio", flush=True)
    print(f"machine_load: {machine_load(load_before, time.monotonic() - start, '1 search thread')}", flush=True)
    if not args.skip_saturation:
        saturation(budget, name, args.saturation_seconds, views)
        saturation(budget, name, args.saturation_seconds, None)


if __name__ == "__main__":
    main()
