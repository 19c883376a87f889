"""A whole match: deals, declarations, plays, scoring, the target (sections 3-7).

The rules live in the Cython core (`_core`); this class drives it through a
match, keeps the event log (the game record), checks every move before it
reaches the core, and makes undo cheap by keeping the core's state (a small
struct) before each action.
"""
from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from . import _core, legality
from .cards import Card, cards_of, format_cards, parse_cards
from .errors import IllegalMoveError, StateError
from .events import CATEGORIES, Deal, Event, HandEnd, SideScore, Turn
from .moves import Move
from .rules import Rules
from .view import SeatView

if TYPE_CHECKING:
    from ._core import CoreFields
    from .i18n import Translations


class Phase(StrEnum):
    """Where a match stands."""
    DEAL = "deal"                   # waiting for the next round's cards (manual deals)
    PLAY = "play"
    OVER = "over"


@dataclass
class _Snapshot:
    core: _core.CoreState
    n_events: int
    scores: list[int]
    hand_number: int
    winner: int | None
    rng_state: tuple[object, ...]       # random.Random.getstate()


class Match:
    """A match of Cirulla from its first deal to its winner.

    With ``manual_deal=False`` (the default) the match deals itself, shuffled
    from ``seed``; with ``manual_deal=True`` the caller gives every round's
    cards with :meth:`deal`, as at a real table.

    >>> m = Match(Rules(), seed=1)
    >>> m.play(m.legal_moves[0])           # doctest: +ELLIPSIS
    Turn(...)
    """

    def __init__(self, rules: Rules | None = None, *, seed: int | None = None,
                 dealer: int | None = None, manual_deal: bool = False,
                 names: Sequence[str] | None = None):
        self.rules = rules if rules is not None else Rules()
        n = self.rules.players
        self._rng = random.Random(seed)
        self._rng_saved: tuple[object, ...] | None = None   # its state, kept until it draws again
        if dealer is None:
            dealer = self._rng.randrange(n)                 # R-DEALER: at random
        if not isinstance(dealer, int) or not 0 <= dealer < n:
            raise StateError(f"dealer must be a seat 0..{n - 1} (R-SEATS), got {dealer!r}")
        self.first_dealer = dealer
        self.manual_deal = manual_deal
        self.names = tuple(names) if names else tuple(f"Player {i + 1}" for i in range(n))
        if len(self.names) != n:
            raise StateError(f"{len(self.names)} names for {n} players")
        if not all(isinstance(name, str) for name in self.names):
            raise StateError(f"names are text, got {list(self.names)!r}")
        self.events: list[Event] = []
        self.scores = [0] * self.rules.n_sides
        self.hand_number = 0
        self.winner: int | None = None
        self._undo: list[_Snapshot] = []
        self._core = _core.CoreState(self.rules.core, dealer)
        self._advance()

    @classmethod
    def restore(cls, rules: Rules, fields: CoreFields, *, names: Sequence[str] | None = None) -> Match:
        """A match whose first hand stands where the core's state `fields` (as
        ``match.core.export()`` gives them) says, a move due: a position set up
        card by card, which no deal reaches directly. Later rounds are dealt by
        the caller (``manual_deal``).

        :raises StateError: if the state has no move due, or is not one a
            hand can be in (naming the first field at fault, and every problem).
        """
        problems = _core_problems(rules, fields)
        if problems:
            raise StateError("; ".join(f"{f}: {why}" for f, why in problems), field=problems[0][0])
        if fields["phase"] != _core.PHASE_PLAY:
            raise StateError(f"{fields['phase']}, but a restored match starts with a move due: "
                             f"phase {_core.PHASE_PLAY} (play)", field="phase")
        match = cls(rules, dealer=fields["dealer"], manual_deal=True, names=names)
        match._core = _core.CoreState.restore(rules.core, fields)
        return match

    # --- what the table shows ---

    @property
    def phase(self) -> Phase:
        """DEAL (waiting for cards from the caller), PLAY or OVER."""
        if self.winner is not None:
            return Phase.OVER
        return Phase.DEAL if self._core.phase == _core.PHASE_DEAL else Phase.PLAY

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def core(self) -> _core.CoreState:
        """The core's state of the hand in play, for the modules that build on it
        (the search's true world). Read it; change the match only through play
        and deal."""
        return self._core

    @property
    def side_names(self) -> list[str]:
        """Each side's name: its players' names, partners joined by " & " (R-SIDES)."""
        r = self.rules
        return [" & ".join(self.names[s] for s in range(r.players) if r.side_of(s) == side)
                for side in range(r.n_sides)]

    @property
    def to_move(self) -> int:
        return self._core.turn

    @property
    def dealer(self) -> int:
        return self._core.dealer

    @property
    def round(self) -> int:
        return self._core.round

    def hand(self, seat: int) -> list[Card]:
        return cards_of(self._core.hand(self._seat(seat)))

    def public(self, seat: int) -> list[Card]:
        """Declared cards the seat still holds (R-DECL-WHEN)."""
        return cards_of(self._core.public(self._seat(seat)))

    @property
    def table(self) -> list[Card]:
        return cards_of(self._core.table)

    def pile(self, side: int) -> list[Card]:
        return cards_of(self._core.pile(self._side(side)))

    @property
    def stock_size(self) -> int:
        return 40 - self._core.stock_pos

    @property
    def matta_as(self) -> int | None:
        """The rank the matta plays as this hand, if a declaration named it."""
        m = self.rules.matta_card
        if m is None or self._core.cval(m.index) == m.value:
            return None
        return self._core.cval(m.index) - 1

    def hand_points(self) -> list[dict[str, int]]:
        """The current hand's points so far by side and category (section 6)."""
        return [dict(zip(CATEGORIES, row, strict=False)) for row in self._core.score()]

    @property
    def legal_moves(self) -> list[Move]:
        """Every legal move of the seat to move (empty unless the phase is 'play')."""
        if self.phase is not Phase.PLAY:
            return []
        return Move.legal_in(self._core, self.rules.matta_card)

    def greedy_move(self) -> Move:
        """The greedy policy's move for the seat to move (Move.greedy_in): the
        engine's `greedy` level and the search's rollouts play it.

        :raises StateError: if no move is due.
        """
        if self.phase is not Phase.PLAY:
            raise StateError(f"no move is due: the match is in phase '{self.phase}'")
        return Move.greedy_in(self._core, self.rules.matta_card)

    # --- actions ---

    def why_illegal(self, move: Move | str, tr: Translations | None = None) -> str | None:
        """Why the seat to move cannot play `move` (or its text) now, citing the
        rule, in tr's language (cirulla.solver.i18n; English without); None if
        it can. The reason `play` would raise, without raising.

        >>> m = Match(Rules.preset("classic"), seed=7)
        >>> [str(c) for c in m.hand(m.to_move)], [str(c) for c in m.table]
        (['3S', '4S', 'QD'], ['JH', 'QS', 'KD', 'KH'])
        >>> m.why_illegal("QD x QS") is None
        True
        >>> print(m.why_illegal("QD"))
        QD: QD can capture, and capturing is mandatory (R-MUST): QD x QS

        :raises InvalidMoveError: if its text cannot be parsed.
        """
        if self.phase is not Phase.PLAY:
            return f"no move is due: the match is in phase '{self.phase}'"
        move = Move.of(move, matta=self.rules.matta_card)
        return legality.why_illegal(move, self._core, self.rules, self.legal_moves, tr)

    def play(self, move: Move | str) -> Turn:
        """Play a move (or its text) for the seat to move.

        :raises IllegalMoveError: if the rules do not allow it here, saying why
            (``why_illegal``'s reason).
        :raises InvalidMoveError: if its text cannot be parsed.
        """
        if self.phase is not Phase.PLAY:
            raise StateError(f"no move can be played: the match is in phase '{self.phase}'")
        move, legal = Move.of(move, matta=self.rules.matta_card), self.legal_moves
        try:
            move = legal[legal.index(move)]         # the legal twin carries the points
        except ValueError:
            raise IllegalMoveError(legality.why_illegal(move, self._core, self.rules, legal)
                                   or f"{move} is not among the legal moves") from None
        self._push()
        core = self._core
        seat, table_before = core.turn, core.table
        card, take, *_ = move.to_core()
        core.apply(*move.to_core())
        over = core.phase == _core.PHASE_OVER
        scopa = bool(take) and take == table_before and not over   # R-SCOPA
        turn = Turn(seat, move, scopa)
        self.events.append(turn)
        if over:
            left = (table_before & ~take) | (0 if take or card < 0 else 1 << card)
            self._finish_hand(left)
        self._advance()
        return turn

    def deal(self, hands: Sequence[Iterable[Card | str] | str], table: Iterable[Card | str] | str = ()) -> Deal:
        """Give the next round's cards (with ``manual_deal``): every seat's new
        cards by seat, and in the first round the table cards.

        :raises StateError: if no deal is due, or the cards do not fit.
        """
        if self.phase is not Phase.DEAL:
            raise StateError(f"no deal is due: the match is in phase '{self.phase}'")
        r, core = self.rules, self._core
        n = r.round_cards(core.round)
        ids = "R-DEAL" + (", R-VC" if r.cirullone else "") + (", R-V5" if r.five_players else "")
        holdings = [parse_cards(h) for h in hands]
        on_table = parse_cards(table)
        if len(holdings) != r.players:
            raise StateError(f"deal: {len(holdings)} holdings given for {r.players} players "
                             f"(every seat is dealt cards, {ids})")
        for seat, h in enumerate(holdings):
            if len(h) != n:
                raise StateError(f"deal: seat {seat} gets {n} cards this round, not {len(h)} ({ids})")
        want_table = r.table_cards if core.round == 0 else 0
        if len(on_table) != want_table:
            raise StateError(f"deal: the table gets {want_table} cards in this round, not {len(on_table)} ({ids})")
        dealt = [c for h in holdings for c in h] + on_table
        before = {Card(i) for i in _dealt_before(core)}
        seen: set[Card] = set()
        for c in dealt:
            if c in before:
                raise StateError(f"deal: {c} was dealt already in this hand "
                                 "(each of the 40 cards is dealt once a hand, R-DECK)")
            if c in seen:
                raise StateError(f"deal: {c} is dealt twice (each of the 40 cards is dealt once a hand, R-DECK)")
            seen.add(c)
        self._push()
        order = [c.index for k in range(r.players) for c in holdings[(core.dealer + 1 + k) % r.players]]
        order += [c.index for c in on_table]
        rest = [i for i in core.stock_order() if i not in set(order)]
        core.set_stock(order + rest)
        event = self._deal_from_stock()
        self._advance()
        return event

    def undo(self) -> None:
        """Take back the last move or deal (and what followed from it by itself)."""
        if not self._undo:
            raise StateError("nothing to undo")
        s = self._undo.pop()
        self._core, self.scores, self.hand_number, self.winner = s.core, s.scores, s.hand_number, s.winner
        del self.events[s.n_events:]
        self._rng.setstate(s.rng_state)
        self._rng_saved = s.rng_state

    def copy(self) -> Match:
        other = object.__new__(Match)
        other.__dict__.update(self.__dict__)
        other._rng = random.Random()
        other._rng.setstate(self._rng_state())
        other.events = list(self.events)
        other.scores = list(self.scores)
        other._undo = list(self._undo)
        other._core = self._core.copy()
        return other

    def view(self, seat: int) -> SeatView:
        """What `seat` knows (docs/rules.md section 8), and nothing more."""
        seat = self._seat(seat)
        core, r, n = self._core, self.rules, self.rules.players
        history = self._history_seen_by(seat)
        played: list[list[Card]] = [[] for _ in range(n)]
        for e in reversed(history):
            if isinstance(e, Deal):
                break
            if isinstance(e, Turn) and e.move.card is not None:     # a card play, not a declaration
                played[e.seat].append(e.move.card)
        return SeatView(
            rules=r, seat=seat, hand_number=self.hand_number, dealer=core.dealer,
            round=core.round, to_move=core.turn,
            hand=tuple(cards_of(core.hand(seat))),
            table=tuple(cards_of(core.table)),
            hand_sizes=tuple(bin(core.hand(s)).count("1") for s in range(n)),
            stock_size=40 - core.stock_pos,
            public=tuple(tuple(cards_of(core.public(s))) for s in range(n)),
            piles=tuple(tuple(cards_of(core.pile(s))) for s in range(r.n_sides)),
            scope=tuple(core.scope(s) for s in range(r.n_sides)),
            declarations=tuple(core.decl(s) for s in range(r.n_sides)),
            declared=tuple(bool(core.declared >> s & 1) for s in range(n)),
            played_this_round=tuple(tuple(p) for p in played),
            last_capturer=core.last_capturer,
            matta_as=self.matta_as,
            scores=tuple(self.scores),
            history=history,
        )

    def _history_seen_by(self, seat: int) -> tuple[Event, ...]:
        """This hand's events as `seat` saw them: the deals masked to the table
        and its own cards."""
        events: list[Event] = []
        for e in reversed(self.events):
            if isinstance(e, Deal) and e.round == 0 and not e.void and e.hand == self.hand_number:
                events.append(_masked_deal(e, seat))
                break
            if isinstance(e, HandEnd) or (isinstance(e, Deal) and e.hand != self.hand_number):
                break
            events.append(_masked_deal(e, seat) if isinstance(e, Deal) else e)
        return tuple(reversed(events))

    # --- the flow of a match ---

    def _push(self) -> None:
        self._undo.append(_Snapshot(self._core.copy(), len(self.events), list(self.scores),
                                    self.hand_number, self.winner, self._rng_state()))

    def _rng_state(self) -> tuple[object, ...]:
        """The generator's state, read once between draws: it draws once a hand,
        and reading it (625 words) at every move was a fifth of a view's replay."""
        if self._rng_saved is None:
            self._rng_saved = self._rng.getstate()
        return self._rng_saved

    def _advance(self) -> None:
        """Run what follows by itself: random deals, the end of a hand, the next hand."""
        while self.winner is None:
            phase = self._core.phase
            if phase == _core.PHASE_PLAY:
                return
            if phase == _core.PHASE_DEAL:
                if self.manual_deal:
                    return
                if self._core.round == 0:
                    self._core.shuffle(self._rng.getrandbits(64))
                    self._rng_saved = None
                self._deal_from_stock()
                continue
            # PHASE_OVER
            if self._core.instant_winner >= 0:              # R-CAPOTUN
                self.winner = self._core.instant_winner
                return
            self.hand_number += 1
            self._core = _core.CoreState(self.rules.core, (self._core.dealer + 1) % self.rules.players)

    def _deal_from_stock(self) -> Deal:
        core, r = self._core, self.rules
        n = r.round_cards(core.round)
        upcoming = core.stock_order()
        hands: list[tuple[Card, ...]] = [()] * r.players
        for k in range(r.players):
            seat = (core.dealer + 1 + k) % r.players
            hands[seat] = tuple(sorted(Card(i) for i in upcoming[k * n:(k + 1) * n]))
        table = tuple(sorted(Card(i) for i in upcoming[r.players * n:r.players * n + r.table_cards])) \
            if core.round == 0 else ()
        result = core.deal()
        event = Deal(self.hand_number, core.round, core.dealer, table, tuple(hands),
                     void=result == _core.DEAL_RESULT_VOID, dealer_scope=core.dealer_buona,
                     capotun=result == _core.DEAL_RESULT_CAPOTUN)
        self.events.append(event)
        return event

    def _finish_hand(self, left: int) -> None:
        core, r = self._core, self.rules
        rows = core.score()
        for side, row in enumerate(rows):
            self.scores[side] += sum(row)
        sides = tuple(SideScore(side, **dict(zip(CATEGORIES, row, strict=True)), match_total=self.scores[side])
                      for side, row in enumerate(rows))
        taken_by = core.last_capturer if left and core.table == 0 and core.last_capturer >= 0 else None
        cappotto = core.cappotto() if core.cappotto() >= 0 else None
        self.events.append(HandEnd(self.hand_number, tuple(cards_of(left)), taken_by, sides, cappotto))
        if cappotto is not None:                            # R-CAPPOTTO
            self.winner = cappotto
        elif r.hands is not None:                           # R-HANDS-LIMIT
            if self.hand_number + 1 >= r.hands:
                self.winner = _unique_best(self.scores)
        elif max(self.scores) >= r.target:                  # R-TARGET, R-WINNER
            self.winner = _unique_best(self.scores)

    # --- checks ---

    def _seat(self, seat: int) -> int:
        if not isinstance(seat, int) or not 0 <= seat < self.rules.players:
            raise StateError(f"seat must be 0..{self.rules.players - 1} (R-SEATS), got {seat!r}")
        return seat

    def _side(self, side: int) -> int:
        if not isinstance(side, int) or not 0 <= side < self.rules.n_sides:
            raise StateError(f"side must be 0..{self.rules.n_sides - 1} (R-SIDES), got {side!r}")
        return side


