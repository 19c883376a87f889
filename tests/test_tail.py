"""The exact tail of a playout (issue 13): with the knob on, a search's
rollouts play the last round of a 2-player hand perfectly for the hand's
margin, every card being known in a sampled world."""
from __future__ import annotations

import random

import pytest

from cirulla.solver import CirullaError, Match, Rules, _core
from cirulla.solver.arena import EngineSpec
from cirulla.solver.search import Knowledge, run_search

PH_PLAY = 1


def negamax(state: _core.CoreState) -> int:
    """The hand's margin for the side to move with perfect play by both sides:
    every line played out (a declaration keeps the turn)."""
    side = state.turn % 2
    best = None
    for move in state.legal_moves():
        child = state.copy()
        child.apply(*move)
        if child.phase != PH_PLAY:
            points = child.score()
            value = sum(points[side]) - sum(points[1 - side])
        else:
            value = negamax(child) * (1 if child.turn % 2 == side else -1)
        best = value if best is None else max(best, value)
    assert best is not None
    return best


def last_round(rules: Rules, seed: int) -> Match | None:
    """A 2-player hand at the first play of its last round (somewhat random play before)."""
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over and not (match.stock_size == 0 and match.core.phase == PH_PLAY):
        match.play(rng.choice(match.legal_moves) if rng.random() < 0.3 else match.greedy_move())
    return None if match.is_over else match


@pytest.mark.parametrize("preset", ["classic", "cirullone", "online"])
def test_the_tail_is_the_perfect_line(preset):
    """tail_line's value is the plain negamax's, and its line, played, ends the
    hand with exactly that margin."""
    rules = Rules.preset(preset, players=2, hands=1)
    checked = 0
    for seed in range(40):
        match = last_round(rules, seed)
        if match is None:
            continue
        state, side = match.core, match.core.turn % 2
        value, line = state.tail_line()
        assert value == negamax(state), seed
        end = state.copy()
        for move in line:
            end.apply(*move)
        points = end.score()
        assert end.phase != PH_PLAY and sum(points[side]) - sum(points[1 - side]) == value, seed
        checked += 1
    assert checked >= 30


def test_the_tail_only_in_a_last_round():
    match = Match(Rules(hands=1), seed=1)
    with pytest.raises(ValueError, match="last round"):
        match.core.tail_line()


def test_the_knob_reaches_the_rollouts():
    """`tail=1` in the arena is run_search's exact_tail; the rollouts then end
    differently, so the figures of a first move move."""
    spec = EngineSpec.parse("ismcts:2000it:tail=1")
    assert dict(spec.params) == {"exact_tail": 1} and str(spec) == "ismcts:2000it:tail=1"
    match = Match(Rules(hands=1), seed=3)
    know = Knowledge.of(match.view(match.to_move))
    plain = run_search(know, iterations=2000, seed=1)
    tail = run_search(know, iterations=2000, seed=1, exact_tail=True)
    assert [m.expected_points for m in plain.moves] != [m.expected_points for m in tail.moves]
    assert run_search(know, iterations=2000, seed=1, exact_tail=True).moves == tail.moves
    with pytest.raises(CirullaError):
        EngineSpec.parse("ismcts:2000it:tail=x")
