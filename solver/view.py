"""What one seat knows (docs/rules.md section 8), and nothing more.

A SeatView is built from public facts and the seat's own cards only: it holds
no reference to the match, so another player's hidden cards cannot be read
through it. Hints are computed from views; the search fills in the hidden
cards by sampling worlds consistent with them.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import _core, legality
from .cards import RANKS, Card, cards_of, format_cards, mask_of
from .errors import StateError, ViewError, Violation
from .events import Deal, Event, Turn
from .moves import Move
from .rules import Rules

if TYPE_CHECKING:
    from ._core import CoreFields
    from .i18n import Translations


@dataclass(frozen=True)
class SeatView:
    rules: Rules
    seat: int
    hand_number: int
    dealer: int
    round: int
    to_move: int
    hand: tuple[Card, ...]                      # the seat's own cards
    table: tuple[Card, ...]
    hand_sizes: tuple[int, ...]                 # cards each seat holds
    stock_size: int
    public: tuple[tuple[Card, ...], ...]        # declared cards still held, by seat
    piles: tuple[tuple[Card, ...], ...]         # captured cards by side (perfect memory)
    scope: tuple[int, ...]                      # by side, this hand
    declarations: tuple[int, ...]               # declaration points by side, this hand
    declared: tuple[bool, ...]                  # seats that declared this round
    played_this_round: tuple[tuple[Card, ...], ...]  # by seat
    last_capturer: int                          # side, or -1 (R-LEFTOVER)
    matta_as: int | None                        # the named rank of a declared matta
    scores: tuple[int, ...]                     # match points by side
    history: tuple[Event, ...] = ()             # this hand's events as the seat saw them

    # --- derived facts ---

    @property
    def side(self) -> int:
        return self.rules.side_of(self.seat)

    def unseen(self) -> list[Card]:
        """Cards this seat cannot place: other seats' undeclared cards and the stock."""
        return cards_of(((1 << 40) - 1) & ~self._seen_mask())

    def _seen_mask(self) -> int:
        m = mask_of(self.hand) | mask_of(self.table)
        for p in self.public:
            m |= mask_of(p)
        for p in self.piles:
            m |= mask_of(p)
        for p in self.played_this_round:
            m |= mask_of(p)
        return m

    def hidden_count(self, seat: int) -> int:
        """How many of seat's cards this seat cannot see."""
        if seat == self.seat:
            return 0
        return self.hand_sizes[seat] - len(self.public[seat])

    def validate(self) -> None:
        """Check that the view is one a real table can show.

        :raises ViewError: naming every field at fault and why.
        """
        problems = self.problems()
        if problems:
            raise ViewError(problems)

    def problems(self) -> list[Violation]:
        """Every way the view differs from what a real table can show (empty: none)."""
        out = self._shape_problems()
        if out:                                 # the checks below index the per-seat rows
            return out
        return self._score_problems() + self._card_problems() + self._fact_problems()

    def _shape_problems(self) -> list[Violation]:
        r, n = self.rules, self.rules.players
        out = []
        for name in ("seat", "to_move", "dealer"):
            if not 0 <= getattr(self, name) < n:
                out.append(Violation(name, f"{getattr(self, name)} is not a seat 0..{n - 1} (R-SEATS)"))
        for name, length, of in (("hand_sizes", n, "seat"), ("public", n, "seat"), ("declared", n, "seat"),
                                 ("played_this_round", n, "seat"), ("piles", r.n_sides, "side"),
                                 ("scope", r.n_sides, "side"), ("declarations", r.n_sides, "side"),
                                 ("scores", r.n_sides, "side")):
            if len(getattr(self, name)) != length:
                out.append(Violation(name, f"{len(getattr(self, name))} entries, but {n} players make "
                                           f"{length}: one per {of} (R-SIDES)"))
        return out

    def _card_problems(self) -> list[Violation]:
        """Where the cards are and how many: each card in one place, 40 in all,
        and the counts a hand in play can show."""
        r, n = self.rules, self.rules.players
        out: list[Violation] = []
        groups = [("hand", self.hand), ("table", self.table)]
        # the seat's own declared cards are in its hand already
        groups += [(f"public[{s}]", p) for s, p in enumerate(self.public) if s != self.seat]
        groups += [(f"piles[{s}]", p) for s, p in enumerate(self.piles)]
        seen: dict[Card, str] = {}
        out += cards_in_two_places(groups, seen)
        for s, p in enumerate(self.played_this_round):
            for c in p:
                if seen.get(c, "") == "hand" or c in self.public[s]:
                    out.append(Violation(f"played_this_round[{s}]", f"{c} is still held"))
        if len(self.hand) != self.hand_sizes[self.seat]:
            out.append(Violation("hand", f"{len(self.hand)} cards, but hand_sizes[{self.seat}] is "
                                         f"{self.hand_sizes[self.seat]}"))
        if self.public[self.seat] and not set(self.public[self.seat]) <= set(self.hand):
            out.append(Violation(f"public[{self.seat}]", "declared cards not in the seat's hand"))
        for s in range(n):
            if self.hand_sizes[s] < len(self.public[s]) or not 0 <= self.hand_sizes[s] <= r.round_cards(0):
                out.append(Violation(f"hand_sizes[{s}]", f"{self.hand_sizes[s]} cards cannot be held "
                                                         f"(a round deals {r.round_cards(0)} at most, R-DEAL)"))
        if not 0 <= self.stock_size <= 40:
            out.append(Violation("stock_size", f"{self.stock_size} is not 0..40"))
        for name in ("scope", "declarations"):
            for i, v in enumerate(getattr(self, name)):
                if v < 0:
                    out.append(Violation(f"{name}[{i}]", f"{v} is negative"))
        if not -1 <= self.last_capturer < r.n_sides:
            out.append(Violation("last_capturer", f"{self.last_capturer} is not a side 0..{r.n_sides - 1}"))
        if self.matta_as is not None and r.matta_card is None:
            out.append(Violation("matta_as", "these rules have no matta (R-MATTA)"))
        if out:
            return out
        placed = len(seen) + sum(self.hidden_count(s) for s in range(n)) + self.stock_size
        if placed != 40:
            return [Violation("", f"the view accounts for {placed} cards, not 40 (R-DECK): check "
                                  "hand_sizes, stock_size, piles and table")]
        if any(self.hand_sizes):
            out = self._count_problems()
        if not out:
            try:
                self.round_plays()
                self.finished_round_plays()
            except ViewError as e:
                out = list(e.violations)
        return out

    def _fact_problems(self) -> list[Violation]:
        """What the hand's public facts forbid, each certain from the view's own
        fields (every view of a real match passes: tests/test_view_facts.py):

        * a card played this round (played_this_round) lies on the table (played
          without a capture) or in a pile (it captured, or was captured since),
          R-TURN; and it was played by one seat, once (R-DECK);
        * scope[side] <= len(piles[side]) // 2: a scopa puts the card played and
          at least one table card in the side's pile (R-SCOPA), and the dealer's
          buona 4 cards (5 with R-V5) for 1 or 2 scope (R-DEALER-BUONA); so a
          side with scope has a pile, and 2 cards at least for each scopa;
        * last_capturer names a side with a non-empty pile: its capture, or the
          dealer's buona, put cards there (R-LEFTOVER, R-DEALER-BUONA);
        * a seat showing declared cards (public) declared this round (declared):
          declared cards stay face up only until played, and a round's cards are
          all played before the next deal (R-DECL-WHEN);
        * a seat that declared this round gave its side 3 declaration points at
          least, at once (R-BUONA3, R-DECINO, R-SC-BUONE), except R-V5's naming of
          the matta in the one-card round, worth 0;
        * declarations[side] is a sum of at most T declarations of 3 or 10 points
          (13 with R-V13, 30 with R-V30), T the triples the side's seats could
          declare so far: one a seat and round (R-DECL-WHEN), two in cirullone's
          first round (R-VC), none this round for a seat with declared false;
        * matta_as is a rank (0..9); named other than as itself, the matta was
          named by a declaration (R-MATTA): some side has declaration points
          (but R-V5's 0-point naming), and the matta was shown, so it is held in
          view (the seat's hand, a public holding), on the table or in a pile,
          never unseen (R-DECL-WHEN).
        """
        r, n = self.rules, self.rules.players
        out: list[Violation] = []
        held = set(self.hand).union(*self.public)
        placed = set(self.table).union(*self.piles)
        played_by: dict[Card, int] = {}
        for s, cards in enumerate(self.played_this_round):
            for c in cards:
                if c in played_by:
                    out.append(Violation(f"played_this_round[{s}]", f"{c} is also in played_this_round"
                                                                    f"[{played_by[c]}]: a card is played "
                                                                    "once, by one seat (R-DECK, R-TURN)"))
                    continue
                played_by[c] = s
                if c not in placed and c not in self.hand and c not in self.public[s]:   # ("still held")
                    out.append(Violation(f"played_this_round[{s}]", f"{c} was played this round, so it "
                                         "lies on the table (played without a capture) or in a pile (it "
                                         "captured, or was captured since) (R-TURN), and it is in neither"))
        for side in range(r.n_sides):
            scope, taken = self.scope[side], len(self.piles[side])
            if 2 * scope > taken:
                out.append(Violation(f"scope[{side}]", f"{scope} scope, but side {side} has taken {taken} "
                                     f"cards: each scopa puts 2 cards at least in the side's pile, the card "
                                     "played and the table's last (R-SCOPA), the dealer's buona "
                                     f"{r.table_cards} for 1 or 2 (R-DEALER-BUONA), so {scope} scope need "
                                     f"{2 * scope} cards"))
        last = self.last_capturer
        if 0 <= last < r.n_sides and not self.piles[last]:
            out.append(Violation("last_capturer", f"side {last} captured last, but its pile is empty: a "
                                                  "capture, or the dealer's buona, puts cards in the pile "
                                                  "(R-LEFTOVER, R-DEALER-BUONA)"))
        zero_naming = r.five_players and r.round_cards(self.round) == 1 and self.matta_as in (0, 1, 2)   # R-V5
        for s in range(n):
            side = r.side_of(s)
            if self.public[s] and not self.declared[s]:
                out.append(Violation(f"declared[{s}]", f"false, but seat {s} shows declared cards "
                                     f"({format_cards(self.public[s])}): declared cards stay face up until "
                                     "played, so it declared this round (R-DECL-WHEN)"))
            if (self.declared[s] or self.public[s]) and self.declarations[side] == 0 and not zero_naming:
                field = f"declared[{s}]" if self.declared[s] else f"public[{s}]"
                out.append(Violation(field, f"seat {s} declared this round, but side {side} has no "
                                            "declaration points: a declaration scores 3 points at least, "
                                            "at once (R-DECL-WHEN, R-BUONA3, R-SC-BUONE)"))
        for side in range(r.n_sides):
            points = self.declarations[side]
            values, most = self._declaration_values(), self._declarable(side)
            if points > 0 and not _is_sum(points, values, most):
                out.append(Violation(f"declarations[{side}]", f"{points} points cannot be made of at most "
                                     f"{most} declaration{'s' if most != 1 else ''} worth "
                                     f"{' or '.join(map(str, values))} each (R-BUONA3, R-DECINO"
                                     + (", R-V13" if r.buona_stack else "") + (", R-V30" if r.grande_in_hand else "")
                                     + f"): side {side}'s seats declare once a round at most (R-DECL-WHEN"
                                     + (", two triples in the first, R-VC" if r.cirullone else "")
                                     + "), and this round only the seats with declared true"))
        out += self._matta_problems(held | placed, zero_naming)
        return out

    def _declaration_values(self) -> list[int]:
        """What one declared triple can score (R-BUONA3, R-DECINO, R-V13, R-V30)."""
        r = self.rules
        return [3, 10] + ([13] if r.buona_stack else []) + ([30] if r.grande_in_hand else [])

    def _declarable(self, side: int) -> int:
        """How many triples the seats of `side` can have declared this hand so far."""
        r = self.rules
        triples = [2 if r.cirullone and k == 0 else 1 for k in range(self.round + 1)]     # R-VC
        return sum(sum(triples[:-1]) + (triples[-1] if self.declared[s] or self.public[s] else 0)
                   for s in range(r.players) if r.side_of(s) == side)

    def _matta_problems(self, seen: set[Card], zero_naming: bool) -> list[Violation]:
        r, named = self.rules, self.matta_as
        matta = r.matta_card
        if named is None or matta is None:      # (a matta_as without a matta: _card_problems)
            return []
        if not 0 <= named < 10:
            return [Violation("matta_as", f"{named} is not a rank 0..9 (R-CODE)")]
        if named == matta.rank:                 # named as itself: not named (section 12)
            return []
        out = []
        if not any(self.declarations) and not zero_naming:
            out.append(Violation("matta_as", f"the matta {matta} plays as {RANKS[named]}, but no side has "
                                             "declaration points: only a declaration names it, and scores 3 "
                                             "points at least (R-MATTA, R-SC-BUONE)"))
        if matta not in seen:
            out.append(Violation("matta_as", f"the matta {matta} plays as {RANKS[named]}, so a declaration "
                                             "showed it (R-MATTA, R-DECL-WHEN), yet the view does not place "
                                             "it: it is held face up until played (the hand, public), then on "
                                             "the table or in a pile"))
        return out

    def _score_problems(self) -> list[Violation]:
        """A match that is over has no view to ask about (R-TARGET, R-WINNER,
        R-HANDS-LIMIT): a side alone at the top at or past the end."""
        r, scores = self.rules, self.scores
        out = [Violation(f"scores[{i}]", f"{v} is negative") for i, v in enumerate(scores) if v < 0]
        top = max(scores)
        if scores.count(top) > 1:
            return out                          # a tie at the top plays on
        side = scores.index(top)
        if r.hands is not None and self.hand_number >= r.hands:
            return out + [Violation("hand_number", f"hand {self.hand_number + 1} of a match of {r.hands} hands, "
                                             f"and side {side} leads: the match is over (R-HANDS-LIMIT)")]
        if r.hands is None and top >= r.target:
            return out + [Violation(f"scores[{side}]", f"{top} points reach the target {r.target}, and "
                                                       f"no side ties side {side}: the match is over "
                                                       "(R-TARGET, R-WINNER)")]
        return out

    def _count_problems(self) -> list[Violation]:
        """The counts a hand in play can show (R-DEAL, R-VC, R-V5: cards per
        round; R-DEALER, R-SEATS: seats play in turn from the dealer's left).
        The core trusts them: a stock or a holding of the wrong size would make
        a search deal past the deck or wait for a card nobody holds."""
        r, n = self.rules, self.rules.players
        stock = stock_after(r, self.round)
        if stock < 0:
            return [Violation("round", f"a hand of {n} players has no round {self.round} (R-DEAL)")]
        out = []
        if self.stock_size != stock:
            out.append(Violation("stock_size", f"{self.stock_size} cards, but after the deal of round "
                                               f"{self.round} the stock holds {stock} (R-DEAL)"))
        dealt = r.round_cards(self.round)
        held = self.hand_sizes[self.to_move]
        if not 1 <= held <= dealt:
            return out + [Violation(f"hand_sizes[{self.to_move}]", f"the seat to move holds {held} cards; "
                                                                   f"this round deals {dealt} (R-DEAL)")]
        for s, want in enumerate(hand_sizes_at(r, self.dealer, self.to_move, held)):
            if s != self.to_move and self.hand_sizes[s] != want:
                out.append(Violation(f"hand_sizes[{s}]", f"{self.hand_sizes[s]} cards, but with seat {self.to_move} "
                                                         f"to move after dealer {self.dealer} it holds {want} "
                                                         "(R-DEALER, R-SEATS)"))
            elif len(self.played_this_round[s]) != dealt - self.hand_sizes[s]:
                out.append(Violation(f"played_this_round[{s}]",
                                     f"{len(self.played_this_round[s])} cards, but seat {s} got {dealt} this "
                                     f"round and holds {self.hand_sizes[s]}: name the cards it played"))
        return out

    def round_plays(self) -> list[tuple[int, int, int, Move]]:
        """The card plays of this round in the history, in order, each as
        (history index, seat, the table before it as a mask, the move): the
        tables rebuilt backwards from today's. Empty without a history.

        :raises ViewError: if the history's plays this round do not fit the
            table or played_this_round.
        """
        last_deal = max((i for i, e in enumerate(self.history) if isinstance(e, Deal)), default=-1)
        if last_deal < 0:
            return []
        turns = [(i, e, e.move.card) for i, e in enumerate(self.history)      # the card plays
                 if i > last_deal and isinstance(e, Turn) and e.move.card is not None]
        for s in range(self.rules.players):
            cards = sorted(card.index for _, e, card in turns if e.seat == s)
            if s < len(self.played_this_round) and cards != sorted(c.index for c in self.played_this_round[s]):
                raise ViewError([("history", f"seat {s}'s card plays since the last deal "
                                             f"({format_cards(Card(c) for c in cards) or 'none'}) are not "
                                             f"played_this_round[{s}]")])
        return self._with_tables(turns)

    def _with_tables(self, turns: list[tuple[int, Turn, Card]]) -> list[tuple[int, int, int, Move]]:
        """Card plays (history index, turn, card), the latest last, as
        (history index, seat, the table before it, the move): the tables
        rebuilt backwards from today's."""
        tables = tables_before(self.table, [(i, e.move, card) for i, e, card in turns])
        return [(i, e.seat, table, e.move) for (i, e, _), table in zip(turns, tables, strict=True)]

    def finished_round_plays(self) -> list[list[tuple[int, int, int, Move]]]:
        """The card plays of this hand's finished rounds in the history, round
        by round (the earliest first), each play as round_plays gives it: the
        whole holding of every seat is known there (it played it all). The
        rounds are counted back from this one's plays; one the history holds
        only part of is left out.

        :raises ViewError: if a play does not fit the tables rebuilt backwards.
        """
        rows = self._with_tables([(i, e, e.move.card) for i, e in enumerate(self.history)
                                  if isinstance(e, Turn) and e.move.card is not None])
        del rows[len(rows) - sum(len(p) for p in self.played_this_round):]     # this round's
        out = []
        for rnd in range(self.round - 1, -1, -1):
            size = self.rules.players * self.rules.round_cards(rnd)
            if len(rows) < size:
                break
            out.append(rows[len(rows) - size:])
            del rows[len(rows) - size:]
        return out[::-1]

    # --- the view as the core's state ---

    def core_fields(self) -> CoreFields:
        """The view as the core's State fields (see _core.pxd), for a search to
        fill in: other seats hold only their public cards, and the unseen cards
        come last in the stock array, after every card this seat has seen."""
        r, n = self.rules, self.rules.players
        unseen = [c.index for c in self.unseen()]
        hidden = set(unseen)
        cval = [i % 10 + 1 for i in range(40)]                 # R-VALUE
        matta = r.matta_card
        if self.matta_as is not None and matta is not None:     # (without a matta: a view problem)
            cval[matta.index] = self.matta_as + 1               # R-MATTA: plays as named
        low = [0] * n
        if r.five_players and self.round == 2:                  # R-V5: the 1-card round
            for s, cards in enumerate(self.played_this_round):
                for c in cards:
                    low[s] = cval[c.index]
        dealer_buona = next((e.dealer_scope for e in self.history
                             if isinstance(e, Deal) and e.round == 0 and not e.void), 0)
        hands = [mask_of(self.hand) if s == self.seat else mask_of(self.public[s]) for s in range(n)]
        return dict(
            hand=_pad(hands), public=_pad([mask_of(p) for p in self.public]),
            pile=_pad([mask_of(p) for p in self.piles]), table=mask_of(self.table),
            stock=[i for i in range(40) if i not in hidden] + unseen, stock_pos=40 - self.stock_size,
            cval=cval, scope=_pad(list(self.scope)), decl=_pad(list(self.declarations)),
            low_card=_pad(low), dealer=self.dealer, turn=self.to_move,
            last_capturer=self.last_capturer, round=self.round, round_cards=r.round_cards(self.round),
            declared=sum(1 << s for s in range(n) if self.declared[s]),
            phase=_core.PHASE_PLAY, dealer_buona=dealer_buona, instant_winner=-1)

    def legal_moves(self) -> list[Move]:
        """The legal moves of this seat, which must be the seat to move: they
        depend only on what it sees (its own cards, the table, the counts), so
        the core is asked on one world consistent with the view.

        :raises StateError: if another seat is to move, or this one has no card.
        """
        self._check_to_move()
        return Move.legal_in(self.core_world(), self.rules.matta_card)

    def greedy_move(self) -> Move:
        """The greedy policy's move for this seat, the seat to move (Move.greedy_in)."""
        self._check_to_move()
        return Move.greedy_in(self.core_world(), self.rules.matta_card)

    def why_illegal(self, move: Move | str, tr: Translations | None = None) -> str | None:
        """Why this seat cannot play `move` (or its text) now, citing the rule,
        in tr's language (English without); None if it can: Match.why_illegal's
        reason, from what the seat sees.

        >>> from cirulla.solver import Match
        >>> view = Match(Rules.preset("classic"), seed=7).view(0)
        >>> view.why_illegal("3S") is None
        True
        >>> print(view.why_illegal("5C"))
        5C: seat 0 does not hold 5C (a player plays a card of their own holding, R-TURN)

        :raises InvalidMoveError: if its text cannot be parsed.
        """
        no_move = self._why_no_move()
        if no_move is not None:
            return no_move[1]
        matta = self.rules.matta_card
        world = self.core_world()
        return legality.why_illegal(Move.of(move, matta=matta), world, self.rules, Move.legal_in(world, matta), tr)

    def _check_to_move(self) -> None:
        no_move = self._why_no_move()
        if no_move is not None:
            field, reason = no_move
            raise StateError(reason, field=field)

    def _why_no_move(self) -> tuple[str, str] | None:
        """(the field at fault, why) if this seat has no move to make."""
        if self.to_move != self.seat:
            return "to_move", (f"seat {self.to_move} is to move, not the view's seat {self.seat}: only the seat "
                               "to move has moves (R-TURN)")
        if not self.hand:
            return "hand", f"seat {self.seat} has no card to play"
        return None

    def core_world(self) -> _core.CoreState:
        """One core state this view could be a view of, the unseen cards placed
        in a fixed arbitrary way: enough for what depends only on what the seat
        sees (its legal moves, the greedy move). The view must be validated."""
        fields = self.core_fields()
        unseen = fields["stock"][40 - len(self.unseen()):]   # hands' hidden cards first, then the stock
        k = 0
        for s in range(self.rules.players):
            if s != self.seat:
                for i in unseen[k:k + self.hidden_count(s)]:
                    fields["hand"][s] |= 1 << i
                k += self.hidden_count(s)
        return _core.CoreState.restore(self.rules.core, fields)

    def __str__(self) -> str:
        return (f"seat {self.seat}: hand {format_cards(self.hand)} | table {format_cards(self.table)}"
                f" | stock {self.stock_size} | to move {self.to_move}")


