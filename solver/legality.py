"""Why a move is not legal: the fact, the rule in a few words, its id.

Written once for whatever holds a core state with the seat to move: a match
(``Match.why_illegal``, and ``Match.play`` refusing a move) and a seat's view
(``SeatView.why_illegal``, asked on a world consistent with the view). Every
fact a reason reads is one the seat to move sees: its own cards, the table,
whether it declared this round, the values cards play as (R-MATTA).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .cards import Card, cards_of, format_cards
from .moves import Move
from .rules import Rules

if TYPE_CHECKING:
    from ._core import CoreState


def why_illegal(move: Move, core: CoreState, rules: Rules, legal: Sequence[Move]) -> str | None:
    """Why `move` is not one of `legal`, the moves of the seat to move at
    `core`; None if it is one."""
    if move in legal:
        return None
    seat = core.turn
    held = set(cards_of(core.hand(seat)))
    if move.card is None:                               # a declaration
        missing = (move.declared | move.declared_second) - held
        if missing:
            return (f"{move}: seat {seat} does not hold {format_cards(missing)} "
                    f"(a player declares the cards of their own holding, R-DECL-WHEN)")
        if core.declared >> seat & 1 or len(held) != core.round_cards:
            return (f"{move}: seat {seat} can declare only at its first turn of a round, "
                    "holding all its cards (R-DECL-WHEN)")
        triples = ["R-BUONA3: 3 cards adding up to 9 or less", "R-DECINO: 3 cards of one rank",
                   "R-MATTA: the matta is named only to make one"]
        if rules.grande_in_hand:
            triples.append("R-V30: J Q K of diamonds")
        if rules.cirullone:
            triples.append("R-VC: up to two triples of the six")
        can = [str(m) for m in legal if m.is_declaration]
        tail = f"seat {seat} can {', '.join(can)}" if can else f"seat {seat}'s cards make none"
        return f"{move}: not a declaration these cards make ({'; '.join(triples)}); {tail}"
    if move.card not in held:
        return f"{move}: seat {seat} does not hold {move.card} (a player plays a card of their own holding, R-TURN)"
    if legal and all(m.is_declaration for m in legal):
        return (f"{move}: seat {seat} holds a buona and, with declarations mandatory, must declare it "
                f"before playing (R-DECL-CHOICE): {', '.join(str(m) for m in legal)}")
    missing = move.captured - set(cards_of(core.table))
    if missing:
        return f"{move}: {format_cards(missing)} not on the table (a card captures only table cards, R-MOVE)"
    options = ", ".join(str(m) for m in legal if m.card == move.card)
    if not move.captured:
        return f"{move}: {move.card} can capture, and capturing is mandatory (R-MUST): {options}"
    rule = _capture_rule(move.card, move.captured, core, rules)
    return f"{move}: not a capture the rules allow: {rule}; {move.card} can play {options}"


def _capture_rule(card: Card, captured: frozenset[Card], core: CoreState, rules: Rules) -> str:
    """The capture rule that `card` taking the table cards `captured` breaks."""
    cval = core.cval                                    # the matta plays as named (R-MATTA)
    table = cards_of(core.table)
    v = cval(card.index)
    ace_on_table = any(cval(c.index) == 1 for c in table)
    if v == 1 and not ace_on_table:
        return "an ace played on a table without an ace takes every card on it (R-ACE)"
    if v == 1:
        return {"only_ace": "an ace played on a table with an ace takes one ace and nothing else (R-ACE-ACE)",
                "ace_or_fifteen": "an ace played on a table with an ace takes one ace, "
                                  "or cards making 15 with it (R-ACE-ACE)",
                "sweep": "an ace played on a table with an ace takes every card on it "
                         "(R-ACE-ACE, ace_on_ace sweep)"}[rules.ace_on_ace]
    taken = sum(cval(c.index) for c in captured)
    if taken == v and rules.single_match_first and len(captured) > 1 \
            and any(cval(c.index) == v for c in table):
        return (f"a table card is worth {v} like {card}, so a simple capture takes a single card "
                f"(R-CHOICE, single_match_first)")
    return (f"{card} takes cards adding up to its value {v} (R-SIMPLE) or to {15 - v}, "
            f"making 15 with it (R-FIFTEEN), and these add up to {taken}")
