"""The rollout policies against each other, without search: duplicate single
hands of 2-player classic rules, the learned policy (_core.learned_index) in
one seat and the greedy one in the other, then the seats swapped on the same
deal. Prints the learned policy's margin in points per hand with a 95%
interval (the pair the unit), a quick check of a fit before the arena.

    python bench/policy/duel.py --hands 20000 --seed 1
"""
from __future__ import annotations

import argparse
import math
import sys

from cirulla.solver import _core
from cirulla.solver.rules import Rules


def play(rules: Rules, seed: int, learned_side: int, eps_milli: int = 0) -> int:
    """One hand from this seed: the learned side's points less the other's."""
    core = _core.CoreState(rules.core, seed % 2)
    core.shuffle(seed)
    while core.phase != _core.PHASE_OVER:
        if core.phase == _core.PHASE_DEAL:
            if core.deal() == _core.DEAL_RESULT_VOID:
                core.shuffle(seed ^ 0x5DEECE66D)
            continue
        moves = core.legal_moves()
        if core.turn == learned_side:
            i = core.learned_choice(moves)
        else:
            i = core.greedy_choice(moves)
        core.apply(*moves[i])
    pts = [sum(row) for row in core.score()]
    return pts[learned_side] - pts[1 - learned_side]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=20000, help="duplicate pairs of hands")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rules = Rules(hands=1)
    d = [play(rules, args.seed + k, 0) + play(rules, args.seed + k, 1) for k in range(args.hands)]
    n = len(d)
    mean = sum(d) / n / 2
    se = math.sqrt(sum((x / 2 - mean) ** 2 for x in d) / (n * (n - 1)))
    print(f"learned vs greedy policy, {n} duplicate pairs: {mean:+.3f} points/hand "
          f"(95% CI {mean - 1.96 * se:+.3f} .. {mean + 1.96 * se:+.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