def _unique_best(scores: list[int]) -> int | None:
    best = max(scores)
    return scores.index(best) if scores.count(best) == 1 else None


def _dealt_before(core: _core.CoreState) -> list[int]:
    return core.export()["stock"][:core.stock_pos]


def _masked_deal(deal: Deal, seat: int) -> Deal:
    """A deal as `seat` saw it: the table and its own cards only."""
    return Deal(deal.hand, deal.round, deal.dealer, deal.table,
                tuple(h if s == seat else () for s, h in enumerate(deal.hands)),
                deal.void, deal.dealer_scope, deal.capotun)


def _core_problems(rules: Rules, given: CoreFields) -> list[tuple[str, str]]:
    """What makes `given` no state of a hand under `rules` (Match.restore):
    its keys and their shapes, the seats it names, and every card in exactly
    one place (a hand, the table, a pile, the stock still to deal)."""
    fields: dict[str, Any] = dict(given)
    shapes = _core.CoreState.field_shapes()
    if set(fields) != set(shapes):
        missing, unknown = sorted(set(shapes) - set(fields)), sorted(set(fields) - set(shapes))
        return [("fields", ", ".join([f"missing {', '.join(missing)}"] * bool(missing)
                                     + [f"unknown {', '.join(unknown)}"] * bool(unknown)))]
    shapeless = [(k, f"must be a list of {n} whole numbers" if n else "must be a whole number")
                 for k, n in shapes.items() if not _shaped(fields[k], n)]
    if shapeless:
        return shapeless
    all_cards = (1 << 40) - 1
    masks = [(f"{k}[{i}]", m) for k in ("hand", "public", "pile") for i, m in enumerate(fields[k])]
    outside = [(name, f"{m} is not a set of cards (a mask of 40 bits)")
               for name, m in [*masks, ("table", fields["table"])] if not 0 <= m <= all_cards]
    if outside:
        return outside
    n, sides = rules.players, rules.n_sides
    out = [(name, f"{fields[name]} is not a seat 0..{n - 1} (R-SEATS)")
           for name in ("dealer", "turn") if fields[name] not in range(n)]
    if fields["last_capturer"] not in range(-1, sides):
        out.append(("last_capturer", f"{fields['last_capturer']} is not a side 0..{sides - 1} or -1 (none)"))
    stock, pos = list(fields["stock"]), fields["stock_pos"]
    if sorted(stock) != list(range(40)):
        return out + [("stock", "is not an order of the 40 cards (their indexes 0..39)")]
    if pos not in range(41):
        return out + [("stock_pos", f"{pos} is not 0..40")]
    places = [(f"hand[{s}]", fields["hand"][s]) for s in range(n)] + [("table", fields["table"])] + \
        [(f"pile[{side}]", fields["pile"][side]) for side in range(sides)]
    placed = 0
    for name, mask in places:
        if mask & placed:
            out.append((name, f"{format_cards(cards_of(mask & placed))} placed twice"))
        placed |= mask
    undealt = sum(1 << i for i in stock[pos:])
    if undealt & placed:
        out.append(("stock_pos", f"{format_cards(cards_of(undealt & placed))} still to deal, and placed too"))
    if (placed | undealt) != all_cards:
        out.append(("stock", f"{format_cards(cards_of(all_cards & ~(placed | undealt)))} nowhere"))
    out += [(f"{name}[{i}]", f"{n} players have no such seat or side")
            for name, used in (("hand", n), ("pile", sides)) for i in range(used, shapes[name]) if fields[name][i]]
    out += [(f"public[{s}]", "declared cards not in the hand") for s in range(n)
            if fields["public"][s] & ~fields["hand"][s]]
    return out


def _shaped(value: object, length: int) -> bool:
    """A whole number (length 0), or a list of `length` of them."""
    if not length:
        return isinstance(value, int)
    return isinstance(value, (list, tuple)) and len(value) == length and all(isinstance(x, int) for x in value)
