"""Moves and their text form: `7C x 2C 5S`, `7C`, `declare 2S 5C 7H=A` (R-MOVE)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .cards import RANKS, Card, cards_of, format_cards, mask_of, ordered, parse_cards, sort_key
from .errors import CirullaError, InvalidMoveError

if TYPE_CHECKING:
    from ._core import CoreMove, CoreState

SEVEN_OF_HEARTS = Card.parse("7H")          # the usual matta (R-MATTA)
MEMO_TEXT = 80                              # the longest move text Move.parse remembers


@dataclass(frozen=True)
class Move:
    """A card played and the set it takes (R-MOVE), or a declaration (R-DECL-*).

    Two ways of taking the same set are one move; the same value in another
    suit is another move. A declaration names its cards, the matta's rank if
    it is named (R-MATTA-CHOICE), and (R-VC) a second triple.
    """

    card: Card | None = None
    captured: frozenset[Card] = frozenset()
    declared: frozenset[Card] = frozenset()
    declared_second: frozenset[Card] = frozenset()
    matta_as: int | None = None                    # rank 0..9 the matta is named
    matta: Card | None = None                      # the matta, when it is named
    points: int = field(default=0, compare=False)  # a declaration's points

    def __post_init__(self) -> None:
        # R-VC: two triples declared in either order are one declaration, so
        # keep them in one order (the triple with the lowest card first)
        if self.declared and self.declared_second and \
                min(map(sort_key, self.declared_second)) < min(map(sort_key, self.declared)):
            first, second = self.declared_second, self.declared
            object.__setattr__(self, "declared", first)
            object.__setattr__(self, "declared_second", second)

    @property
    def is_declaration(self) -> bool:
        return self.card is None

    @property
    def is_capture(self) -> bool:
        return bool(self.captured)

    @classmethod
    def of(cls, move: Move | str, *, matta: Card | None = SEVEN_OF_HEARTS) -> Move:
        """`move` itself, or the move its text names (`parse`)."""
        return move if isinstance(move, Move) else cls.parse(move, matta=matta)

    @classmethod
    def parse(cls, text: str, *, matta: Card | None = SEVEN_OF_HEARTS) -> Move:
        """Parse a move's text form; raises InvalidMoveError saying what is wrong."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidMoveError(f"a move is text like '7C x 2C 5S', got {text!r}")
        # a record's moves are read again and again (each view replays them): a
        # memo of the texts, the short ones a move has (not a client's long strings)
        return cls._remembered(text, matta) if len(text) <= MEMO_TEXT else cls._read(text, matta)

    @classmethod
    @functools.lru_cache(maxsize=4096)
    def _remembered(cls, text: str, matta: Card | None) -> Move:
        return cls._read(text, matta)

    @classmethod
    def _read(cls, text: str, matta: Card | None) -> Move:
        words = text.strip()
        try:
            if words.lower().startswith("declare"):
                return cls._parse_declaration(words[len("declare"):], matta)
            played, *taken_part = re.split(r"\s+[xX]\s+", words, maxsplit=1)
            sep, taken = bool(taken_part), taken_part[0] if taken_part else ""
            card = parse_cards(played)
            if len(card) != 1:
                raise InvalidMoveError(f"{text!r}: play one card, then ' x ' and the cards it takes")
            captured = parse_cards(taken) if sep else []
            if sep and not captured:
                raise InvalidMoveError(f"{text!r}: nothing after ' x '")
            if len(set(captured)) != len(captured) or card[0] in captured:
                raise InvalidMoveError(f"{text!r}: a card appears twice")
            return cls(card=card[0], captured=frozenset(captured))
        except InvalidMoveError:
            raise
        except CirullaError as e:               # a card's error, named by the move unless it is the card's own text
            where = f"{text!r}: "
            raise InvalidMoveError(str(e) if str(e).startswith(where) else where + str(e)) from None

    @classmethod
    def _parse_declaration(cls, rest: str, matta: Card | None) -> Move:
        triples: list[list[Card]] = []
        matta_as = None
        for part in rest.split("+"):
            cards = []
            for word in part.replace(",", " ").split():
                name, eq, rank = word.partition("=")
                card = Card.parse(name)
                if eq:
                    if matta is None:
                        raise InvalidMoveError(f"{word!r}: only the matta can be named, "
                                               "and these rules have none (R-MATTA)")
                    if card != matta:
                        raise InvalidMoveError(f"only the matta ({matta}) can be named, not {card} (R-MATTA)")
                    if len(rank) != 1 or rank.upper() not in RANKS:
                        raise InvalidMoveError(f"{word!r}: name the matta as one of {' '.join(RANKS)} (R-MATTA)")
                    matta_as = RANKS.index(rank.upper())
                    if matta_as == card.rank:
                        matta_as = None            # named as itself: not named
                cards.append(card)
            triples.append(cards)
        if not 1 <= len(triples) <= 2 or not triples[0]:
            raise InvalidMoveError("declare one or two groups of cards (two only with cirullone, R-VC), "
                                  "e.g. 'declare 2S 5C 7H=A'")
        every = [c for t in triples for c in t]
        if len(set(every)) != len(every):
            raise InvalidMoveError("a card appears twice in the declaration")
        return cls(declared=frozenset(triples[0]),
                   declared_second=frozenset(triples[1]) if len(triples) == 2 else frozenset(),
                   matta_as=matta_as, matta=matta if matta_as is not None else None)

    def __str__(self) -> str:
        if self.card is not None:
            if not self.captured:
                return str(self.card)
            return f"{self.card} x {format_cards(self.captured)}"
        groups = [self.declared] + ([self.declared_second] if self.declared_second else [])

        def shown(c: Card) -> str:          # the matta with the rank it is named
            if c == self.matta and self.matta_as is not None:
                return f"{c}={RANKS[self.matta_as]}"
            return str(c)
        return "declare " + " + ".join(" ".join(shown(c) for c in ordered(g)) for g in groups)

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    # --- the core's encoding: (card, take, take2, matta_rank, points) ---

    def to_core(self) -> CoreMove:
        if self.card is not None:
            return (self.card.index, mask_of(self.captured), 0, -1, 0)
        return (-1, mask_of(self.declared), mask_of(self.declared_second),
                -1 if self.matta_as is None else self.matta_as, self.points)

    @classmethod
    def legal_in(cls, core: CoreState, matta: Card | None) -> list[Move]:
        """The legal moves of the seat to move in a core state (_core.CoreState)."""
        return [cls.from_core(t, matta) for t in core.legal_moves()]

    @classmethod
    def greedy_in(cls, core: CoreState, matta: Card | None) -> Move:
        """The core's greedy policy in a core state: the best immediate gain
        (the cards' scoring worth and a scopa, less the risk of leaving a
        sweepable table; ties to the lower card). It reads the seat's own cards,
        the table and the counts, nothing hidden."""
        moves = core.legal_moves()
        return cls.from_core(moves[core.greedy_choice(moves)], matta)

    @classmethod
    @functools.lru_cache(maxsize=8192)      # a position's legal moves, made again at every replay of it
    def from_core(cls, t: CoreMove, matta: Card | None) -> Move:
        card, take, take2, rank, points = t
        if card >= 0:
            return cls(card=Card(card), captured=frozenset(cards_of(take)))
        return cls(declared=frozenset(cards_of(take)), declared_second=frozenset(cards_of(take2)),
                   matta_as=None if rank < 0 else rank, matta=None if rank < 0 else matta,
                   points=points)
