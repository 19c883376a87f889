"""The exact endgame solver made faster gives the same figures.

The solver keeps memos of the core's legal moves (by hand and table), of the
leaves' values (by piles) and of the hand's last two plays (by hands and
table, whatever the piles hold): `_exact._reference(True)` solves without
them, the slow path these tests hold the memos to, figure for figure, in
every rules variant that changes what the memos' keys must hold (the matta
and its naming, declarations, R-CHOICE, the match equity, captures
optional). And the root moves' figures of a few seeded endgames are held to
those the solver gave before the memos (recorded below from that version).
"""
from __future__ import annotations

import pytest

from cirulla.solver import Match, Rules, _exact
from cirulla.solver.events import CATEGORIES
from cirulla.solver.search import INFER_T, Knowledge, SearchBudget, _search, equity_table, search

# positions from greedy self-play, solved exactly (conftest.exact_against_any_opponent)
pytestmark = pytest.mark.usefixtures("exact_against_any_opponent")


def endgame(rules: Rules, seed: int, stock: int, cards: int) -> Match:
    """The first position of a greedy self-play match with this stock left,
    `cards` cards in each hand and more than one legal move."""
    match = Match(rules, seed=seed)
    while not match.is_over:
        if (match.stock_size == stock and len(match.legal_moves) > 1
                and all(len(match.hand(s)) == cards for s in range(2))):
            return match
        match.play(match.greedy_move())
    raise AssertionError(f"no such position for seed {seed}")


def solve(know: Knowledge, *, reference: bool, equity: bool = False, match_mode: bool = False) -> dict:
    """Every world solved by one searcher; its counts (stats())."""
    table = equity_table(know.rules) if equity else None
    searcher = know.searcher(1, _search.StopFlag(), infer_t=INFER_T, equity=table, match_mode=match_mode)
    _exact._reference(reference)
    try:
        assert searcher.exact(0, 1) > 0
    finally:
        _exact._reference(False)
    return dict(searcher.stats())


CASES = [
    # (rules, seeds, stock, cards in hand, equity, match mode)
    (Rules(), (0, 1, 2), 6, 3, False, False),
    (Rules(), (3,), 6, 2, False, False),
    (Rules(), (4,), 6, 3, True, False),
    (Rules(), (5, 6), 6, 3, True, True),
    (Rules.preset("online"), (1, 2), 6, 3, False, False),
    (Rules.preset("extended", matta="QH"), (3,), 6, 3, False, False),
    (Rules(matta="none"), (4, 5), 6, 3, False, False),
    (Rules(buona_stack=True, grande_in_hand=True, re_bello=True), (6,), 6, 3, True, True),
    (Rules.preset("relaxed"), (1, 2), 6, 2, False, False),
    (Rules(), (7, 8), 0, 2, False, False),          # one world: solved without the memos
]


@pytest.mark.parametrize(("rules", "seeds", "stock", "cards", "equity", "match_mode"), CASES)
def test_the_memos_change_no_figure(rules, seeds, stock, cards, equity, match_mode):
    """Every count of the solve (the paired sums, their cross products, the
    categories, the chance of winning, the positions visited) is the same to
    the last bit with the memos and without: the same search."""
    for seed in seeds:
        match = endgame(rules, seed, stock, cards)
        know = Knowledge.of(match.view(match.to_move))
        fast = solve(know, reference=False, equity=equity, match_mode=match_mode)
        slow = solve(know, reference=True, equity=equity, match_mode=match_mode)
        assert fast == slow
        assert fast["solved"] > fast["worlds"] > 0


def test_the_memos_kept_across_calls_change_no_figure():
    """A searcher's tables outlive a call: exact() again on the same searcher,
    its memos full, still gives what the slow path gives after the same calls."""
    match = endgame(Rules(), 9, 6, 3)
    know = Knowledge.of(match.view(match.to_move))
    stats = []
    for reference in (False, True):
        searcher = know.searcher(1, _search.StopFlag(), infer_t=INFER_T)
        _exact._reference(reference)
        try:
            searcher.exact(0, 1)
            searcher.exact(0, 2)
            searcher.exact(1, 2)
        finally:
            _exact._reference(False)
        stats.append(dict(searcher.stats()))
    assert stats[0] == stats[1]
    assert stats[0]["worlds"] == 2 * 1680


