"""The events of a match, in order: what a game record holds."""
from __future__ import annotations

from dataclasses import dataclass

from .cards import Card
from .moves import Move

CATEGORIES = ("scope", "declarations", "cards", "diamonds", "settebello",
              "primiera", "grande", "piccola", "re_bello")   # the core's order (section 6)


@dataclass(frozen=True)
class Deal:
    """One round's cards (R-DEAL); a void deal (R-MONTE) is followed by another."""
    hand: int
    round: int
    dealer: int
    table: tuple[Card, ...]
    hands: tuple[tuple[Card, ...], ...]
    void: bool = False
    dealer_scope: int = 0          # R-DEALER-BUONA
    capotun: bool = False          # R-CAPOTUN


@dataclass(frozen=True)
class Turn:
    seat: int
    move: Move
    scopa: bool = False            # R-SCOPA


@dataclass(frozen=True)
class SideScore:
    """One side's points for a hand by category (section 6)."""
    side: int
    scope: int = 0
    declarations: int = 0
    cards: int = 0
    diamonds: int = 0
    settebello: int = 0
    primiera: int = 0
    grande: int = 0
    piccola: int = 0
    re_bello: int = 0
    match_total: int = 0

    @property
    def total(self) -> int:
        return sum(getattr(self, c) for c in CATEGORIES)


@dataclass(frozen=True)
class HandEnd:
    hand: int
    leftover: tuple[Card, ...]     # R-LEFTOVER
    leftover_side: int | None      # None: nobody captured in the hand
    sides: tuple[SideScore, ...]
    cappotto_side: int | None = None   # R-CAPPOTTO


Event = Deal | Turn | HandEnd
