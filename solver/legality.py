"""Why a move is not legal: the fact, the rule in a few words, its id.

Written once for whatever holds a core state with the seat to move: a match
(``Match.why_illegal``, and ``Match.play`` refusing a move) and a seat's view
(``SeatView.why_illegal``, asked on a world consistent with the view). Every
fact a reason reads is one the seat to move sees: its own cards, the table,
whether it declared this round, the values cards play as (R-MATTA). The
reasons are English unless a translator is given (`cirulla play` shows them
to players in their language; cirulla.solver.i18n).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .cards import Card, cards_of, format_cards
from .i18n import N_, Translations, translator
from .moves import Move
from .rules import Rules

if TYPE_CHECKING:
    from ._core import CoreState

# the triples a declaration can be, by the rule that allows them
_TRIPLES = {"R-BUONA3": N_("3 cards adding up to 9 or less"), "R-DECINO": N_("3 cards of one rank"),
            "R-MATTA": N_("the matta is named only to make one"), "R-V30": N_("J Q K of diamonds"),
            "R-VC": N_("up to two triples of the six")}
# what an ace played on a table with an ace takes, by rules.ace_on_ace
_ACE_ON_ACE = {"only_ace": N_("an ace played on a table with an ace takes one ace and nothing else (R-ACE-ACE)"),
               "ace_or_fifteen": N_("an ace played on a table with an ace takes one ace, "
                                    "or cards making 15 with it (R-ACE-ACE)"),
               "sweep": N_("an ace played on a table with an ace takes every card on it "
                           "(R-ACE-ACE, ace_on_ace sweep)")}


def why_illegal(move: Move, core: CoreState, rules: Rules, legal: Sequence[Move],
                tr: Translations | None = None) -> str | None:
    """Why `move` is not one of `legal`, the moves of the seat to move at
    `core`, in tr's language (English without); None if it is one."""
    if move in legal:
        return None
    _ = (tr or translator()).gettext
    seat = core.turn
    held = set(cards_of(core.hand(seat)))
    facts = {"move": str(move), "seat": seat}
    if move.card is None:                               # a declaration
        missing = (move.declared | move.declared_second) - held
        if missing:
            return _("%(move)s: seat %(seat)s does not hold %(cards)s "
                     "(a player declares the cards of their own holding, R-DECL-WHEN)") % {
                **facts, "cards": format_cards(missing)}
        if core.declared >> seat & 1 or len(held) != core.round_cards:
            return _("%(move)s: seat %(seat)s can declare only at its first turn of a round, "
                     "holding all its cards (R-DECL-WHEN)") % facts
        allowed = ["R-BUONA3", "R-DECINO", "R-MATTA"]
        if rules.grande_in_hand:
            allowed.append("R-V30")
        if rules.cirullone:
            allowed.append("R-VC")
        triples = "; ".join(f"{rule}: {_(_TRIPLES[rule])}" for rule in allowed)
        can = [str(m) for m in legal if m.is_declaration]
        tail = (_("seat %(seat)s can %(moves)s") % {**facts, "moves": ", ".join(can)} if can
                else _("seat %(seat)s's cards make none") % facts)
        return _("%(move)s: not a declaration these cards make (%(triples)s); %(tail)s") % {
            **facts, "triples": triples, "tail": tail}
    facts["card"] = str(move.card)
    if move.card not in held:
        return _("%(move)s: seat %(seat)s does not hold %(card)s "
                 "(a player plays a card of their own holding, R-TURN)") % facts
    if legal and all(m.is_declaration for m in legal):
        return _("%(move)s: seat %(seat)s holds a buona and, with declarations mandatory, must declare it "
                 "before playing (R-DECL-CHOICE): %(moves)s") % {**facts, "moves": ", ".join(str(m) for m in legal)}
    missing = move.captured - set(cards_of(core.table))
    if missing:
        return _("%(move)s: %(cards)s not on the table (a card captures only table cards, R-MOVE)") % {
            **facts, "cards": format_cards(missing)}
    facts["options"] = ", ".join(str(m) for m in legal if m.card == move.card)
    if not move.captured:
        return _("%(move)s: %(card)s can capture, and capturing is mandatory (R-MUST): %(options)s") % facts
    rule = _capture_rule(move.card, move.captured, core, rules, _)
    return _("%(move)s: not a capture the rules allow: %(rule)s; %(card)s can play %(options)s") % {
        **facts, "rule": rule}


def _capture_rule(card: Card, captured: frozenset[Card], core: CoreState, rules: Rules,
                  _: Callable[[str], str]) -> str:
    """The capture rule that `card` taking the table cards `captured` breaks."""
    cval = core.cval                                    # the matta plays as named (R-MATTA)
    table = cards_of(core.table)
    v = cval(card.index)
    ace_on_table = any(cval(c.index) == 1 for c in table)
    if v == 1 and not ace_on_table:
        return _("an ace played on a table without an ace takes every card on it (R-ACE)")
    if v == 1:
        return _(_ACE_ON_ACE[rules.ace_on_ace])
    taken = sum(cval(c.index) for c in captured)
    facts = {"card": str(card), "value": v}
    if taken == v and rules.single_match_first and len(captured) > 1 \
            and any(cval(c.index) == v for c in table):
        return _("a table card is worth %(value)s like %(card)s, so a simple capture takes a single card "
                 "(R-CHOICE, single_match_first)") % facts
    return _("%(card)s takes cards adding up to its value %(value)s (R-SIMPLE) or to %(fifteen)s, "
             "making 15 with it (R-FIFTEEN), and these add up to %(taken)s") % {
        **facts, "fifteen": 15 - v, "taken": taken}