def cards_in_two_places(groups: Iterable[tuple[str, Iterable[Card]]],
                        seen: dict[Card, str] | None = None) -> list[Violation]:
    """A violation for each card met in a second group (R-DECK: each card is in
    one place); `seen` records where each card was met first."""
    seen = {} if seen is None else seen
    out = []
    for name, cards in groups:
        for c in cards:
            if c in seen:
                out.append(Violation(name, f"{c} is also in {seen[c]}"))
            seen.setdefault(c, name)
    return out


def tables_before(table: Iterable[Card], plays: Sequence[tuple[int, Move, Card]]) -> list[int]:
    """The table (as a mask) each card play found, rebuilt backwards from
    `table`, the one after the last: a capture took its cards off the table, a
    card played without one stayed there. `plays` are (history index, move,
    its card).

    :raises ViewError: naming the first play, from the last, that the table
        after it cannot have followed.
    """
    t, out = mask_of(table), []
    for i, move, played in reversed(plays):
        card, take = 1 << played.index, mask_of(move.captured)
        if (take and t & (take | card)) or (not take and not t & card):
            raise ViewError([(f"history[{i}].turn.move", f"{move} does not fit the table after it "
                                                         f"({format_cards(cards_of(t)) or 'empty'})")])
        t = t | take if take else t & ~card
        out.append(t)
    return out[::-1]


