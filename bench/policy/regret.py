"""The rollout policies judged by the exact solver: in 2-player positions of
the last two rounds (a stock of 6, where the search solves every world
exactly), the exact values of every move are the reference; SO-ISMCTS with
the greedy or the learned rollout (forced, ``--iterations``) picks a move, and
its regret is the exact value of the best move less that of its pick. The
positions come from hands the greedy policy plays (``--eps`` per 1000 of its
moves random, for variety) from seeds SEED, SEED + 1, ...

    python bench/policy/regret.py --positions 300 --iterations 10000 --seed 1
"""
from __future__ import annotations

import argparse
import math
import random
import statistics
import sys

from cirulla.solver.match import Match
from cirulla.solver.rules import Rules
from cirulla.solver.search import Knowledge, Policy, SearchBudget, SearchMethod, Tuning, run_search


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=300)
    ap.add_argument("--iterations", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eps", type=int, default=300)
    args = ap.parse_args(argv)
    regrets: dict[Policy, list[float]] = {Policy.GREEDY: [], Policy.LEARNED: []}
    seed = args.seed
    while len(regrets[Policy.GREEDY]) < args.positions:
        rng = random.Random(seed)
        m = Match(Rules(hands=1), seed=seed, dealer=seed % 2)
        seed += 1
        while not m.is_over and m.stock_size > 6:
            moves = m.legal_moves
            m.play(rng.choice(moves) if rng.randrange(1000) < args.eps else m.greedy_move())
        if m.is_over or m.stock_size != 6:
            continue
        while len(m.legal_moves) < 2 or any(x.card is None for x in m.legal_moves):
            m.play(m.greedy_move())
            if m.is_over or m.stock_size != 6:
                break
        if m.is_over or m.stock_size != 6:
            continue
        know = Knowledge.of(m.view(m.to_move))
        exact = run_search(know, SearchBudget(seed=seed), Tuning(method=SearchMethod.EXACT, use_tables=False))
        value = {s.move: s.expected_points for s in exact.moves}
        best = max(value.values())
        for policy in regrets:
            r = run_search(know, SearchBudget(iterations=args.iterations, seed=seed),
                           Tuning(method=SearchMethod.ISMCTS, use_tables=False, knobs={"policy": policy}))
            regrets[policy].append(best - value[r.best])
    n = len(regrets[Policy.GREEDY])
    diff = [a - b for a, b in zip(regrets[Policy.GREEDY], regrets[Policy.LEARNED], strict=True)]
    se = statistics.stdev(diff) / math.sqrt(n)
    for policy, rs in regrets.items():
        print(f"{policy.name.lower()} rollouts: mean regret {statistics.mean(rs):.4f} points, "
              f"exact best picked {100 * sum(x < 1e-9 for x in rs) / n:.1f} % ({n} positions)")
    print(f"greedy - learned regret: {statistics.mean(diff):+.4f} "
          f"(95% CI {statistics.mean(diff) - 1.96 * se:+.4f} .. {statistics.mean(diff) + 1.96 * se:+.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
