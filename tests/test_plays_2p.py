"""The exact solver's move generator for 2 players (`gen_plays_2p` in
solver/_core.pyx, through `CoreState.plays_2p`) against the core's own:
where it covers a position (card plays only, a table of at most 4 cards, at
most 3 cards in hand), the same moves in the same order as `legal_moves`
and the same greedy choice as `greedy_choice`; where it does not, it says
so (None), and the search asks gen_moves."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_core_golden import BASE, RULESETS

from cirulla.solver import _core

TWO_PLAYERS = sorted(name for name, over in RULESETS.items() if over.get("n_players", 2) == 2)


@st.composite
def positions(draw):
    """A 2-player position to move in: holdings of 0 to 4 cards (the mover
    at least one), a table of 0 to 6 cards, the stock empty or not, maybe the
    seat's first turn of the round, maybe a named matta, rarely capture
    values no legal position has."""
    rules = {**BASE, **RULESETS[draw(st.sampled_from(TWO_PLAYERS))]}
    deck = draw(st.permutations(range(40)))
    n_hand = draw(st.sampled_from([1, 2, 3, 3, 3, 4]))
    n_other = draw(st.integers(0, 4))
    n_table = draw(st.sampled_from([0, 1, 2, 3, 3, 4, 4, 5, 6]))
    core_rules = _core.CoreRules(**rules)
    f = _core.CoreState(core_rules, 0).export()
    seat = draw(st.integers(0, 1))
    cards = iter(deck)
    hand = sum(1 << next(cards) for _ in range(n_hand))
    other = sum(1 << next(cards) for _ in range(n_other))
    table = sum(1 << next(cards) for _ in range(n_table))
    f["hand"] = [hand if k == seat else (other if k == 1 - seat else 0) for k in range(5)]
    f["table"] = table
    f["turn"] = seat
    f["phase"] = _core.PHASE_PLAY
    f["round"] = draw(st.integers(1, 5))
    f["round_cards"] = n_hand if draw(st.booleans()) else 3
    f["declared"] = draw(st.sampled_from([0, 0, 0, 1 << seat, 1 << (1 - seat), 3]))
    f["stock_pos"] = draw(st.sampled_from([40, 40, 34, 28]))
    if rules["matta"] >= 0 and draw(st.booleans()):
        f["cval"][rules["matta"]] = draw(st.integers(1, 10))           # a named matta
    odd = draw(st.integers(0, 19)) == 0
    if odd:
        # capture values no legal position has: the core's way, whatever it gives
        for c in draw(st.lists(st.sampled_from(deck[:n_hand + n_other + n_table]), min_size=1, max_size=3)):
            f["cval"][c] = draw(st.sampled_from([0, 11, 14, 15, 31, 255]))
    return rules["matta"], core_rules, f, odd


# one cache of tables across positions (its entries found again), by the
# matta's card: a cache serves one set of capture values but the matta's
CACHES: dict[int, _core.TableCache] = {}


@settings(max_examples=4000, deadline=None)
@given(positions())
def test_plays_2p_are_gen_moves_and_greedy_index(position):
    matta, core_rules, f, odd = position
    state = _core.CoreState.restore(core_rules, f)
    moves = state.legal_moves()
    fresh = state.plays_2p()
    cached = None if odd else state.plays_2p(CACHES.setdefault(matta, _core.TableCache()))
    for fast in (fresh, cached):
        if fast is None:
            continue
        assert fast[0] == moves, f
        assert fast[1] == (state.greedy_choice(moves) if len(moves) > 1 else 0), f
    assert (fresh is None) == (cached is None) or odd


def test_plays_2p_covers_the_common_positions():
    """Most positions of the last rounds (card plays on a short table) are covered."""
    import random

    rnd = random.Random(7)
    core_rules = _core.CoreRules(**BASE)
    covered = total = 0
    for _ in range(2000):
        f = _core.CoreState(core_rules, 0).export()
        deck = list(range(40))
        rnd.shuffle(deck)
        f["hand"] = [sum(1 << c for c in deck[:2]), sum(1 << c for c in deck[2:4]), 0, 0, 0]
        f["table"] = sum(1 << c for c in deck[4:4 + rnd.randrange(0, 5)])
        f["turn"], f["phase"], f["round"], f["round_cards"], f["declared"] = 0, _core.PHASE_PLAY, 5, 3, 0
        f["stock_pos"] = 40
        state = _core.CoreState.restore(core_rules, f)
        total += 1
        covered += state.plays_2p() is not None
    assert covered == total
