"""What the learned rollout policy costs: whole-hand playouts per CPU second
with the greedy policy, the learned one and its softmax draws
(_core.bench_playouts), and the CPU
time of a search of ``--iterations`` with each rollout on the same positions
(the first decisions of seeded random hands that the search plays by SO-ISMCTS).

    python bench/policy/speed.py --hands 200000 --positions 40 --iterations 10000
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from cirulla.solver import _core
from cirulla.solver.match import Match
from cirulla.solver.rules import Rules
from cirulla.solver.search import Knowledge, Policy, SearchBudget, SearchMethod, Tuning, run_search


def playouts(hands: int, policy: Policy, repeat: int) -> float:
    rules = Rules().core
    rates = []
    for _ in range(repeat):
        t = time.thread_time()
        _core.bench_playouts(rules, hands, 1, True, policy)
        rates.append(hands / (time.thread_time() - t))
    return statistics.median(rates)


def positions(n: int) -> list[Knowledge]:
    """Positions of the first two rounds (searched by SO-ISMCTS), from random play."""
    out: list[Knowledge] = []
    rng = random.Random(7)
    seed = 0
    while len(out) < n:
        seed += 1
        m = Match(Rules(hands=1), seed=seed, dealer=seed % 2)
        while m.round < 2 and not m.is_over and len(out) < n:
            moves = m.legal_moves
            if len(moves) > 1 and all(x.card is not None for x in moves):
                out.append(Knowledge.of(m.view(m.to_move)))
            m.play(rng.choice(moves))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=200000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--positions", type=int, default=40)
    ap.add_argument("--iterations", type=int, default=10000)
    args = ap.parse_args(argv)
    for policy in Policy:
        print(f"playouts_{policy.name.lower()}: {playouts(args.hands, policy, args.repeat):.0f} hands/cpu-s")
    know = positions(args.positions)
    for policy in Policy:
        t = time.thread_time()
        for k, kn in enumerate(know):
            run_search(kn, SearchBudget(iterations=args.iterations, seed=k),
                       Tuning(method=SearchMethod.ISMCTS, use_tables=False, knobs={"policy": policy}))
        ms = 1000 * (time.thread_time() - t) / len(know)
        print(f"search_{policy.name.lower()}_{args.iterations}it: {ms:.1f} cpu-ms/move")
    return 0


if __name__ == "__main__":
    sys.exit(main())