# search(view, seed=1) on these endgames (rules preset, seed, stock) with the
# solver before its memos: by move, the expected points, the scopa risk and
# the categories in CATEGORIES order, rounded to 9 decimals
BEFORE = {
    ('classic', 0, 6): {
        '2C': (-9.070833333, 0.583333333,
            (-4.824404762, -0.511904762, -0.963095238, -1.0, -1.0, -0.771428571, 0.0, 0.0, 0.0)),
        'AC': (-9.970833333, 0.333333333,
            (-5.541071429, -0.511904762, -1.0, -1.0, -1.0, -0.917857143, 0.0, 0.0, 0.0)),
        'KH': (-9.104761905, 0.583333333,
            (-4.842857143, -0.511904762, -0.969047619, -1.0, -1.0, -0.780952381, 0.0, 0.0, 0.0)),
    },
    ('classic', 7, 6): {
        '3C': (0.028571429, 0.761904762,
            (2.123809524, -0.285714286, -0.416666667, -0.610714286, -0.629761905, -0.157738095, 0.0, 0.005357143, 0.0)),
        '5H': (-0.180357143, 0.583333333,
            (2.15952381, -0.285714286, -0.498214286, -0.64702381, -0.658333333, -0.250595238, 0.0, 0.0, 0.0)),
        '7H': (-0.52797619, 0.583333333,
            (2.160714286, -0.285714286, -0.550595238, -0.694047619, -0.701190476, -0.466071429, 0.0, 0.008928571, 0.0)),
        'declare 3C 5H 7H=A': (8.820833333, 1.0,
            (3.65952381, 2.714285714, 0.714285714, 0.082738095, -0.166666667, 0.998214286, 0.0, 0.818452381, 0.0)),
    },
    ('online', 3, 6): {
        '7C': (-10.777380952, 0.761904762,
            (-1.871428571, -3.142857143, -0.9375, -0.530357143, -0.49047619, -0.844047619, 0.0, -2.960714286, 0.0)),
        'JC': (-10.791666667, 0.761904762,
            (-1.932738095, -3.142857143, -0.929761905, -0.555357143, -0.592857143,
             -0.664285714, 0.0, -2.973809524, 0.0)),
        'QS': (-11.122619048, 0.761904762,
            (-2.138690476, -3.142857143, -0.918452381, -0.570833333, -0.644047619, -0.645238095, 0.0, -3.0625, 0.0)),
    },
    ('extended', 5, 6): {
        '4C x 4S': (2.996428571, 0.583333333,
            (1.295238095, 2.964285714, -0.169047619, -0.205357143, -1.0, 0.166666667, 0.0, -0.055357143, 0.0)),
        'AD x 2H 3H 4S': (3.019047619, 0.0,
            (1.826785714, 2.964285714, -0.275, -0.182738095, -1.0, -0.314285714, 0.0, 0.0, 0.0)),
        'KC x 2H 3H': (4.835714286, 0.0,
            (1.904761905, 2.964285714, 0.698214286, 0.188690476, -1.0, 0.083333333, 0.0, -0.003571429, 0.0)),
    },
    ('classic', 11, 0): {
        '2C': (6.0, 1.0,
            (3.0, -10.0, 1.0, 1.0, 1.0, 1.0, 5.0, 4.0, 0.0)),
        '3H': (7.0, 1.0,
            (3.0, -10.0, 1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 0.0)),
        'KC': (6.0, 0.0,
            (3.0, -10.0, 1.0, 1.0, 1.0, 1.0, 5.0, 4.0, 0.0)),
    },
}

ENDGAMES = [("classic", 0, 6, 3), ("classic", 7, 6, 3), ("online", 3, 6, 3), ("extended", 5, 6, 3),
            ("classic", 11, 0, 3)]


@pytest.mark.parametrize(("preset", "seed", "stock", "cards"), ENDGAMES)
def test_root_figures_are_those_of_the_solver_before(preset, seed, stock, cards):
    match = endgame(Rules.preset(preset), seed, stock, cards)
    res = search(match.view(match.to_move), SearchBudget(seed=1))
    assert res.method == "exact" and not res.cut_short
    got = {str(m.move): (m.expected_points, m.scopa_risk, tuple(m.categories[c] for c in CATEGORIES))
           for m in res.moves}
    want = BEFORE[(preset, seed, stock)]
    assert set(got) == set(want)
    for move, (points, risk, cats) in want.items():
        assert got[move][0] == pytest.approx(points, abs=1e-8), move
        assert got[move][1] == pytest.approx(risk, abs=1e-8), move
        assert got[move][2] == pytest.approx(cats, abs=1e-8), move
