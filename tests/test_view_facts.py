"""Views that contradict the hand's public facts are refused, each naming its
field (SeatView.problems() in solver/view.py, behind every view; the builder
in solver/view_builder.py, behind the wire), and every view of a real match
passes: the checks never refuse a position the engine itself reaches.

Each bad view is a real position with one fact changed, checked two ways:
with ``history=()`` (the explicit path, where only SeatView.problems() stands)
and through the wire; and, where the view keeps the hand's history, through
the wire again, where build_view replays the history and names the field the
replay contradicts."""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from cirulla.server import convert
from cirulla.server.errors import BadRequest
from cirulla.solver import Match, Rules, StateError
from cirulla.solver.cards import Card
from cirulla.solver.errors import ViewError
from cirulla.solver.players import GreedyPlayer
from cirulla.solver.search import SearchBudget, search
from cirulla.solver.view import SeatView


def positions(rules: Rules | None = None, seeds: range = range(40)):
    """The views of the seat to move at every decision of greedy matches' first hands."""
    greedy = GreedyPlayer()
    for seed in seeds:
        match = Match(rules or Rules(), seed=seed)
        while not match.is_over and match.hand_number == 0:
            yield match.view(match.to_move)
            match.play(greedy.choose(match))


def find(pred: Callable[[SeatView], bool], rules: Rules | None = None) -> SeatView:
    view = next((v for v in positions(rules) if pred(v)), None)
    assert view is not None, "no such position in the seeds tried"
    assert view.problems() == [] and view.history
    return view


def wire_fields(view: SeatView) -> dict[str, str]:
    with pytest.raises(BadRequest) as info:
        convert.view_from_proto(convert.view_to_proto(view))
    return dict(info.value.violations)


def refused(bad: SeatView, field: str, *words: str, replayed: str | None = None) -> None:
    """`bad` is refused naming `field`, a reason for it holding `words`: alone
    (history=()) by SeatView.problems() and validate(), and through the wire;
    with its history through the wire too, naming a field that starts with
    `replayed` (default: field)."""
    explicit = dataclasses.replace(bad, history=())
    reasons = [p.reason for p in explicit.problems() if p.field == field]
    assert any(all(w in r for w in words) for r in reasons), (field, explicit.problems())
    with pytest.raises(ViewError):
        explicit.validate()
    fields = wire_fields(explicit)
    assert f"view.{field}" in fields, fields
    assert bad.history, "a view with its history"
    fields = wire_fields(bad)
    assert any(f.startswith(f"view.{replayed or field}") for f in fields), fields


def other_seats(view: SeatView) -> list[int]:
    return [s for s in range(view.rules.players) if s != view.seat]


# --- where the cards played this round are (R-TURN, R-DECK) ---

def test_a_card_played_this_round_lies_on_the_table_or_in_a_pile():
    """A drop stays on the table, a capture goes to the capturer's pile: a
    played card that is in neither (another card in its place) is refused."""
    dropped = find(lambda v: any(c in v.table for s in other_seats(v) for c in v.played_this_round[s]))
    s, c = next((s, c) for s in other_seats(dropped) for c in dropped.played_this_round[s] if c in dropped.table)
    stranger = dropped.unseen()[0]
    bad = dataclasses.replace(dropped, table=tuple(stranger if t == c else t for t in dropped.table))
    refused(bad, f"played_this_round[{s}]", str(c), "in neither", "R-TURN", replayed="history[")

    captured = find(lambda v: any(c in p for s in other_seats(v) for c in v.played_this_round[s] for p in v.piles))
    s, c = next((s, c) for s in other_seats(captured) for c in captured.played_this_round[s]
                if c not in captured.table)
    stranger = captured.unseen()[0]
    piles = tuple(tuple(stranger if x == c else x for x in p) for p in captured.piles)
    refused(dataclasses.replace(captured, piles=piles), f"played_this_round[{s}]", "in neither",
            replayed="piles")


def test_a_card_played_by_two_seats_is_refused():
    view = find(lambda v: all(v.played_this_round))            # both seats of a 2-player game played
    first, second = view.played_this_round
    bad = dataclasses.replace(view, played_this_round=(first, first))
    refused(bad, "played_this_round[1]", str(first[0]), "also in played_this_round[0]", "R-DECK",
            replayed="played_this_round")


# --- scope and piles (R-SCOPA, R-DEALER-BUONA, R-LEFTOVER) ---

def test_scope_need_two_cards_each_in_the_sides_pile():
    view = find(lambda v: not v.piles[1 - v.side] and len(v.piles[v.side]) >= 2)
    empty, taken = 1 - view.side, view.side
    scope = list(view.scope)
    scope[empty] = 1                                            # a scopa, and no card taken
    refused(dataclasses.replace(view, scope=tuple(scope)), f"scope[{empty}]", "R-SCOPA", "need 2 cards",
            replayed="scope")
    scope = list(view.scope)
    scope[taken] = len(view.piles[taken]) // 2 + 1              # one scopa more than the pile can hold
    refused(dataclasses.replace(view, scope=tuple(scope)), f"scope[{taken}]", "R-DEALER-BUONA",
            replayed="scope")
    scope[taken] = len(view.piles[taken]) // 2                  # the bound itself is no contradiction
    assert not [p for p in dataclasses.replace(view, scope=tuple(scope), history=()).problems()
                if p.field.startswith("scope")]


