"""A SeatView from what a client app knows, with the rest filled in by the rules.

A client tracks its own seat, the dealer, its hand, the table, the scores and
the plays it saw this hand. Everything else a view holds (the cards each seat
holds, the stock, the piles, the scope, the declarations, who captured last,
the round) follows from those by the rules, so the client may leave it out:

* with the hand's **history** (its plays in order from the hand's first,
  declarations included; a ``Deal`` of round 0 is needed only when the
  dealer's buona took the table), the hand is replayed through the rules on
  one world consistent with what the seat saw, and every left-out field is
  read off it; every field the client did give is checked against it;
* without one, the counts follow from the round, the dealer and the seat to
  move (``hand_sizes_at``), and the per-seat rows of a fresh round are used
  (nothing played, declared or captured; but a seat showing declared cards in
  ``public`` declared this round).

Every problem is collected and raised at once as a ViewError, each naming the
field at fault (``hand_sizes[1]``, ``history[3].turn.move``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

from .cards import Card, card_codes, cards_of, format_cards, mask_of, to_card
from .errors import CirullaError, ViewError, Violation
from .events import Deal, Event, HandEnd, Turn
from .match import Match, Phase
from .rules import Rules
from .view import SeatView, cards_in_two_places, hand_sizes_at, stock_after, tables_before

Cards: TypeAlias = Sequence[Card]
CardsGiven: TypeAlias = Sequence[Card | str] | str     # cards or their codes, as a caller gives them: "7D 2C"
Row: TypeAlias = tuple[tuple[Card, ...], ...]      # cards by seat or by side
_Play: TypeAlias = tuple[int, Turn, Card]           # a card play: its index in the history, its turn, the card
T = TypeVar("T")

MAX_HAND_NUMBER = 1000          # beyond it a number cannot come from a real match


def build_view(rules: Rules, *, seat: int, dealer: int, hand: CardsGiven, table: CardsGiven,
               to_move: int | None = None, scores: Sequence[int] | None = None,
               history: Sequence[Deal | Turn | HandEnd] = (), hand_number: int = 0,
               round: int | None = None, hand_sizes: Sequence[int] | None = None,
               stock_size: int | None = None, public: Sequence[CardsGiven] | None = None,
               piles: Sequence[CardsGiven] | None = None, scope: Sequence[int] | None = None,
               declarations: Sequence[int] | None = None, declared: Sequence[bool] | None = None,
               played_this_round: Sequence[CardsGiven] | None = None, last_capturer: int | None = None,
               matta_as: int | None = None, known_problems: Sequence[tuple[str, str]] = ()) -> SeatView:
    """The checked view of `seat`; None (or an empty row) means "left out: fill it in".
    Cards are Card objects or their codes ("7D", or a text of them: "7D 2C").

    `known_problems` are those the caller found reading its input (an unknown
    card), as (field, reason): with any, only the checks that need no cards
    run, and every problem is raised together.

    :raises ViewError: naming every field at fault.
    """
    sides = rules.n_sides
    unread: list[Violation] = []                # codes that name no card
    in_hand, on_table = _read("hand", hand, unread), _read("table", table, unread)
    given = _Given(to_move=to_move, round=round or None, hand_sizes=_row(hand_sizes),
                   stock_size=stock_size or None, public=_read_row("public", public, unread),
                   piles=_read_row("piles", piles, unread), scope=_row(scope), declarations=_row(declarations),
                   declared=_row(declared), played_this_round=_read_row("played_this_round", played_this_round, unread),
                   last_capturer=last_capturer, matta_as=matta_as)
    scores = tuple(scores) if scores else (0,) * sides
    problems = [Violation(*p) for p in known_problems] + unread + _shape(
        rules, given, seat=seat, dealer=dealer, hand=in_hand, table=on_table, scores=scores, history=history,
        hand_number=hand_number)
    if problems:
        raise ViewError(_unique(problems))
    complete_history = any(isinstance(e, Deal) and e.round == 0 for e in history)
    if given.hand_sizes is None or complete_history:
        view = _replayed(rules, seat, dealer, in_hand, on_table, tuple(history))
        view = dataclasses.replace(view, scores=scores, hand_number=hand_number, history=tuple(
            dataclasses.replace(e, hand=hand_number) if isinstance(e, Deal) else e for e in view.history))
        problems = _differences(view, given, on_table)
    else:
        view = _fresh_round(rules, seat, dealer, in_hand, on_table, tuple(history), scores, hand_number, given)
        problems = []
    problems += view.problems()
    if problems:
        raise ViewError(_unique(problems))
    return view


@dataclass(frozen=True)
class _Given:
    """The fields of a view the client may leave out, as it gave them; None: left out."""
    to_move: int | None
    round: int | None
    hand_sizes: tuple[int, ...] | None
    stock_size: int | None
    public: Row | None
    piles: Row | None
    scope: tuple[int, ...] | None
    declarations: tuple[int, ...] | None
    declared: tuple[bool, ...] | None
    played_this_round: Row | None
    last_capturer: int | None
    matta_as: int | None


def _read(field: str, cards: CardsGiven | None, problems: list[Violation]) -> tuple[Card, ...]:
    """`cards`, each given as a Card or its code (a text of codes too:
    "7D 2C"); a code that names no card is a problem of its field, left out."""
    if cards is None:
        return ()
    if isinstance(cards, str):
        items: Sequence[Card | str] = card_codes(cards)
        where = [field] * len(items)
    else:
        items = cards
        where = [f"{field}[{i}]" for i in range(len(items))]
    out = []
    for at, item in zip(where, items, strict=True):
        try:
            out.append(to_card(item))
        except CirullaError as e:
            problems.append(Violation(at, e.reason))
    return tuple(out)


def _row(values: Sequence[T] | None) -> tuple[T, ...] | None:
    return tuple(values) if values else None


def _read_row(field: str, row: Sequence[CardsGiven] | None, problems: list[Violation]) -> Row | None:
    """A row of cards by seat or side, each read as _read reads them."""
    return tuple(_read(f"{field}[{i}]", cards, problems) for i, cards in enumerate(row)) if row else None


def _unique(problems: list[Violation]) -> list[Violation]:
    return list(dict.fromkeys(problems))


# --- what can be checked before anything is derived ----------------------------------

def _shape(rules: Rules, given: _Given, *, seat: int, dealer: int, hand: Cards, table: Cards,
           scores: tuple[int, ...], history: Sequence[Event], hand_number: int) -> list[Violation]:
    n, sides = rules.players, rules.n_sides
    out = []
    for name, value in (("seat", seat), ("dealer", dealer), ("to_move", given.to_move)):
        if value is not None and not 0 <= value < n:
            out.append(Violation(name, f"{value} is not a seat 0..{n - 1} (R-SEATS)"))
    if not 0 <= hand_number <= MAX_HAND_NUMBER:
        out.append(Violation("hand_number", f"{hand_number} is out of range 0..{MAX_HAND_NUMBER}"))
    if given.round is not None and not (given.round > 0 and stock_after(rules, given.round) >= 0):
        out.append(Violation("round", f"a hand of {n} players has no round {given.round} (R-DEAL)"))
    if len(scores) != sides:
        out.append(Violation("scores", f"{len(scores)} entries, but {n} players make {sides}: one per side "
                                       "(R-SIDES); leave it out for 0 each"))
    out += [Violation(f"scores[{i}]", f"{v} is negative") for i, v in enumerate(scores) if v < 0]
    out += cards_in_two_places([("hand", hand), ("table", table)] +
                               [(f"piles[{s}]", p) for s, p in enumerate(given.piles or ())])
    for name, row, length, of in (
            ("hand_sizes", given.hand_sizes, n, "seat"), ("public", given.public, n, "seat"),
            ("declared", given.declared, n, "seat"), ("played_this_round", given.played_this_round, n, "seat"),
            ("piles", given.piles, sides, "side"), ("scope", given.scope, sides, "side"),
            ("declarations", given.declarations, sides, "side")):
        if row is not None and len(row) != length:
            out.append(Violation(name, f"{len(row)} entries, but {n} players make {length}: one per {of}"
                                       " (R-SIDES); leave it out to have it filled in"))
    for i, e in enumerate(history):
        if isinstance(e, HandEnd):
            out.append(Violation(f"history[{i}]", "a hand_end: the history holds this hand's events only"))
        elif isinstance(e, Turn) and not 0 <= e.seat < n:
            out.append(Violation(f"history[{i}].turn.seat", f"{e.seat} is not a seat 0..{n - 1} (R-SEATS)"))
        elif isinstance(e, Deal):
            # checked here, before the replay counts the cards dealt up to this round
            if stock_after(rules, e.round) < 0:
                out.append(Violation(f"history[{i}].deal.round", f"a hand of {n} players has no round {e.round} "
                                                                  "(R-DEAL)"))
            for s, h in enumerate(e.hands):
                if h and s != seat and 0 <= seat < n:
                    out.append(Violation(f"history[{i}].deal.hands[{s}]",
                                         f"seat {seat}'s view cannot hold seat {s}'s dealt cards"))
    return out


# --- with the hand's history: replayed through the rules ----------------------------

def _replayed(rules: Rules, seat: int, dealer: int, hand: tuple[Card, ...], table: tuple[Card, ...],
              history: tuple[Event, ...]) -> SeatView:
    """The view after replaying the history on one world consistent with it.

    The other seats' unseen cards are placed arbitrarily: nothing the seat can
    see depends on where they are. The replay allows every declaration as
    optional, because with mandatory declarations (R-DECL-CHOICE) an arbitrary
    placement could hand a seat a buona it would have had to declare.
    """
    n, r = rules.players, rules
    plays: list[_Play] = [(i, e, e.move.card) for i, e in enumerate(history)
                          if isinstance(e, Turn) and e.move.card is not None]
    start = _table_at_start(r, table, plays, history)
    by_seat: list[list[Card]] = [[] for _ in range(n)]
    for _, turn, card in plays:
        by_seat[turn.seat].append(card)
    current, before = _current_round(r, len(plays))
    shown = _declared_this_round(r, history, n, before)
    known = set(start) | {c for cs in by_seat for c in cs} | set(hand) | {c for cs in shown for c in cs}
    unseen = [c for c in map(Card, range(40)) if c not in known]
    hands_now = []
    for s in range(n):
        played_now = by_seat[s][sum(r.round_cards(k) for k in range(current)):]
        if s == seat:
            if set(hand) & set(played_now):
                raise ViewError([("hand", f"{format_cards(set(hand) & set(played_now))} played this round "
                                          "(history) and still in the hand")])
            holding = list(played_now) + list(hand)
        else:
            holding = list(dict.fromkeys(list(played_now) + list(shown[s])))
            want = r.round_cards(current) - len(holding)
            holding += unseen[:max(want, 0)]
            del unseen[:max(want, 0)]
        hands_now.append(holding)
    if len(hands_now[seat]) != r.round_cards(current):
        raise ViewError([("hand", f"{len(hand)} cards, but seat {seat} got {r.round_cards(current)} in round "
                                  f"{current} and played {len(hands_now[seat]) - len(hand)} of them "
                                  f"(history): it holds {r.round_cards(current) - len(hands_now[seat]) + len(hand)} "
                                  "(R-DEAL)")])

    def dealt(rnd: int) -> list[list[Card]]:
        if rnd == current:
            return hands_now
        lo = sum(r.round_cards(k) for k in range(rnd))
        return [by_seat[s][lo:lo + r.round_cards(rnd)] for s in range(n)]

    match = Match(r.replace(declarations="optional"), dealer=dealer, manual_deal=True)
    dealt_rounds = 0

    def deal_due(at: str) -> None:
        nonlocal dealt_rounds
        while match.phase is Phase.DEAL:
            event = match.deal(dealt(dealt_rounds), start if dealt_rounds == 0 else ())
            dealt_rounds += 1
            if event.void:
                raise ViewError([(at, f"the table at the start of the hand ({format_cards(start)}) makes the "
                                      "deal void: two or more aces (R-MONTE)")])
        if match.phase is Phase.OVER:
            raise ViewError([(at, "the match is over at the deal (R-CAPOTUN)")])

    deal_due("history")
    for i, e in enumerate(history):
        if isinstance(e, Deal):
            _check_deal(e, i, seat, dealt, match, start)
        elif isinstance(e, Turn):
            deal_due(f"history[{i}]")
            if e.seat != match.to_move:
                raise ViewError([(f"history[{i}].turn.seat", f"seat {e.seat} plays, but it is seat "
                                                             f"{match.to_move}'s turn (R-DEALER, R-SEATS)")])
            try:
                turn = match.play(e.move)
            except CirullaError as err:
                raise ViewError([(f"history[{i}].turn.move", err.reason)]) from None
            if e.scopa and not turn.scopa:
                raise ViewError([(f"history[{i}].turn.scopa", f"{e.move} does not sweep the table (R-SCOPA)")])
    deal_due("history")
    if match.phase is not Phase.PLAY:
        raise ViewError([("history", "every card of the hand has been played: the hand is over")])
    view = match.view(seat)
    return dataclasses.replace(view, rules=rules)


def _table_at_start(r: Rules, table: tuple[Card, ...], plays: list[_Play],
                    history: tuple[Event, ...]) -> list[Card]:
    """The table the hand's first play found, rebuilt backwards from today's."""
    tables = tables_before(table, [(i, turn.move, card) for i, turn, card in plays])
    rebuilt = cards_of(tables[0] if tables else mask_of(table))
    deal = next(((i, e) for i, e in enumerate(history) if isinstance(e, Deal) and e.round == 0), None)
    if deal is not None:
        i, e = deal
        if rebuilt and set(rebuilt) != set(e.table):
            raise ViewError([(f"history[{i}].deal.table",
                              f"{format_cards(e.table) or 'empty'}, but the plays since leave "
                              f"{format_cards(rebuilt)} on the table at the start of the hand")])
        return list(e.table)
    if not rebuilt:
        raise ViewError([("history", "the plays leave an empty table at the start of the hand: if the "
                                     "dealer's buona took it (R-DEALER-BUONA), give the hand's first deal "
                                     "(an event `deal` with the table cards)")])
    if len(rebuilt) != r.table_cards:
        raise ViewError([("history", f"the plays given leave {len(rebuilt)} cards on the table at the start "
                                     f"of the hand ({format_cards(rebuilt)}), where the deal lays "
                                     f"{r.table_cards} (R-DEAL): give every play of this hand in order, from "
                                     "its first, or give hand_sizes, piles, scope and the rest of the view")])
    return rebuilt


def _current_round(r: Rules, plays: int) -> tuple[int, int]:
    """The round in play after `plays` card plays, and the plays of the rounds before it."""
    rnd, before = 0, 0
    while before + r.players * r.round_cards(rnd) <= plays:
        before += r.players * r.round_cards(rnd)
        rnd += 1
        if stock_after(r, rnd) < 0:
            raise ViewError([("history", "every card of the hand has been played: the hand is over")])
    return rnd, before


def _declared_this_round(r: Rules, history: tuple[Event, ...], n: int, before: int) -> list[list[Card]]:
    """The cards each seat showed by declaring in the current round (R-DECL-WHEN)."""
    shown: list[list[Card]] = [[] for _ in range(n)]
    plays = 0
    for e in history:
        if not isinstance(e, Turn):
            continue
        if not e.move.is_declaration:
            plays += 1
        elif plays >= before:
            shown[e.seat] += sorted(e.move.declared | e.move.declared_second)
    return shown


def _check_deal(e: Deal, i: int, seat: int, dealt: Callable[[int], list[list[Card]]], match: Match,
                start: list[Card]) -> None:
    """A deal the client sent: it must be the one the plays imply."""
    if e.round == 0 and e.void:
        return
    own = e.hands[seat] if seat < len(e.hands) else ()
    if own and set(own) != set(dealt(e.round)[seat]):
        raise ViewError([(f"history[{i}].deal.hands[{seat}]",
                          f"{format_cards(own)}, but the plays and the hand show seat {seat} got "
                          f"{format_cards(dealt(e.round)[seat])} in round {e.round}")])
    if e.dealer != match.dealer:
        raise ViewError([(f"history[{i}].deal.dealer", f"{e.dealer}, but the view's dealer is {match.dealer}")])


def _differences(view: SeatView, given: _Given, table: Cards) -> list[Violation]:
    """The fields the client gave that the replay contradicts."""
    out = []
    if set(view.table) != set(table):
        out.append(Violation("table", f"{format_cards(table) or 'empty'}, but the history leaves "
                                      f"{format_cards(view.table) or 'nothing'} (R-DEALER-BUONA?)"))
    per_seat_cards = ("public", "piles", "played_this_round")
    for name in (f.name for f in dataclasses.fields(given)):
        value, derived = getattr(given, name), getattr(view, name)      # the same-named fields
        if value is None:
            continue
        if name in per_seat_cards:
            value = tuple(frozenset(v) for v in value)
            derived = tuple(frozenset(v) for v in derived)
        elif isinstance(derived, tuple):
            value = tuple(value)
        if value != derived:
            out.append(Violation(name, f"{_show(value)}, but the history gives {_show(derived)}"))
    return out


def _show(value: object) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], frozenset):
        return "[" + ", ".join(format_cards(v) or "none" for v in value) + "]"
    if isinstance(value, tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


# --- without a history: a round's counts, nothing else known -------------------------

def _fresh_round(rules: Rules, seat: int, dealer: int, hand: tuple[Card, ...], table: tuple[Card, ...],
                 history: tuple[Event, ...], scores: tuple[int, ...], hand_number: int,
                 given: _Given) -> SeatView:
    n, sides = rules.players, rules.n_sides
    rnd = given.round or 0
    to_move = given.to_move if given.to_move is not None else seat
    sizes = given.hand_sizes
    if sizes is None:
        first = (dealer + 1) % n
        ahead = 1 if (seat - first) % n < (to_move - first) % n else 0
        sizes = tuple(hand_sizes_at(rules, dealer, to_move, len(hand) + ahead))
    played = given.played_this_round
    if played is None:
        # each seat's last plays in the history, as many as its count says it made this round
        rows: list[tuple[Card, ...]] = []
        for s in range(n):
            k = max(rules.round_cards(rnd) - sizes[s], 0)
            mine = [e.move.card for e in history if isinstance(e, Turn) and e.seat == s and e.move.card is not None]
            rows.append(tuple(mine[len(mine) - k:]) if k and len(mine) >= k else ())
        played = tuple(rows)
    stock = given.stock_size if given.stock_size is not None else max(stock_after(rules, rnd), 0)
    last = given.last_capturer
    public = given.public or ((),) * n
    # left out: a seat that shows declared cards declared this round (R-DECL-WHEN)
    declared = given.declared or tuple(bool(p) for p in public)
    return SeatView(
        rules=rules, seat=seat, hand_number=hand_number, dealer=dealer, round=rnd, to_move=to_move,
        hand=hand, table=table, hand_sizes=sizes, stock_size=stock,
        public=public, piles=given.piles or ((),) * sides,
        scope=given.scope or (0,) * sides, declarations=given.declarations or (0,) * sides,
        declared=declared, played_this_round=played,
        last_capturer=-1 if last is None else last, matta_as=given.matta_as, scores=scores,
        history=history)
