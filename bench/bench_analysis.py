"""Benchmark of the analysis and the engine opponents. Prints
``name: value unit`` lines:

    analysis_51pt_match_s: ... s          a whole 51-point 2-player match, default budget, 2 jobs
    analysis_ms_per_decision: ... ms      the same, per decision (wall time)
    analysis_decisions: ... decisions     in that match (and its hands)
    play_latency_ms_<level>: ... ms       mean time of an engine move at each strength level
                                          (median, p95 and the moves measured in parentheses)
    split_mean_size_<part>: ... points    with --split N: the mean size (absolute value) of each
                                          part of the result (luck, hidden_luck, play, noise) over
                                          N seeded one-hand games, casual against greedy, analysed
                                          at --split-iterations (noise: what no event explains)

The match is self-play between the casual and intermediate levels from a
fixed seed, so every run analyses the same record. Engine moves are timed on
every position of a few seeded hands (one search thread), forced moves
included, as `cirulla play` would meet them.

Usage: python bench/bench_analysis.py [--seed 5] [--jobs 2] [--hands 3] [--levels all]
       python bench/bench_analysis.py --split 50 [--split-iterations 8000]   (the split only)
"""
from __future__ import annotations

import argparse
import statistics
import time

from cirulla.solver import Match, Rules
from cirulla.solver.analysis import DEFAULT_ITERATIONS, analyze_all, decision_count
from cirulla.solver.events import HandEnd
from cirulla.solver.players import LEVELS, make_player
from cirulla.solver.search import equity_table


def sample_match(seed: int) -> Match:
    players = [make_player("casual", seed=seed), make_player("intermediate", seed=seed + 1)]
    match = Match(Rules(), seed=seed, names=["casual", "intermediate"])
    while not match.is_over:
        match.play(players[match.to_move].choose(match))
    return match


def bench_analysis(seed: int, jobs: int) -> None:
    match = sample_match(seed)
    start = time.perf_counter()
    decisions, summary = analyze_all(match, jobs=jobs)
    elapsed = time.perf_counter() - start
    hands = sum(isinstance(e, HandEnd) for e in match.events)
    print(f"analysis_51pt_match_s: {elapsed:.1f} s ({len(decisions)} decisions, {hands} hands, "
          f"score {match.scores[0]}-{match.scores[1]}, jobs {jobs}, {DEFAULT_ITERATIONS} it/search)")
    print(f"analysis_ms_per_decision: {1000 * elapsed / decision_count(match):.1f} ms")
    print(f"analysis_decisions: {len(decisions)} decisions ({hands} hands)")


def bench_levels(levels, hands: int) -> None:
    rules = Rules(hands=1)
    for level in levels:
        times = []
        for seed in range(hands):
            match = Match(rules, seed=100 + seed)
            player = make_player(level.name, seed=seed)
            while not match.is_over:
                t = time.perf_counter()
                move = player.choose(match)
                times.append(1000 * (time.perf_counter() - t))
                match.play(move)
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        print(f"play_latency_ms_{level.name}: {statistics.mean(times):.2f} ms "
              f"(median {statistics.median(times):.2f} ms, p95 {p95:.1f} ms, {len(times)} moves)")


def bench_split(games: int, iterations: int, jobs: int) -> None:
    """The mean size of each part of the result over one-hand games."""
    parts = ("luck", "hidden_luck", "play", "noise")
    sizes: dict[str, list[float]] = {p: [] for p in parts}
    start = time.perf_counter()
    for seed in range(games):
        match = Match(Rules(hands=1), seed=1000 + seed, names=["casual", "greedy"])
        players = [make_player("casual", seed=seed), make_player("greedy", seed=seed)]
        while not match.is_over:
            match.play(players[match.to_move].choose(match))
        _, summary = analyze_all(match, iterations=iterations, seed=seed, jobs=jobs)
        for p in parts:
            sizes[p].append(abs(getattr(summary.sides[0], p)))
    for p in parts:
        print(f"split_mean_size_{p}: {statistics.mean(sizes[p]):.2f} points "
              f"(max {max(sizes[p]):.2f}, {games} games, {iterations} it/search)")
    print(f"split_seconds: {time.perf_counter() - start:.1f} s")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--hands", type=int, default=3, help="hands per level for the move latency")
    p.add_argument("--levels", default="all", help="comma-separated levels, or all")
    p.add_argument("--skip-analysis", action="store_true")
    p.add_argument("--split", type=int, default=0, metavar="N",
                   help="only the split of the result: mean size of its parts over N games")
    p.add_argument("--split-iterations", type=int, default=8000)
    args = p.parse_args()
    equity_table(Rules())                       # built once, outside the timings
    if args.split:
        bench_split(args.split, args.split_iterations, args.jobs)
        return
    levels = LEVELS if args.levels == "all" else [lv for lv in LEVELS if lv.name in args.levels.split(",")]
    if not args.skip_analysis:
        bench_analysis(args.seed, args.jobs)
    bench_levels(levels, args.hands)


if __name__ == "__main__":
    main()