def test_the_last_capturer_has_a_pile():
    view = find(lambda v: not v.piles[1 - v.side] and v.piles[v.side])
    refused(dataclasses.replace(view, last_capturer=1 - view.side), "last_capturer", "R-LEFTOVER")


def test_the_dealers_buona_is_a_real_scopa_for_the_bound():
    """The dealer's buona takes the table (4 cards) for 1 or 2 scope
    (R-DEALER-BUONA): the engine's views with it pass."""
    for seed in range(400):
        match = Match(Rules(), seed=seed)
        deal = match.events[-1]
        if deal.dealer_scope:
            view = match.view(match.to_move)
            side = match.rules.side_of(deal.dealer)
            assert view.scope[side] == deal.dealer_scope and len(view.piles[side]) == 4
            assert view.last_capturer == side and view.problems() == []
            return
    pytest.skip("no dealer's buona in the seeds tried")


# --- declarations (R-DECL-WHEN, R-BUONA3, R-DECINO, R-SC-BUONE) ---

def test_a_seat_that_declared_has_its_points():
    view = find(lambda v: not any(v.declarations) and not any(v.declared))
    s = other_seats(view)[0]
    declared = tuple(k == s for k in range(view.rules.players))
    refused(dataclasses.replace(view, declared=declared), f"declared[{s}]", "no declaration points",
            "R-DECL-WHEN", replayed="declared")


def test_a_seat_that_declared_and_played_its_cards_passes():
    """What the engine keeps (R-DECL-WHEN): declared stays true for the round
    after the declared cards are played (public empty), with the points."""
    view = find(lambda v: any(d and not p for d, p in zip(v.declared, v.public, strict=True)))
    s = next(s for s, (d, p) in enumerate(zip(view.declared, view.public, strict=True)) if d and not p)
    assert view.declarations[view.rules.side_of(s)] >= 3
    assert dataclasses.replace(view, history=()).problems() == []
    assert convert.view_from_proto(convert.view_to_proto(view)) == view


def test_shown_cards_mean_the_seat_declared():
    view = find(lambda v: any(v.public[s] for s in other_seats(v)))
    s = next(s for s in other_seats(view) if view.public[s])
    declared = tuple(d and k != s for k, d in enumerate(view.declared))
    refused(dataclasses.replace(view, declared=declared), f"declared[{s}]", "R-DECL-WHEN", replayed="declared")


@pytest.mark.parametrize("points", [1, 5, 7, 11])
def test_declaration_points_no_declarations_make(points):
    """Declarations are worth 3 or 10 (13, 30 with variants): 1, 5, 7, 11 are
    no sum of them."""
    view = find(lambda v: v.round >= 1)
    declarations = list(view.declarations)
    declarations[0] = points
    refused(dataclasses.replace(view, declarations=tuple(declarations)), "declarations[0]", "R-BUONA3",
            replayed="declarations")


def test_declaration_points_before_anyone_could_declare():
    """A seat declares once a round at most, and this round only if declared:
    in the first round, with declared false, 3 points are refused; in the
    second, one declaration (3 or 10) passes and two (13 = 3 + 10) do not."""
    view = find(lambda v: v.round == 0 and not any(v.declared) and not any(v.declarations))
    first = dataclasses.replace(view, declarations=(3, 0))
    refused(first, "declarations[0]", "at most 0 declarations", replayed="declarations")
    later = find(lambda v: v.round == 1 and not any(v.declared) and not any(v.declarations))
    for one in (3, 10):
        assert dataclasses.replace(later, declarations=(one, 0), history=()).problems() == []
    refused(dataclasses.replace(later, declarations=(13, 0)), "declarations[0]", "at most 1 declaration ",
            replayed="declarations")


# --- the matta (R-MATTA) ---

MATTA = Card.parse("7H")


def test_a_named_matta_needs_a_declaration():
    view = find(lambda v: not any(v.declarations) and v.matta_as is None)
    refused(dataclasses.replace(view, matta_as=0), "matta_as", "no side has declaration points", "R-MATTA")
    # named as itself, it is not named (docs/rules.md section 12): no contradiction
    assert dataclasses.replace(view, matta_as=MATTA.rank, history=()).problems() == []


def test_a_named_matta_was_shown():
    """A declaration showed the matta: it is in view, never unseen."""
    view = find(lambda v: v.round >= 1 and not any(v.declarations) and MATTA in v.unseen())
    bad = dataclasses.replace(view, matta_as=0, declarations=(3, 3))
    refused(bad, "matta_as", "does not place it", "R-DECL-WHEN")
    assert [p.field for p in dataclasses.replace(bad, history=()).problems()] == ["matta_as"]


