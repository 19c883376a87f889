"""Benchmark of the search engine. Prints ``name: value unit`` lines:

    ismcts_iterations_per_s_2p_classic: ... it/s    SO-ISMCTS from the first move of a hand, one thread
    paired_playouts_per_s_2p_classic: ... playouts/s  the paired phase after it
    exact_last_two_rounds_ms_2p_classic: ... ms     every world of the last two rounds, one thread
    exact_last_two_rounds_2threads_ms_2p_classic: ... ms
    exact_last_two_rounds_worlds_2p_classic: ... worlds
    exact_last_two_rounds_positions_2p_classic: ... positions   alpha-beta positions per endgame
    exact_last_two_rounds_figures_2p_classic: ... digest   of every figure the solves give, one thread
    exact_ns_per_position_2p_classic: ... ns
    ismcts_2_over_1_threads_2p_classic: ... ratio   iterations in the same wall time
    arena_<a>_vs_<b>_margin: ... points/hand (95% CI lo .. hi)   with --arena N

Iterations per second are per core: one thread, searching the first
decision of freshly dealt hands (the biggest trees) for --seconds each. The
machine is shared, so every figure is measured --repeat times and the median
printed (-v prints every run).

Usage: python bench/bench_search.py [--seconds 1] [--repeat 3] [-v]
                                    [--arena PAIRS] [--arena-engines ismcts:100ms,greedy]
       python bench/bench_search.py --exact-only

--exact-only solves the endgames once, one thread, and prints their figures
alone: the machine's noise left out, count the solver's instructions with

    valgrind --tool=callgrind --toggle-collect='*exact_worlds' python bench/bench_search.py --exact-only

(the total it prints over 8 is per endgame; compare builds side by side).
A faster solver must print the same figures' digest (the worlds' sums, their
categories and chances of winning, as `Searcher.stats()` gives them, the
positions visited apart) and the same positions or fewer.
"""
from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import threading
import time
from pathlib import Path

from cirulla.solver import Match, Rules
from cirulla.solver.arena import arena
from cirulla.solver.search import INFER_T, Knowledge, SearchBudget, _search, search

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from test_exact_golden import figures  # noqa: E402  (the golden solves' digest of a solve's figures)


def first_decisions(n: int, rules: Rules) -> list[Knowledge]:
    out = []
    for seed in range(n):
        m = Match(rules, seed=seed)
        out.append(Knowledge.of(m.view(m.to_move)))
    return out


def last_two_rounds(n: int, rules: Rules) -> list[Knowledge]:
    """The first decision of the second-to-last round (stock 6, 3 cards each), greedy play before."""
    out = []
    seed = 0
    while len(out) < n:
        m = Match(rules, seed=seed)
        seed += 1
        while not m.is_over and not (m.stock_size == 6 and all(len(m.hand(s)) == 3 for s in range(2))):
            m.play(m.greedy_move())
        if not m.is_over and len(m.legal_moves) > 1:
            out.append(Knowledge.of(m.view(m.to_move)))
    return out


def ismcts_rate(knows: list[Knowledge], seconds: float) -> tuple[float, float]:
    """(tree iterations/s, paired playouts/s), one thread, `seconds` per deal."""
    iters = playouts = 0
    t_tree = t_paired = 0.0
    for k in knows:
        s = k.searcher(1, _search.StopFlag(), infer_t=INFER_T)
        t = time.perf_counter()
        iters += s.ismcts(2**62, time.monotonic() + seconds)
        t_tree += time.perf_counter() - t
        t = time.perf_counter()
        worlds = s.paired(2**62, time.monotonic() + seconds / 4)
        t_paired += time.perf_counter() - t
        playouts += worlds * len(s.root_moves)
    return iters / t_tree, playouts / t_paired


