"""Cirulla: the rules (a Cython core under this API), search and analysis."""
from .cards import DECK, Card
from .errors import (
                     CirullaError,
                     IllegalMoveError,
                     InvalidCardError,
                     InvalidMoveError,
                     RecordError,
                     RulesError,
                     StateError,
)
from .events import CATEGORIES, Deal, Event, HandEnd, SideScore, Turn
from .match import Match
from .moves import Move
from .rules import PRESETS, Rules

__all__ = ["DECK", "CATEGORIES", "Card", "CirullaError", "Deal", "Event", "HandEnd",
           "IllegalMoveError", "InvalidCardError", "InvalidMoveError", "Match", "Move",
           "PRESETS", "RecordError", "Rules", "RulesError", "SideScore", "StateError", "Turn"]