def test_a_real_named_matta_passes():
    for view in positions(seeds=range(200)):
        if view.matta_as is not None:
            assert dataclasses.replace(view, history=()).problems() == []
            return
    pytest.skip("no named matta in the seeds tried")


# --- the exact solver's endgame (R-DEAL: 2 players, a stock of 6) ---

def test_a_view_that_loses_a_played_card_is_refused_before_the_exact_solver():
    """The other seat's card played this round replaced on the table by an
    unseen card, the history emptied: 40 cards still, but one the search would
    have to place twice. It used to pass validation and send the exact solver
    into endless retries (RecursionError)."""
    def endgame(v: SeatView) -> bool:
        other = 1 - v.seat
        return v.stock_size == 6 and any(c in v.table for c in v.played_this_round[other])
    view = find(endgame)
    other = 1 - view.seat
    card = next(c for c in view.played_this_round[other] if c in view.table)
    bad = dataclasses.replace(view, table=tuple(view.unseen()[0] if c == card else c for c in view.table),
                              history=())
    with pytest.raises(ViewError) as info:
        bad.validate()
    assert info.value.field == f"played_this_round[{other}]"
    with pytest.raises(StateError) as info2:
        search(bad, SearchBudget(iterations=200))
    assert info2.value.field == f"played_this_round[{other}]"
    assert f"view.played_this_round[{other}]" in wire_fields(bad)


# --- no false refusals: every view of a real match passes ---

REAL = [Rules.preset("classic", players=2), Rules.preset("classic", players=3), Rules.preset("classic", players=4),
        Rules.preset("online", players=2), Rules.preset("online", players=4), Rules.preset("relaxed", players=3),
        Rules.preset("extended", players=2), Rules.preset("cirullone", players=2),
        Rules.preset("cirullone", players=4), Rules.preset("five"),
        Rules(buona_stack=True, grande_in_hand=True, matta="QH"),
        Rules(players=3, capotun=True, re_bello=True, buona_stack=True), Rules(players=4, matta="none")]


@pytest.mark.parametrize("rules", REAL, ids=lambda r: f"{r.name}-{r.players}")
def test_every_view_of_a_real_match_passes(rules):
    """Every seat's view at every decision of random matches (declarations,
    named mattas, the dealer's buona, R-V5's 0-point naming included), with
    its history and without: no problem."""
    for seed in range(6):
        match = Match(rules.replace(hands=3), seed=seed)
        rng = random.Random(seed)
        while not match.is_over:
            for seat in range(rules.players):
                view = match.view(seat)
                assert view.problems() == [], (seed, seat, view)
                assert dataclasses.replace(view, history=()).problems() == [], (seed, seat, view)
            match.play(rng.choice(match.legal_moves))


@pytest.mark.parametrize("rules", [Rules.preset("online", players=4), Rules.preset("cirullone", players=2),
                                   Rules.preset("five")], ids=lambda r: f"{r.name}-{r.players}")
def test_every_view_of_a_real_match_crosses_the_wire(rules):
    """Through the builder too, replayed (with the history) and explicit (without)."""
    match = Match(rules.replace(hands=1), seed=2)
    rng = random.Random(2)
    while not match.is_over:
        for seat in range(rules.players):
            view = match.view(seat)
            assert convert.view_from_proto(convert.view_to_proto(view)) == view
            alone = dataclasses.replace(view, history=())
            assert convert.view_from_proto(convert.view_to_proto(alone)) == alone
        match.play(rng.choice(match.legal_moves))


def test_build_view_reads_cards_as_objects_or_codes_and_names_a_bad_code():
    """A Python caller may give cards as Card objects, codes or a text of codes
    (as Match.play takes a move's text); a code that names no card is its
    field's problem, not a stream of one-letter 'cards'."""
    from cirulla.solver.view_builder import build_view
    m = Match(Rules.preset("classic"), seed=7)
    seat = m.to_move
    hand, table = m.hand(seat), m.table
    as_cards = build_view(m.rules, seat=seat, dealer=m.dealer, hand=hand, table=table)
    for h, t in ((" ".join(map(str, hand)), ",".join(map(str, table))), ([str(c) for c in hand], list(table))):
        assert build_view(m.rules, seat=seat, dealer=m.dealer, hand=h, table=t) == as_cards
    with pytest.raises(ViewError) as bad:
        build_view(m.rules, seat=seat, dealer=m.dealer, hand=[str(hand[0]), 4, "ZZ"], table="JH Q")
    assert [(v.field, v.reason) for v in bad.value.violations] == [
        ("hand[1]", "a card is text like '7D', got 4"),
        ("hand[2]", "'ZZ': unknown rank 'Z' (ranks are A 2 3 4 5 6 7 J Q K)"),
        ("table", "'Q' is not a card: write rank then suit, like '7D'")]
