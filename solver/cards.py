"""Cards and their text form (R-CODE, R-VALUE, R-PRIM)."""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

from .errors import InvalidCardError

RANKS = "A234567JQK"
SUITS = "DHCS"                      # R-SUITS: diamonds, hearts, clubs, spades
SUIT_SYMBOLS = "♦♥♣♠"
SUIT_NAMES = ("diamonds", "hearts", "clubs", "spades")
PRIMIERA = (16, 12, 13, 14, 15, 18, 21, 10, 10, 10)   # R-PRIM by rank
# a card's code in running text (a move's text form, a reason: "7C x 2C 5S"), for
# the pages and the terminal to draw it as a card
CARD_CODE = re.compile(rf"\b([{RANKS}])([{SUITS}])(?![A-Za-z])")


class Card:
    """One of the 40 cards; there is exactly one instance of each.

    >>> Card.parse("7d")
    Card.parse('7D')
    """

    __slots__ = ("index",)
    _all: list[Card] = []

    index: int                     # suit * 10 + rank: the core's card number

    def __new__(cls, index: int) -> Card:
        if cls._all:
            if not isinstance(index, int) or not 0 <= index < 40:
                raise InvalidCardError(f"card index must be 0..39, got {index!r}")
            return cls._all[index]
        return super().__new__(cls)

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse `7D`, `7d` or `7♦` (R-CODE); raises InvalidCardError."""
        if not isinstance(text, str):
            raise InvalidCardError(f"a card is text like '7D', got {text!r}")
        card = _SPELLED.get(text)       # (a view's replay parses a hundred cards)
        if card is not None:
            return card
        t = text.strip().upper()
        if len(t) != 2:
            raise InvalidCardError(f"{text!r} is not a card: write rank then suit, like '7D'")
        rank = RANKS.find(t[0])
        suit = SUITS.find(t[1])
        if suit < 0:
            suit = SUIT_SYMBOLS.find(t[1])
        if rank < 0:
            raise InvalidCardError(f"{text!r}: unknown rank {t[0]!r} (ranks are {' '.join(RANKS)})")
        if suit < 0:
            raise InvalidCardError(f"{text!r}: unknown suit {t[1]!r} (suits are D H C S or ♦♥♣♠)")
        return cls._all[suit * 10 + rank]

    @property
    def rank(self) -> int:
        """0..9 for A 2 3 4 5 6 7 J Q K."""
        return self.index % 10

    @property
    def suit(self) -> int:
        """0..3 for D H C S."""
        return self.index // 10

    @property
    def value(self) -> int:
        """Capture value (R-VALUE): A=1 .. 7=7, J=8, Q=9, K=10."""
        return self.rank + 1

    @property
    def primiera(self) -> int:
        return PRIMIERA[self.rank]

    @property
    def symbol(self) -> str:
        """The card with its suit symbol, e.g. 7♦."""
        return RANKS[self.rank] + SUIT_SYMBOLS[self.suit]

    def __str__(self) -> str:
        return RANKS[self.rank] + SUITS[self.suit]

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __lt__(self, other: Card) -> bool:
        return sort_key(self) < sort_key(other)

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (self.index,))


for _i in range(40):
    _c = object.__new__(Card)
    _c.index = _i
    Card._all.append(_c)

DECK: tuple[Card, ...] = tuple(Card._all)
# every card's usual spellings: 7D, 7d, 7♦
_SPELLED: dict[str, Card] = {f"{RANKS[c.rank]}{s}": c for c in DECK
                                for s in (SUITS[c.suit], SUITS[c.suit].lower(), SUIT_SYMBOLS[c.suit])}


def sort_key(card: Card) -> tuple[int, int]:
    """Canonical order for printing: by rank, then suit."""
    return (card.rank, card.suit)


def ordered(cards: Iterable[Card]) -> list[Card]:
    """The cards in the one order every text names them (a move's, a reason's,
    a record's): by rank, then suit, whatever order a set iterates in.

    >>> ordered(Card.parse(c) for c in ("QH", "2H", "AD"))
    [Card.parse('AD'), Card.parse('2H'), Card.parse('QH')]
    """
    return sorted(cards, key=sort_key)


def to_card(card: Card | str) -> Card:
    return card if isinstance(card, Card) else Card.parse(card)


def card_codes(text: str) -> list[str]:
    """The codes of a text of cards: `"2C 5S"` or `"2C,5S"`."""
    return text.replace(",", " ").split()


def parse_cards(text: str | Iterable[Card | str]) -> list[Card]:
    """`"2C 5S"`, `"2C,5S"` or a sequence of cards or texts."""
    if isinstance(text, str):
        return [Card.parse(t) for t in card_codes(text)]
    return [to_card(c) for c in text]


def mask_of(cards: Iterable[Card]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c.index
    return m


def cards_of(mask: int) -> list[Card]:
    """The cards of a core mask in canonical order."""
    return list(_cards_in(mask))


@functools.lru_cache(maxsize=8192)          # the same hands and tables, read again at every replay of a record
def _cards_in(mask: int) -> tuple[Card, ...]:
    return tuple(ordered(DECK[i] for i in _bits(mask)))


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def format_cards(cards: Iterable[Card]) -> str:
    """The cards' text, in order: `AD 2H QH`."""
    return " ".join(str(c) for c in ordered(cards))
