"""Baseline players for self-play: random and greedy (the core's policies)."""
from __future__ import annotations

import random
from typing import Protocol, Sequence

from .errors import CirullaError
from .match import Match
from .moves import Move
from .rules import Rules


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
        core = match._core
        moves = core.legal_moves()
        return Move.from_core(moves[core.greedy_choice(moves)], match.rules.matta_card)


# strength levels for engine opponents, weakest first
LEVELS = ("random", "greedy")


def make_player(level: str, *, seed: int | None = None) -> Player:
    """An engine player of a named strength level (see LEVELS)."""
    if level == "random":
        return RandomPlayer(seed)
    if level == "greedy":
        return GreedyPlayer()
    raise CirullaError(f"unknown level {level!r}; levels are {', '.join(LEVELS)}")


def self_play(rules: Rules, players: Sequence[Player], *, seed: int | None = None,
              dealer: int | None = None) -> Match:
    """Play a whole match, seat i played by players[i]."""
    if len(players) != rules.players:
        raise CirullaError(f"{len(players)} players for a {rules.players}-player match")
    match = Match(rules, seed=seed, dealer=dealer)
    while not match.is_over:
        match.play(players[match.to_move].choose(match))
    return match
