"""Players for self-play and engine opponents: random, greedy (the core's
policies) and the search at named strength levels (LEVELS)."""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import CirullaError
from .match import Match
from .moves import Move
from .rules import Rules
from .search import SearchResult, search


class Player(Protocol):
    name: str

    def choose(self, match: Match) -> Move:
        """The move for the seat to move; uses only what that seat may know."""


class RandomPlayer:
    """Uniform over the legal moves (declarations included)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self._rng = random.Random(seed)

    def choose(self, match: Match) -> Move:
        return self._rng.choice(match.legal_moves)


class GreedyPlayer:
    """Best immediate points: the scoring value of the cards taken plus a scopa,
    less the risk of leaving a table one card can sweep; ties go to the lower
    card. It sees the table, its own cards and the counts, nothing hidden."""

    name = "greedy"

    def choose(self, match: Match) -> Move:
        return match.greedy_move()


@dataclass(frozen=True)
class Level:
    """An engine opponent's strength. `random` and `greedy` do not search; the
    others search `iterations` deep (one thread, so a seed decides the move),
    then, with chance `slip`, slip like a person (a greedy grab, or now and then
    any legal move), else pick among the ranked moves with a softmax over
    expected points at `temperature` (points; 0: always the best move)."""
    name: str
    iterations: int | None = None
    temperature: float = 0.0
    slip: float = 0.0
    about: str = ""

    @property
    def searches(self) -> bool:
        return self.iterations is not None

    def pick(self, result: SearchResult, rng: random.Random, greedy: Callable[[], Move]) -> Move:
        """The move a player of this level makes, given the search's ranking."""
        if rng.random() < self.slip:
            if rng.random() < 0.7:
                return greedy()                         # grabs what is on the table
            return rng.choice(result.moves).move        # any legal move
        if self.temperature <= 0:
            return result.best
        # the better a move looks, the likelier: softmax over expected points
        top = result.moves[0].expected_points
        weights = [math.exp((m.expected_points - top) / self.temperature) for m in result.moves]
        return rng.choices([m.move for m in result.moves], weights=weights)[0]


# weakest first; the search's figures are in bench/bench_analysis.py (move latency by level)
LEVELS: tuple[Level, ...] = (
    Level("random", about="any legal move"),
    Level("greedy", about="the best immediate gain, no look ahead"),
    Level("beginner", 300, 1.5, 0.30, "a short look ahead and frequent slips"),
    Level("casual", 1_500, 0.8, 0.15, "a little look ahead, some slips"),
    Level("intermediate", 6_000, 0.35, 0.06, "a fair search, rare slips"),
    Level("advanced", 25_000, 0.1, 0.02, "a deep search, very rare slips"),
    Level("full", 100_000, 0.0, 0.0, "the search's best move, no slips"),
)
LEVEL_NAMES = tuple(level.name for level in LEVELS)


def level(name: str | Level) -> Level:
    """A level by name.

    :raises CirullaError: for an unknown name, listing the levels.
    """
    if isinstance(name, Level):
        return name
    for lv in LEVELS:
        if lv.name == name:
            return lv
    raise CirullaError(f"unknown level {name!r}; levels are {', '.join(LEVEL_NAMES)}")


class EnginePlayer:
    """The search at a strength level: `choose(match)` searches the view of the
    seat to move (never more), then picks as the level says. The same seed and
    the same sequence of positions give the same moves."""

    def __init__(self, level_name: str | Level = "full", seed: int | None = None):
        self.level = level(level_name)
        self.name = self.level.name
        self._rng = random.Random(seed)

    def choose(self, match: Match) -> Move:
        lv, moves = self.level, match.legal_moves
        if not moves:
            raise CirullaError(f"no move to choose: the match is in phase '{match.phase}'")
        if lv.name == "random":
            return self._rng.choice(moves)
        if lv.name == "greedy" or len(moves) == 1:
            return match.greedy_move()
        result = search(match.view(match.to_move), iterations=lv.iterations,
                        seed=self._rng.getrandbits(63))
        return lv.pick(result, self._rng, match.greedy_move)


def make_player(level_name: str | Level, *, seed: int | None = None) -> Player:
    """A player of a named strength level (see LEVELS)."""
    lv = level(level_name)
    if lv.name == "random":
        return RandomPlayer(seed)
    if lv.name == "greedy":
        return GreedyPlayer()
    return EnginePlayer(lv, seed)


def self_play(rules: Rules, players: Sequence[Player], *, seed: int | None = None,
              dealer: int | None = None) -> Match:
    """Play a whole match, seat i played by players[i]."""
    if len(players) != rules.players:
        raise CirullaError(f"{len(players)} players for a {rules.players}-player match")
    match = Match(rules, seed=seed, dealer=dealer)
    while not match.is_over:
        match.play(players[match.to_move].choose(match))
    return match