def stock_after(rules: Rules, rnd: int) -> int:
    """Cards left in the stock after the deal of round `rnd` (R-DEAL, R-VC, R-V5);
    negative: a hand has no such round."""
    if not 0 <= rnd < 40:                       # every round deals a card at least
        return -1
    return 40 - rules.table_cards - rules.players * sum(rules.round_cards(k) for k in range(rnd + 1))


def hand_sizes_at(rules: Rules, dealer: int, to_move: int, held: int) -> list[int]:
    """Every seat's card count in a round where `to_move`, holding `held`, is
    to move: the seats before it this round (from the dealer's left, R-DEALER)
    have played once more."""
    n = rules.players
    first = (dealer + 1) % n
    turn = (to_move - first) % n
    return [held - 1 if (s - first) % n < turn else held for s in range(n)]


def _is_sum(total: int, values: Sequence[int], most: int) -> bool:
    """Whether `total` is a sum of at most `most` of `values` (with repeats)."""
    sums = {0}
    for _ in range(most):
        sums |= {t + v for t in sums for v in values if t + v <= total}
        if total in sums:
            return True
    return total in sums


def _pad(values: list[int], n: int = 5) -> list[int]:
    """Per-seat rows padded to the core's MAX_SEATS."""
    return list(values) + [0] * (n - len(values))
