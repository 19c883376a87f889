"""Golden counts of the exact endgame solver (solver/_exact.pyx): a guard for
its optimisations, which must visit the same positions and give the same
figures to the last bit.

The positions: every decision with a choice in greedy self-play of one hand of
each rule preset below where the stock holds 6 cards (the last two rounds:
84 holdings x 20 splits of the last deal) or none (the last round), with 3 or
2 cards in each hand. Each is solved exactly by a fresh searcher, by the
hand's margin or, every third, by the match equity (every fifth of those in
the match mode); its counts (``Searcher.stats()``: the positions visited, the
worlds, the paired sums and their cross products, the categories, the chance
of winning, rounded to 1e-6 where they are sums) are hashed in order, and
the positions visited are summed apart: a faster search must give the same
figures (the digest) and visit the same positions, and a failure says which
of the two changed. `test_exact_speed_regressions.py` holds the memos to the
reference search that runs without them; this file holds both to what they
gave when it was recorded (commit 0041e92, the digest taken without the
positions since; by running it as a script: ``python
tests/test_exact_golden.py`` prints the table). A change meant to change the
search re-records it and says so in its commit.
"""
from __future__ import annotations

import hashlib
import json

import pytest

from cirulla.solver import Match, Rules
from cirulla.solver.search import INFER_T, Knowledge, _search, equity_table

PRESETS = ("classic", "online", "extended", "relaxed")

# preset -> (solves, positions visited in all, digest of the other counts: the figures)
GOLDEN: dict[str, tuple[int, int, str]] = {
    'classic': (35, 12351345, 'd39762488e486875'),
    'online': (32, 8310188, 'ab7aacdd927db084'),
    'extended': (35, 12367470, 'a5be1401935b14c3'),
    'relaxed': (41, 108736642, 'ecc4ab9ea0e9c84a'),
}


def endgames(rules: Rules, seed: int) -> list[Knowledge]:
    """The decisions with a choice of one greedy hand at a stock of 6 or 0, 3 or 2 cards in each hand."""
    match = Match(rules, seed=seed)
    out = []
    while not match.is_over:
        if (len(match.legal_moves) > 1 and match.stock_size in (6, 0)
                and all(len(match.hand(s)) in (3, 2) for s in range(rules.players))):
            out.append(Knowledge.of(match.view(match.to_move)))
        match.play(match.greedy_move())
    return out


def rounded(value: object) -> object:
    """A count as it is hashed: floats (sums) to 1e-6, lists item by item."""
    if isinstance(value, float):
        return round(value, 6)
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def figures(stats: dict) -> bytes:
    """A solve's figures as they are hashed: its counts (stats()) but the
    positions visited, rounded (also bench/bench_search.py's digest)."""
    return json.dumps({k: rounded(v) for k, v in stats.items() if k != "solved"}, sort_keys=True).encode()


def solve_all(preset: str, seed: int = 0) -> tuple[int, int, str]:
    """(solves, positions, digest of the figures) of the preset's endgames."""
    rules = Rules.preset(preset)
    digest = hashlib.sha256()
    solves = positions = 0
    for i, know in enumerate(endgames(rules, seed)):
        equity = equity_table(know.rules) if i % 3 == 0 else None
        searcher = know.searcher(1, _search.StopFlag(), infer_t=INFER_T, equity=equity,
                                 match_mode=equity is not None and i % 5 == 0)
        assert searcher.exact(0, 1) > 0
        stats = searcher.stats()
        positions += stats["solved"]
        digest.update(figures(stats))
        solves += 1
    return solves, positions, digest.hexdigest()[:16]


@pytest.mark.parametrize("preset", PRESETS)
def test_the_exact_solves_count_as_recorded(preset: str) -> None:
    solves, positions, digest = solve_all(preset)
    want_solves, want_positions, want_digest = GOLDEN[preset]
    assert solves == want_solves > 0, "another set of endgames: the self-play or the filter changed"
    assert digest == want_digest, f"the figures changed ({positions:,} positions visited, {want_positions:,} recorded)"
    assert positions == want_positions, (
        f"the same figures, but {positions:,} positions visited, {want_positions:,} recorded")


if __name__ == "__main__":
    print("GOLDEN: dict[str, tuple[int, int, str]] = {")
    for name in PRESETS:
        print(f"    {name!r}: {solve_all(name)!r},")
    print("}")
