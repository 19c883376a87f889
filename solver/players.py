"""Players for self-play and engine opponents: random, greedy (the core's
policies) and the search at named strength levels (LEVELS)."""
from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .errors import CirullaError
from .i18n import N_
from .match import Match
from .moves import Move
from .rules import Rules
from .search import DEFAULT_BUDGET, SearchBudget, SearchResult, search
from .view import SeatView


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
    then, with chance `slip`, slip like a person: a greedy grab (with chance
    `grab`) or else a near miss (the second- or third-ranked move); otherwise
    they pick among the ranked moves with a softmax over expected points at
    `temperature` (points; 0: always the best move)."""
    name: str
    iterations: int | None = None
    temperature: float = 0.0
    slip: float = 0.0
    about: str = ""
    grab: float = 0.7

    settles: bool = False           # the stopping rule of DEFAULT_BUDGET, capped at `iterations`

    @property
    def searches(self) -> bool:
        return self.iterations is not None

    def budget(self, seed: int) -> SearchBudget:
        """The search budget of this level's move: its iterations on one thread,
        seeded (full strength: the default budget)."""
        if self.settles:
            return DEFAULT_BUDGET.replace(seed=seed)
        return SearchBudget(iterations=self.iterations, seed=seed)

    def choose(self, result: SearchResult, seed: int, greedy: Callable[[], Move]) -> Move:
        """The move ChooseMove answers at this level from the search's ranking:
        `pick` seeded with ``f"{seed}/{strength number}"``."""
        return self.pick(result, random.Random(f"{seed}/{strength_number(self)}"), greedy)

    def pick(self, result: SearchResult, rng: random.Random, greedy: Callable[[], Move]) -> Move:
        """The move a player of this level makes, given the search's ranking."""
        if rng.random() < self.slip:
            if rng.random() < self.grab or len(result.moves) < 2:
                return greedy()                         # grabs what is on the table
            # a near miss: the second-ranked move, or (one time in three) the third
            near = result.moves[1:3]
            return near[-1].move if len(near) > 1 and rng.random() < 1 / 3 else near[0].move
        if self.temperature <= 0:
            return result.best
        # the better a move looks, the likelier: softmax over expected points
        top = result.moves[0].expected_points
        weights = [math.exp((m.expected_points - top) / self.temperature) for m in result.moves]
        return rng.choices([m.move for m in result.moves], weights=weights)[0]


# weakest first, each clearly stronger than the one below (RATINGS, bench/ladder.py);
# the search's figures are in bench/bench_analysis.py (move latency by level)
# (the names and abouts are marked for the catalogs: a player reads them in a menu of
# levels, GetEngineInfo's label and about, translated where shown)
LEVELS: tuple[Level, ...] = (
    Level(N_("random"), about=N_("any legal move")),
    Level(N_("greedy"), about=N_("the best immediate gain, no look ahead")),
    Level(N_("beginner"), 1_000, 0.35, 0.35, N_("a short look ahead and frequent slips")),
    Level(N_("casual"), 1_500, 0.6, 0.15, N_("a little look ahead, some slips")),
    Level(N_("intermediate"), 4_000, 0.47, 0.09, N_("a fair search, few slips")),
    Level(N_("advanced"), 10_000, 0.25, 0.05, N_("a deeper search, fewer misjudgements")),
    Level(N_("full"), DEFAULT_BUDGET.iterations, 0.0, 0.0, N_("the search's best move, no slips"), settles=True),
)
LEVEL_NAMES = tuple(level.name for level in LEVELS)


@dataclass(frozen=True)
class Rating:
    """A level's measured strength: its margin in points per hand against greedy
    (greedy = 0) with the 95% interval, from duplicate single hands (classic, 2
    players) as ChooseMove plays it; `pairs` is the pairs of hands behind it."""
    points: float
    low: float
    high: float
    pairs: int


# The ladder's ratings, the one place apps read them from (GetEngineInfo, README
# "Strength (the arena)"): measured with the LEVELS above (a change to them or to
# the search's defaults is measured again), 2026-12-06 (the last round's equal moves
# ordered against the rollout player; beginner's slips 35%), by
#   python bench/ladder.py --levels greedy,beginner,casual,intermediate,advanced \
#       --pairs 600 --seed 1000 --jobs 2 --table
# and full by `--levels full --pairs 300` (the same seed, the same default)
RATINGS: dict[str, Rating] = {
    "random": Rating(-6.96, -7.32, -6.61, 600),
    "greedy": Rating(0.0, 0.0, 0.0, 0),
    "beginner": Rating(+0.96, +0.65, +1.27, 600),
    "casual": Rating(+1.95, +1.64, +2.25, 600),
    "intermediate": Rating(+2.53, +2.23, +2.83, 600),
    "advanced": Rating(+3.45, +3.14, +3.77, 600),
    "full": Rating(+4.13, +3.75, +4.52, 300),
}


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


def strength_number(lv: Level) -> int:
    """The cirulla.v1.Strength number ChooseMove serves this level as (it seeds the pick).

    :raises CirullaError: for a level ChooseMove does not serve (random, greedy).
    """
    from cirulla.v1 import engine_service_pb2 as epb
    try:
        return epb.Strength.Value(f"STRENGTH_{lv.name.upper()}")
    except ValueError:
        raise CirullaError(f"level {lv.name!r} is not a ChooseMove strength") from None


def choose_move(view: SeatView, level_name: str | Level, seed: int) -> Move:
    """The move ChooseMove answers for this view, level and seed (its own budget,
    one thread): the search seeded with `seed`, then `Level.choose`. `cirulla play` and the arena's level
    engines play through here, so they play what apps get (a test checks it
    against the service)."""
    lv = level(level_name)
    legal = view.legal_moves()
    if len(legal) == 1:
        return legal[0]
    if not lv.searches:
        raise CirullaError(f"level {lv.name!r} does not search")
    result = search(view, lv.budget(seed))
    return lv.choose(result, seed, view.greedy_move)


class EnginePlayer:
    """The search at a strength level: `choose(match)` searches the view of the
    seat to move (never more), then picks as the level says, as ChooseMove
    would with a seed drawn from `seed` (see choose_move). The same seed and
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
        return choose_move(match.view(match.to_move), lv, self._rng.getrandbits(63))


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