def exact_ms(knows: list[Knowledge], threads: int) -> tuple[float, int, int, str]:
    """Mean wall time of solving every world, the worlds and the positions the
    alpha-beta search visits, per endgame, and with one thread a digest of
    the figures (every count of stats() but the positions; sums to 1e-6)."""
    total, worlds, positions = 0.0, 0, 0
    digest = hashlib.sha256()
    for k in knows:
        flag = _search.StopFlag()
        searchers = [k.searcher(1, flag, infer_t=INFER_T) for _ in range(threads)]
        t = time.perf_counter()
        if threads == 1:
            worlds += searchers[0].exact(0, 1)
        else:
            out = [0] * threads
            def solve(i: int, out: list[int] = out, searchers: list = searchers) -> None:
                out[i] = searchers[i].exact(i, threads)
            pool = [threading.Thread(target=solve, args=(i,)) for i in range(threads)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
            worlds += sum(out)
        total += time.perf_counter() - t
        positions += sum(s.stats()["solved"] for s in searchers)
        if threads == 1:
            digest.update(figures(searchers[0].stats()))
    return (1000 * total / len(knows), worlds // len(knows), positions // len(knows),
            digest.hexdigest()[:16] if threads == 1 else "")


def thread_ratio(rules: Rules, seconds: float) -> float:
    """Tree iterations of search() with 2 threads over 1, same wall time."""
    views = []
    for seed in range(4):
        m = Match(rules, seed=100 + seed)
        views.append(m.view(m.to_move))
    counts = {}
    for threads in (1, 2):
        counts[threads] = sum(search(v, SearchBudget(time_ms=1000 * seconds, threads=threads,
                                                  seed=1)).info["tree_iterations"]
                              for v in views)
    return counts[2] / counts[1]


def median_of(repeat: int, verbose: bool, name: str, fn):
    runs = [fn() for _ in range(repeat)]
    if verbose:
        print(f"# {name}: {runs}")
    return statistics.median(runs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("-v", action="store_true")
    p.add_argument("--arena", type=int, default=0, metavar="PAIRS",
                   help="also run the arena for this many duplicate pairs of single hands")
    p.add_argument("--arena-engines", default="ismcts:100ms,greedy;ismcts:100ms,flatmc:100ms;cheat:100ms,greedy")
    p.add_argument("--jobs", type=int, default=1, help="arena processes")
    p.add_argument("--exact-only", action="store_true",
                   help="solve the last two rounds' endgames once, one thread, and print only that (for callgrind)")
    args = p.parse_args()
    rules = Rules()
    warm = Match(rules, seed=0)
    search(warm.view(warm.to_move), SearchBudget(iterations=100))         # builds the equity table: not timed

    if args.exact_only:
        ms, worlds, positions, digest = exact_ms(last_two_rounds(8, rules), 1)
        print(f"exact_last_two_rounds_ms_2p_classic: {ms:.1f} ms", flush=True)
        print(f"exact_last_two_rounds_worlds_2p_classic: {worlds} worlds", flush=True)
        print(f"exact_last_two_rounds_positions_2p_classic: {positions} positions", flush=True)
        print(f"exact_last_two_rounds_figures_2p_classic: {digest} digest", flush=True)
        return

    knows = first_decisions(4, rules)
    rates = [ismcts_rate(knows, args.seconds / 4) for _ in range(args.repeat)]
    if args.v:
        print(f"# ismcts rates: {rates}")
    print(f"ismcts_iterations_per_s_2p_classic: {statistics.median(r[0] for r in rates):.0f} it/s", flush=True)
    print(f"paired_playouts_per_s_2p_classic: {statistics.median(r[1] for r in rates):.0f} playouts/s", flush=True)

    endgames = last_two_rounds(8, rules)
    one = [exact_ms(endgames, 1) for _ in range(args.repeat)]
    two = [exact_ms(endgames, 2) for _ in range(args.repeat)]
    if args.v:
        print(f"# exact 1 thread: {one}\n# exact 2 threads: {two}")
    print(f"exact_last_two_rounds_ms_2p_classic: {statistics.median(x[0] for x in one):.1f} ms", flush=True)
    print(f"exact_last_two_rounds_2threads_ms_2p_classic: {statistics.median(x[0] for x in two):.1f} ms",
          flush=True)
    print(f"exact_last_two_rounds_worlds_2p_classic: {one[0][1]} worlds", flush=True)
    # the cost's two factors: positions per solve and the time of one
    print(f"exact_last_two_rounds_positions_2p_classic: {one[0][2]} positions", flush=True)
    print(f"exact_last_two_rounds_figures_2p_classic: {one[0][3]} digest", flush=True)
    print(f"exact_ns_per_position_2p_classic: {1e6 * statistics.median(x[0] for x in one) / one[0][2]:.1f} ns",
          flush=True)

    ratio = median_of(args.repeat, args.v, "thread ratio", lambda: thread_ratio(rules, args.seconds / 4))
    print(f"ismcts_2_over_1_threads_2p_classic: {ratio:.2f} ratio", flush=True)

    if args.arena:
        for pairing in args.arena_engines.split(";"):
            a, b = pairing.split(",")
            res = arena(a, b, rules=Rules(hands=1), pairs=args.arena, seed=0, jobs=args.jobs)
            lo, hi = res.margin_ci
            name = f"arena_{a}_vs_{b}".replace(":", "_")
            print(f"{name}_margin: {res.margin:+.3f} points/hand (95% CI {lo:+.3f} .. {hi:+.3f})", flush=True)
            print(f"{name}_hand_win: {100 * res.hand_win:.1f} %", flush=True)
            print(f"{name}_ms_per_move: {res.ms_per_move[0]:.1f} ms", flush=True)


if __name__ == "__main__":
    main()
