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

from . import _core
from .cards import Card, cards_of, format_cards, parse_cards
from .errors import IllegalMoveError, StateError
from .events import CATEGORIES, Deal, Event, HandEnd, SideScore, Turn
from .moves import Move
from .rules import Rules
from .view import SeatView


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
        if dealer is None:
            dealer = self._rng.randrange(n)                 # R-DEALER: at random
        if not isinstance(dealer, int) or not 0 <= dealer < n:
            raise StateError(f"dealer must be a seat 0..{n - 1} (R-SEATS), got {dealer!r}")
        self.first_dealer = dealer
        self.manual_deal = manual_deal
        self.names = tuple(names) if names else tuple(f"Player {i + 1}" for i in range(n))
        if len(self.names) != n:
            raise StateError(f"{len(self.names)} names for {n} players")
        self.events: list[Event] = []
        self.scores = [0] * self.rules.n_sides
        self.hand_number = 0
        self.winner: int | None = None
        self._undo: list[_Snapshot] = []
        self._core = _core.CoreState(self.rules.core, dealer)
        self._advance()

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
        (a seat's view, the search's true world). Read it; change the match only
        through play and deal."""
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

    def play(self, move: Move | str) -> Turn:
        """Play a move (or its text) for the seat to move.

        :raises IllegalMoveError: if the rules do not allow it here, saying why.
        :raises InvalidMoveError: if its text cannot be parsed.
        """
        if self.phase is not Phase.PLAY:
            raise StateError(f"no move can be played: the match is in phase '{self.phase}'")
        if isinstance(move, str):
            move = Move.parse(move, matta=self.rules.matta_card)
        legal = self.legal_moves
        try:
            move = legal[legal.index(move)]         # the legal twin carries the points
        except ValueError:
            raise IllegalMoveError(self._why_illegal(move, legal)) from None
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

    def copy(self) -> Match:
        other = object.__new__(Match)
        other.__dict__.update(self.__dict__)
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other.events = list(self.events)
        other.scores = list(self.scores)
        other._undo = list(self._undo)
        other._core = self._core.copy()
        return other

    def view(self, seat: int) -> SeatView:
        """What `seat` knows (docs/rules.md section 8), and nothing more."""
        return SeatView.of(self, self._seat(seat))

    # --- the flow of a match ---

    def _push(self) -> None:
        self._undo.append(_Snapshot(self._core.copy(), len(self.events), list(self.scores),
                                    self.hand_number, self.winner, self._rng.getstate()))

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

    def _why_illegal(self, move: Move, legal: list[Move]) -> str:
        """Why `move` is not one of `legal`: the fact, the rule in a few words, its id."""
        seat, r = self.to_move, self.rules
        held = set(self.hand(seat))
        if move.card is None:                               # a declaration
            missing = (move.declared | move.declared_second) - held
            if missing:
                return (f"{move}: seat {seat} does not hold {format_cards(missing)} "
                        f"(a player declares the cards of their own holding, R-DECL-WHEN)")
            if self._core.declared >> seat & 1 or len(held) != self._core.round_cards:
                return (f"{move}: seat {seat} can declare only at its first turn of a round, "
                        "holding all its cards (R-DECL-WHEN)")
            rules = ["R-BUONA3: 3 cards adding up to 9 or less", "R-DECINO: 3 cards of one rank",
                     "R-MATTA: the matta is named only to make one"]
            if r.grande_in_hand:
                rules.append("R-V30: J Q K of diamonds")
            if r.cirullone:
                rules.append("R-VC: up to two triples of the six")
            can = [str(m) for m in legal if m.is_declaration]
            tail = f"seat {seat} can {', '.join(can)}" if can else f"seat {seat}'s cards make none"
            return f"{move}: not a declaration these cards make ({'; '.join(rules)}); {tail}"
        if move.card not in held:
            return f"{move}: seat {seat} does not hold {move.card} (a player plays a card of their own holding, R-TURN)"
        if any(m.is_declaration for m in legal) and not any(not m.is_declaration for m in legal):
            return (f"{move}: seat {seat} holds a buona and, with declarations mandatory, must declare it "
                    f"before playing (R-DECL-CHOICE): {', '.join(str(m) for m in legal)}")
        missing = move.captured - set(self.table)
        if missing:
            return f"{move}: {format_cards(missing)} not on the table (a card captures only table cards, R-MOVE)"
        options = ", ".join(str(m) for m in legal if m.card == move.card)
        if not move.captured:
            return f"{move}: {move.card} can capture, and capturing is mandatory (R-MUST): {options}"
        rule = self._capture_rule(move.card, move.captured)
        return f"{move}: not a capture the rules allow: {rule}; {move.card} can play {options}"

    def _capture_rule(self, card: Card, captured: frozenset[Card]) -> str:
        """The capture rule that `card` taking the table cards `captured` breaks."""
        cval = self._core.cval                              # the matta plays as named (R-MATTA)
        v = cval(card.index)
        ace_on_table = any(cval(c.index) == 1 for c in self.table)
        if v == 1 and not ace_on_table:
            return "an ace played on a table without an ace takes every card on it (R-ACE)"
        if v == 1:
            return {"only_ace": "an ace played on a table with an ace takes one ace and nothing else (R-ACE-ACE)",
                    "ace_or_fifteen": "an ace played on a table with an ace takes one ace, "
                                      "or cards making 15 with it (R-ACE-ACE)",
                    "sweep": "an ace played on a table with an ace takes every card on it "
                             "(R-ACE-ACE, ace_on_ace sweep)"}[self.rules.ace_on_ace]
        taken = sum(cval(c.index) for c in captured)
        if taken == v and self.rules.single_match_first and len(captured) > 1 \
                and any(cval(c.index) == v for c in self.table):
            return (f"a table card is worth {v} like {card}, so a simple capture takes a single card "
                    f"(R-CHOICE, single_match_first)")
        return (f"{card} takes cards adding up to its value {v} (R-SIMPLE) or to {15 - v}, "
                f"making 15 with it (R-FIFTEEN), and these add up to {taken}")


def _unique_best(scores: list[int]) -> int | None:
    best = max(scores)
    return scores.index(best) if scores.count(best) == 1 else None


def _dealt_before(core: _core.CoreState) -> list[int]:
    return core.export()["stock"][:core.stock_pos]

