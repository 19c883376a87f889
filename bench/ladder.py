"""The strength ladder: how much stronger each level is than the one below.

Every level (solver/players.py LEVELS) plays duplicate single hands (classic,
2 players, each deal played twice with the seats swapped, the same seeded
deals for every pairing) against the level below it and against greedy, as
ChooseMove plays it: its own iteration budget, one thread, seeded, so the
figures do not depend on the machine's load. Printed as ``name: value unit``:

- ``LEVEL_vs_OPPONENT``: every pairing's margin, points per hand, 95% interval;
- ``rating_LEVEL``: points per hand against greedy (greedy = 0; random's is
  minus greedy's margin over it), the scale GetEngineInfo reports;
- ``step_LEVEL``: its margin over the level below, and whether the interval
  is above zero (``clearly positive``);
- ``--table``: the players.RATINGS entries to paste.

    python bench/ladder.py --jobs 2              # the default size: ~20 min on 2 free cores
    python bench/ladder.py --pairs 300 --seed 1000 --jobs 2 --table   # the README's table
    python bench/ladder.py --quick               # CI-sized: under a minute
    python bench/ladder.py --levels beginner,casual --pairs 400

Full against advanced and greedy is most of the time (100,000 iterations a
move, ~120 ms); the levels up to intermediate take a few minutes at 300 pairs.
"""
from __future__ import annotations

import argparse
import datetime
import sys
import time

from cirulla.solver.arena import ArenaResult, ladder, ladder_matchups
from cirulla.solver.players import LEVEL_NAMES, level
from cirulla.solver.rules import Rules

DEFAULT_PAIRS = 200
QUICK_PAIRS = 24
QUICK_LEVELS = ("greedy", "beginner", "casual", "intermediate")


def _ci(res: ArenaResult, sign: float = 1.0) -> str:
    lo, hi = sorted((sign * res.margin_ci[0], sign * res.margin_ci[1]))
    return f"{sign * res.margin:+.2f} points/hand (95% CI {lo:+.2f} .. {hi:+.2f})"


def report(results: dict[tuple[str, str], ArenaResult], pairs: int, seed: int) -> list[str]:
    """The ladder's lines from its pairings' results."""
    names = list(LEVEL_NAMES)
    lines = [f"{a}_vs_{b}: {_ci(r)}, {r.pairs} pairs, {r.hands} hands, "
             f"{r.ms_per_move[0]:.1f} / {r.ms_per_move[1]:.1f} ms per move" for (a, b), r in results.items()]
    vs_greedy = {a: r for (a, b), r in results.items() if b == "greedy"}
    if ("greedy", "random") in results:
        lines.append(f"rating_random: {_ci(results['greedy', 'random'], -1.0)} against greedy")
    lines.append("rating_greedy: +0.00 points/hand (the scale's zero)")
    for name in names[2:]:
        if name in vs_greedy:
            lines.append(f"rating_{name}: {_ci(vs_greedy[name])} against greedy")
    steps = []
    for (a, b), r in results.items():
        if names.index(b) == names.index(a) - 1:
            clear = r.margin_ci[0] > 0
            steps.append((a, r.margin, clear))
            lines.append(f"step_{a}: {_ci(r)} over {b}, {'clearly positive' if clear else 'NOT clearly positive'}")
    if steps:
        lines.append(f"steps_clearly_positive: {sum(c for _, _, c in steps)}/{len(steps)} steps")
        searched = [m for a, m, _ in steps if level(a).searches]
        if len(searched) > 1 and min(searched) > 0:
            lines.append(f"step_evenness: {max(searched) / min(searched):.2f} largest/smallest step of the "
                         "searching levels")
    return lines


def table(results: dict[tuple[str, str], ArenaResult], command: str) -> list[str]:
    """players.RATINGS entries from the pairings against greedy."""
    out = [f"# {command}, {datetime.date.today().isoformat()}"]
    for (a, b), r in results.items():
        if a == "greedy":
            out.append(f'    "random": Rating({-r.margin:+.2f}, {-r.margin_ci[1]:+.2f}, {-r.margin_ci[0]:+.2f}, '
                       f"{r.pairs}),")
            out.append('    "greedy": Rating(0.0, 0.0, 0.0, 0),')
        elif b == "greedy":
            out.append(f'    "{a}": Rating({r.margin:+.2f}, {r.margin_ci[0]:+.2f}, {r.margin_ci[1]:+.2f}, {r.pairs}),')
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, help=f"duplicate pairs per pairing (default {DEFAULT_PAIRS}; "
                                             f"--quick {QUICK_PAIRS})")
    p.add_argument("--quick", action="store_true",
                   help=f"CI-sized: {QUICK_PAIRS} pairs, the levels up to {QUICK_LEVELS[-1]}")
    p.add_argument("--levels", help="the levels whose pairings to play, comma-separated "
                                    f"(default: all above random: {', '.join(LEVEL_NAMES[1:])})")
    p.add_argument("--seed", type=int, default=0, help="the first pair's match seed (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1)")
    p.add_argument("--table", action="store_true", help="also print the players.RATINGS entries")
    args = p.parse_args(argv)
    pairs = args.pairs or (QUICK_PAIRS if args.quick else DEFAULT_PAIRS)
    levels = args.levels.split(",") if args.levels else (list(QUICK_LEVELS) if args.quick else None)
    matchups = ladder_matchups(levels)
    print(f"ladder: {len(matchups)} pairings, {pairs} duplicate pairs each (seed {args.seed}), one hand per "
          f"match, classic, 2 players, the levels' iteration budgets, {args.jobs} job(s)", flush=True)
    t0 = time.perf_counter()

    def done(res: ArenaResult) -> None:
        print(f"  [{time.perf_counter() - t0:.0f} s] {res.a} vs {res.b}: {_ci(res)}", file=sys.stderr, flush=True)

    results = ladder(levels, pairs=pairs, seed=args.seed, jobs=args.jobs, rules=Rules(hands=1), on_matchup=done)
    for line in report(results, pairs, args.seed):
        print(line)
    print(f"elapsed: {time.perf_counter() - t0:.0f} s")
    if args.table:
        print("\n".join(table(results, "python bench/ladder.py " + " ".join(sys.argv[1:] if argv is None else argv))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
