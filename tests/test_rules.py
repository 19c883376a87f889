"""One or more tests for every rule of docs/rules.md (cited by id), every option of
section 9 and every preset of section 10.

Positions come from manual deals where a deal can reach them, otherwise from
`rules_support.position` (a restored core state inside a Match). Expected
values are worked out by hand from docs/rules.md in the comments next to them.
"""
from __future__ import annotations

import pytest

from cirulla.solver import DECK, Card, HandEnd, IllegalMoveError, Match, Rules, RulesError, Turn
from cirulla.solver.cards import cards_of
from cirulla.solver.events import Deal
from cirulla.solver.rules import PRESETS
from rules_support import declarations, move, plays_of, position, random_match

CLASSIC = Rules()


def norm(*moves: str, rules: Rules = CLASSIC) -> set[str]:
    return {str(move(t, rules)) for t in moves}


def names(cards) -> set[str]:
    return {str(c) for c in cards}


def deal_first_round(rules: Rules, hands: list[str], table: str, *, dealer: int = 0) -> Match:
    m = Match(rules, dealer=dealer, manual_deal=True)
    deal = m.deal(hands=hands, table=table)
    assert not deal.void
    return m


def hand_ends(m: Match) -> list[HandEnd]:
    return [e for e in m.events if isinstance(e, HandEnd)]


def valid_deals(m: Match) -> list[Deal]:
    return [e for e in m.events if isinstance(e, Deal) and not e.void]


# --- section 1: cards ---

def test_R_DECK_forty_cards_ten_ranks_four_suits():
    assert len(DECK) == 40 and len(set(DECK)) == 40
    assert {str(c)[0] for c in DECK} == set("A234567JQK")
    assert {str(c)[1] for c in DECK} == set("DHCS")
    assert all(Card(i).index == i for i in range(40))


def test_R_VALUE_capture_values():
    assert [Card.parse(r + "C").value for r in "A234567JQK"] == list(range(1, 11))


@pytest.mark.parametrize("card, table, take", [
    ("JC", "3S 5H", "3S 5H"),       # J = 8
    ("QC", "4S 5H", "4S 5H"),       # Q = 9
    ("KC", "4S 6H", "4S 6H"),       # K = 10
    ("7C", "3S 4H", "3S 4H"),       # 7 = 7 (also 7 + 8 = 15: nothing makes 8)
])
def test_R_VALUE_court_cards_capture_by_value(card, table, take):
    m = position(CLASSIC, [card, "2D"], table)
    assert plays_of(m, card) == norm(f"{card} x {take}")


def test_R_PRIM_primiera_values():
    assert [Card.parse(r + "S").primiera for r in "7 6 A 5 4 3 2 J Q K".split()] == \
        [21, 18, 16, 15, 14, 13, 12, 10, 10, 10]


def test_R_SUITS_diamonds_score_and_7D_is_the_settebello():
    assert [Card.parse("7" + s).suit for s in "DHCS"] == [0, 1, 2, 3]
    m = position(CLASSIC, ["KS", "KC"], "", piles={0: "7D 2H", 1: "AD 5D 3C"})
    p = m.hand_points()
    assert (p[0]["settebello"], p[1]["settebello"]) == (1, 0)
    assert (p[0]["diamonds"], p[1]["diamonds"]) == (0, 1)


# --- section 2: players, seats, sides ---

@pytest.mark.parametrize("players", [2, 3, 4])
def test_R_SEATS_play_passes_to_the_next_seat(players):
    """Within a round seat i is followed by seat i+1 (mod n); a declarer plays next."""
    m = random_match(Rules(players=players, hands=1), seed=players)
    pairs = 0
    for a, b in zip(m.events, m.events[1:], strict=False):
        if isinstance(a, Turn) and isinstance(b, Turn):
            pairs += 1
            assert b.seat == (a.seat if a.move.is_declaration else (a.seat + 1) % players)
    assert pairs > 10


@pytest.mark.parametrize("players", [1, 5, 6, "2"])
def test_R_SEATS_bad_player_counts(players):
    with pytest.raises(RulesError, match="players"):
        Rules(players=players)


def test_R_SIDES_four_players_pool_by_side():
    """R-SIDES: seats 0+2 and 1+3 share captures and scope."""
    rules = Rules(players=4)
    assert rules.n_sides == 2 and [rules.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    m = position(rules, ["KS QS", "KC QC", "5C 6D", "JH JD"], "5H", turn=2,
                 piles={0: "2C"}, scope={0: 1})
    m.play("5C x 5H")                         # seat 2 captures for side 0, a scopa
    assert names(m.pile(0)) == {"2C", "5C", "5H"}
    assert m.hand_points()[0]["scope"] == 2
    assert len(m.scores) == 2


@pytest.mark.parametrize("players", [2, 3])
def test_R_SIDES_every_player_is_a_side(players):
    rules = Rules(players=players)
    assert rules.n_sides == players
    assert [rules.side_of(s) for s in range(players)] == list(range(players))


# --- R-DEALER ---

def test_R_DEALER_first_dealer_at_random_or_given():
    dealers = {Match(CLASSIC, seed=s).first_dealer for s in range(40)}
    assert dealers == {0, 1}
    assert Match(CLASSIC, seed=5).first_dealer == Match(CLASSIC, seed=5).first_dealer
    assert Match(Rules(players=3), dealer=2, manual_deal=True).dealer == 2


@pytest.mark.parametrize("players", [2, 3, 4])
def test_R_DEALER_rotation_and_first_player(players):
    """The deal passes to the next seat every hand; the seat after the dealer plays
    first in every round (primo di mano)."""
    m = random_match(Rules(players=players, target=30), seed=11 + players)
    deals = valid_deals(m)
    for d in deals:
        assert d.dealer == (m.first_dealer + d.hand) % players
        nxt = m.events[m.events.index(d) + 1]
        assert isinstance(nxt, Turn) and nxt.seat == (d.dealer + 1) % players


# --- section 3: the deal ---

@pytest.mark.parametrize("preset, players, rounds, sizes, table", [
    ("classic", 2, 6, [3] * 6, 4),
    ("classic", 3, 4, [3] * 4, 4),
    ("classic", 4, 3, [3] * 3, 4),
    ("cirullone", 2, 5, [6, 3, 3, 3, 3], 4),     # R-VC: 6 cards first: 12 + 4 + 4 * 6 = 40
    ("cirullone", 3, 3, [6, 3, 3], 4),
    ("cirullone", 4, 2, [6, 3], 4),
    ("five", 5, 3, [3, 3, 1], 5),                # R-V5: 5 + 15 + 15 + 5 = 40
])
def test_R_DEAL_rounds_and_cards_per_round(preset, players, rounds, sizes, table):
    rules = Rules.preset(preset, players=players)
    m = random_match(rules.replace(hands=2), seed=3)
    for hand in range(2):
        deals = [d for d in valid_deals(m) if d.hand == hand]
        assert [d.round for d in deals] == list(range(rounds))
        assert [len(d.table) for d in deals] == [table] + [0] * (rounds - 1)
        for d, size in zip(deals, sizes, strict=False):
            assert [len(h) for h in d.hands] == [size] * players
        dealt = [c for d in deals for h in d.hands for c in h] + list(deals[0].table)
        assert sorted(dealt) == sorted(DECK)


def test_R_MONTE_two_aces_on_the_table_void_the_deal():
    """R-MONTE: void deal, no points, the same dealer deals again."""
    m = Match(CLASSIC, dealer=1, manual_deal=True)
    d = m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="AC AS 5H 6H")
    assert d.void
    assert m.phase == "deal" and m.dealer == 1 and m.hand_number == 0 and m.scores == [0, 0]
    assert m.hand(0) == [] and m.table == []
    d = m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="AC KS 5H 6H")
    assert not d.void and d.dealer == 1 and m.phase == "play" and m.to_move == 0


def test_R_MONTE_three_aces_too_and_random_deals_redeal():
    m = Match(CLASSIC, dealer=0, manual_deal=True)
    assert m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="AC AS AH 6H").void
    # random deals: every void deal is followed by a deal of the same hand and dealer
    seen = 0
    for seed in range(60):
        m = Match(CLASSIC, seed=seed)
        ev = m.events
        for i, e in enumerate(ev):
            if isinstance(e, Deal) and e.void:
                seen += 1
                assert sum(c.rank == 0 for c in e.table) >= 2
                assert isinstance(ev[i + 1], Deal) and (ev[i + 1].hand, ev[i + 1].dealer) == (e.hand, e.dealer)
    assert seen, "no void deal in 60 seeds: the check above never ran"


@pytest.mark.parametrize("table, scope", [
    ("AC 2C 3C QS", 1),             # 1+2+3+9 = 15
    ("KC QS JD 3C", 2),             # 10+9+8+3 = 30
    ("KC QS JD 4C", 0),             # 31
    ("7H AC 5D 6S", 1),             # 12: the matta (R-MATTA) named 3; one ace is no monte
    ("7H KC QS JD", 2),             # 27: the matta named 3 makes 30
    ("7H KC QS 2D", 2),             # 21: the matta named 9 makes 30 (section 11, example 8)
    ("7H KC 6S 2D", 0),             # 17 without it: 15 and 30 are out of the matta's reach
])
def test_R_DEALER_BUONA_sums(table, scope):
    m = deal_first_round(CLASSIC, ["2S 4S 5S", "2H 4H 5H"], table, dealer=1)
    assert m.events[-1].dealer_scope == scope
    assert m.hand_points()[1]["scope"] == scope
    assert (m.table == []) == bool(scope)


def test_R_DEALER_BUONA_matta_option():
    """matta = none: 7H is an ordinary 7 at the deal; matta = QH: QH is the wild one."""
    m = deal_first_round(Rules(matta="none"), ["2S 4S 5S", "2H 4H 5H"], "7H AC 5D 6S")
    assert m.events[-1].dealer_scope == 0
    m = deal_first_round(Rules(matta="QH"), ["2S 4S 5S", "2H 4H 5H"], "QH AC 5D 6S")
    assert m.events[-1].dealer_scope == 1           # QH named 3


def test_R_DEALER_BUONA_dealer_is_the_last_capturer():
    """R-DEALER-BUONA + R-LEFTOVER: after the buona the dealer's side counts as the last
    to capture until someone else captures."""
    m = deal_first_round(Rules(players=4), ["2S 4S 5S", "2H 4H 5H", "6S 6H 6D", "KS KH JC"],
                         "AC 2C 3C QS", dealer=3)
    assert m.view(0).last_capturer == 1             # dealer seat 3 is side 1
    assert names(m.pile(1)) == {"AC", "2C", "3C", "QS"}


def test_R_DEALER_BUONA_leftover_goes_to_the_dealer_if_nobody_else_captures():
    m = position(CLASSIC, ["KS", "QC"], "", rest_to=0, last_capturer=1)
    core = m.core
    m.play("KS")
    m.play("QC")                                   # K and Q: nothing captured
    end = hand_ends(m)[-1]
    assert end.leftover_side == 1 and names(end.leftover) == {"KS", "QC"}
    assert {"KS", "QC"} <= names(cards_of(core.pile(1)))


# --- section 4: declarations ---

def test_R_DECL_WHEN_only_at_the_first_turn_holding_every_card():
    m = deal_first_round(CLASSIC, ["2S 3S 4S", "2H 3H 4H"], "KC QC JC 6D", dealer=0)
    assert declarations(m) == {"declare 2H 3H 4H": 3}
    m.play("2H")                                   # seat 1 plays without declaring
    assert declarations(m) == {"declare 2S 3S 4S": 3}     # seat 0's first turn
    m.play("declare 2S 3S 4S")
    assert m.to_move == 0 and declarations(m) == {}      # the declarer still plays, once
    m.play("2S x 2H")
    assert declarations(m) == {}                   # seat 1 no longer holds all three
    with pytest.raises(IllegalMoveError, match="R-DECL-WHEN"):
        m.play("declare 3H 4H")


def test_R_DECL_WHEN_declared_cards_are_public_until_played():
    m = deal_first_round(CLASSIC, ["JS QS KS", "2H 3H 4H"], "KC QC JC 6D", dealer=0)
    m.play("declare 2H 3H 4H")
    assert names(m.public(1)) == {"2H", "3H", "4H"}
    assert names(m.view(0).public[1]) == {"2H", "3H", "4H"}
    m.play("2H")
    assert names(m.view(0).public[1]) == {"3H", "4H"}
    assert m.view(0).public[0] == ()


@pytest.mark.parametrize("holding, points", [
    ("2C 3D 4S", 3),        # 9: R-BUONA3
    ("AC 2D 6S", 3),        # 9
    ("AC AD 7S", 3),        # 9
    ("2C 3D 5S", 0),        # 10: nothing
    ("5C 5D 5S", 10),       # R-DECINO
    ("KC KD KS", 10),       # R-DECINO at 30
    ("AC AD AS", 10),       # R-DECL-ONE: both apply, the better one
    ("3C 3D 3S", 10),
])
def test_R_BUONA3_R_DECINO_R_DECL_ONE(holding, points):
    m = deal_first_round(CLASSIC, ["JS QS KH", holding], "QC 6H JC 6D")
    expected = {str(move("declare " + holding)): points} if points else {}
    assert declarations(m) == expected


@pytest.mark.parametrize("holding, points", [
    ("AC AD AS", 13), ("2C 2D 2S", 13), ("3C 3D 3S", 13),     # R-V13: 3, 6, 9
    ("4C 4D 4S", 10),                                         # 12: a decino only
    ("2C 3D 4S", 3),
])
def test_R_DECL_ONE_buona_stack_option(holding, points):
    m = deal_first_round(Rules(buona_stack=True), ["JS QS KH", holding], "QC 6H JC 6D")
    assert declarations(m) == {str(move("declare " + holding)): points}


def test_R_DECL_ONE_buona_stack_with_the_matta():
    """R-V13 'matta included': 7H AC AS named A is A A A: 13."""
    m = deal_first_round(Rules(buona_stack=True), ["JS QS KH", "7H AC AS"], "QC 6H JC 6D")
    assert declarations(m)[str(move("declare 7H=A AC AS"))] == 13


def test_R_DECL_grande_in_hand_is_worth_30():
    """R-V30: J Q K of diamonds in hand, only with the option, and the matta cannot stand in."""
    hands = ["2S 4S 5S", "JD QD KD"]
    assert declarations(deal_first_round(CLASSIC, hands, "QC 6H JC 6C")) == {}
    on = Rules(grande_in_hand=True)
    assert declarations(deal_first_round(on, hands, "QC 6H JC 6C")) == {"declare JD QD KD": 30}
    m = deal_first_round(on, ["2S 4S 5S", "JD QD 7H"], "QC 6H JC 6C")
    assert not any(p == 30 for p in declarations(m).values())


def test_R_DECL_CHOICE_optional_the_player_may_keep_quiet():
    m = deal_first_round(CLASSIC, ["JS QS KS", "2H 3H 4H"], "KC QC JC 6D")
    assert declarations(m) and plays_of(m, "2H")
    m.play("2H")
    assert m.hand_points()[1]["declarations"] == 0 and m.public(1) == []


def test_R_DECL_CHOICE_mandatory_a_buona_must_be_declared():
    rules = Rules(declarations="mandatory")
    m = deal_first_round(rules, ["JS QS KS", "7H 3H 4H"], "KC QC JC 6D")
    legal = m.legal_moves
    assert legal and all(x.is_declaration and x.points > 0 for x in legal)
    with pytest.raises(IllegalMoveError, match="R-DECL-CHOICE"):
        m.play("3H")
    m.play(legal[0])
    assert plays_of(m, "3H")
    # a player without a buona plays as usual
    m = deal_first_round(rules, ["JS QS KS", "5H 6H JH"], "KC QC JC 6D")
    assert m.legal_moves and not declarations(m)


def test_R_MATTA_ordinary_card_without_a_declaration():
    m = position(CLASSIC, ["7H", "2S"], "3C 4S")
    assert plays_of(m, "7H") == norm("7H x 3C 4S")


def test_R_MATTA_named_plays_and_is_captured_as_that_rank():
    """A matta named A on the table is an ace: a 7 cannot take it, an ace takes it
    (R-ACE-ACE only_ace), and it does not let an ace sweep."""
    m = position(CLASSIC, ["7C AC", "2S"], "7H 5D", cval={"7H": 1})
    assert plays_of(m, "7C") == norm("7C")                 # no 7 on the table any more
    assert plays_of(m, "AC") == norm("AC x 7H")


def test_R_MATTA_scores_as_its_own_card():
    """For end-of-hand scoring the named matta is 7H again: primiera 21 in hearts."""
    m = position(CLASSIC, ["KS", "KC"], "", piles={0: "7H", 1: "AH"}, cval={"7H": 1})
    p = m.hand_points()
    assert (p[0]["primiera"], p[1]["primiera"]) == (1, 0)   # 21 against 16
    assert p[0]["diamonds"] == 0


@pytest.mark.parametrize("matta, holding, expected", [
    ("QH", "QH 5C 2S", {"declare 2S 5C QH=A": 3, "declare 2S 5C QH=2": 3}),
    ("QH", "7H 5C 2S", {}),
    ("none", "7H 5C 2S", {}),
])
def test_R_MATTA_option(matta, holding, expected):
    m = deal_first_round(Rules(matta=matta), ["JS QS KS", holding], "QC 6H JC 6D")
    assert declarations(m) == {str(move(t, Rules(matta=matta))): p for t, p in expected.items()}


def test_R_MATTA_CHOICE_the_naming_changes_how_the_card_plays():
    for name, expected in (("A", "7H x 2C KS 6D 4H"), ("2", "7H x 2C")):
        m = deal_first_round(CLASSIC, ["JS QS 4D", "7H 5C 2S"], "2C KS 6D 4H")
        m.play(f"declare 7H={name} 5C 2S")
        assert m.matta_as == "A234567JQK".index(name)
        # as A, with no ace on the table, it takes the table (R-ACE); as 2 it
        # takes the 2C (no set of 2 10 6 4 adds up to 13 for a fifteen)
        assert plays_of(m, "7H") == norm(expected)


# --- section 5: play and captures ---

def test_R_TURN_a_card_that_cannot_capture_stays_a_capture_goes_to_the_pile():
    m = position(CLASSIC, ["QS 5C", "KS 2D"], "5H")
    m.play("QS")
    assert names(m.table) == {"5H", "QS"} and m.to_move == 1
    m = position(CLASSIC, ["QS 5C", "KS 2D"], "5H 4D")
    m.play("5C x 5H")
    assert names(m.pile(0)) == {"5C", "5H"} and names(m.table) == {"4D"}


def test_R_MUST_capture_is_mandatory_a_card_that_cannot_capture_may_be_played():
    m = position(CLASSIC, ["5C QS", "2D"], "5H")
    assert plays_of(m, "5C") == {"5C x 5H"}
    assert plays_of(m, "QS") == {"QS"}
    with pytest.raises(IllegalMoveError, match="R-MUST"):
        m.play("5C")


def test_R_MUST_capture_optional():
    m = position(Rules(capture="optional"), ["5C QS", "2D"], "5H")
    assert plays_of(m, "5C") == {"5C x 5H", "5C"}
    m.play("5C")
    assert names(m.table) == {"5H", "5C"}


def test_R_SIMPLE_one_equal_card_or_a_set_adding_up():
    """Table 6 1 2 3 4, played 6: R-SIMPLE sets adding to 6, R-FIFTEEN sets adding to 9."""
    m = position(CLASSIC, ["6C", "2D"], "6H AS 2C 3H 4S")
    simple = {"6C x 6H", "6C x AS 2C 3H", "6C x 2C 4S"}
    fifteen = {"6C x 6H 3H", "6C x AS 2C 6H", "6C x 2C 3H 4S"}
    assert plays_of(m, "6C") == norm(*simple, *fifteen)


def test_R_FIFTEEN_any_set_making_fifteen_with_the_played_card():
    m = position(CLASSIC, ["KC", "2D"], "2S 3H 5D QS")
    # K = 10: simple 10 = 2+3+5; fifteen 5 = 5D, 2S+3H
    assert plays_of(m, "KC") == norm("KC x 2S 3H 5D", "KC x 5D", "KC x 2S 3H")


def test_R_ACE_empty_table_stays_only_capture_is_the_sweep():
    m = position(CLASSIC, ["AC", "2D"], "4S")
    assert plays_of(m, "AC") == norm("AC x 4S")
    m = position(CLASSIC, ["AC", "2D"], "KS 4S")  # K+4 would be a fifteen: still the one sweep
    assert plays_of(m, "AC") == norm("AC x KS 4S")
    m = position(CLASSIC, ["AC", "2D"], "")
    assert plays_of(m, "AC") == {"AC"}


@pytest.mark.parametrize("ace_on_ace, expected", [
    ("only_ace", {"AH x AD", "AH x AS"}),
    ("ace_or_fifteen", {"AH x AD", "AH x AS", "AH x AD 6C 7S", "AH x AS 6C 7S"}),
    ("sweep", {"AH x AD AS 6C 7S"}),
])
def test_R_ACE_ACE_options_with_two_aces_on_the_table(ace_on_ace, expected):
    """ace_or_fifteen: one ace (either), or a set adding to 14 (15 with the played ace):
    A+6+7, with either ace; 6+7 = 13 is not enough."""
    m = position(Rules(ace_on_ace=ace_on_ace), ["AH", "2D"], "AD AS 6C 7S")
    assert plays_of(m, "AH") == norm(*expected)


def test_R_CHOICE_single_match_first():
    """With single_match_first a single equal card must be taken alone (which one is the
    player's choice); a fifteen stays allowed."""
    rules = Rules(single_match_first=True)
    m = position(rules, ["7C", "2H"], "7D 7S 2C 6S")
    assert plays_of(m, "7C") == norm("7C x 7D", "7C x 7S", "7C x 2C 6S")
    # no single equal card: sets are allowed as usual
    m = position(rules, ["7C", "2H"], "3D 4S KS")
    assert plays_of(m, "7C") == norm("7C x 3D 4S")
    assert plays_of(position(CLASSIC, ["7C", "2H"], "7D 3S 4D"), "7C") == norm("7C x 7D", "7C x 3S 4D")


def test_R_MOVE_same_value_other_suit_is_another_move_no_duplicates():
    m = position(CLASSIC, ["7C", "2H"], "7D 7S")
    assert plays_of(m, "7C") == {"7C x 7D", "7C x 7S"}
    assert move("7C x 5S 2C") == move("7c x 2c 5s")
    legal = [str(x) for x in m.legal_moves]
    assert len(legal) == len(set(legal))


def test_R_SCOPA_a_sweep_scores_and_the_last_card_does_not():
    m = position(CLASSIC, ["5C 2S", "KD 3S"], "2H 3C")
    assert m.play("5C x 2H 3C").scopa and m.hand_points()[0]["scope"] == 1
    # seat 1's 5C is the last card of the hand (seat 0 has played its last one)
    m = position(CLASSIC, ["", "5C"], "2H 3C", turn=1, rest_to=0)
    assert not m.play("5C x 2H 3C").scopa
    assert hand_ends(m)[-1].sides[1].scope == 0


def test_R_LEFTOVER_to_the_last_capturer_not_a_scopa():
    m = position(CLASSIC, ["5C", "QD"], "2H 3C KS", rest_to=0)
    core = m.core
    m.play("5C x 2H 3C")
    m.play("QD")
    end = hand_ends(m)[-1]
    assert end.leftover_side == 0 and names(end.leftover) == {"KS", "QD"}
    assert end.sides[0].scope == 0
    assert {"KS", "QD"} <= names(cards_of(core.pile(0)))


def test_R_LEFTOVER_nobody_captured_belongs_to_no_side():
    m = position(CLASSIC, ["KS", "QC"], "", rest_to=0, last_capturer=-1)
    core = m.core
    m.play("KS")
    m.play("QC")
    end = hand_ends(m)[-1]
    assert end.leftover_side is None and names(end.leftover) == {"KS", "QC"}
    assert not {"KS", "QC"} & names(cards_of(core.pile(0) | core.pile(1)))


# --- section 6: scoring ---

def points(rules: Rules, piles: dict[int, str], **kw) -> list[dict[str, int]]:
    n = rules.players
    return position(rules, [""] * n, "", piles=piles, **kw).hand_points()


def test_R_SC_SCOPE_counts_scopas_and_the_dealer_buona():
    p = points(CLASSIC, {}, scope={0: 3, 1: 1})
    assert (p[0]["scope"], p[1]["scope"]) == (3, 1)
    m = deal_first_round(CLASSIC, ["2S 4S 5S", "2H 4H 5H"], "KC QS JD 3C", dealer=1)
    assert m.hand_points()[1]["scope"] == 2


def test_R_SC_BUONE_declaration_points():
    m = deal_first_round(CLASSIC, ["5S 5D 5C", "2H 3H 4H"], "KC QC JC 6D", dealer=0)
    m.play("declare 2H 3H 4H")
    m.play("2H")
    m.play("declare 5S 5D 5C")
    p = m.hand_points()
    assert (p[0]["declarations"], p[1]["declarations"]) == (10, 3)


@pytest.mark.parametrize("piles, expected", [
    ({0: "AC 2C 3C", 1: "4C 5C"}, [1, 0]),
    ({0: "AC 2C", 1: "4C 5C"}, [0, 0]),             # a tie for most: nobody
])
def test_R_SC_CARTE(piles, expected):
    p = points(CLASSIC, piles)
    assert [s["cards"] for s in p] == expected


def test_R_SC_CARTE_three_sides_tie_for_most():
    p = points(Rules(players=3), {0: "AC 2C", 1: "4C 5C", 2: "6C"})
    assert [s["cards"] for s in p] == [0, 0, 0]
    p = points(Rules(players=3), {0: "AC 2C", 1: "4C 5C KC", 2: "6C"})
    assert [s["cards"] for s in p] == [0, 1, 0]


@pytest.mark.parametrize("piles, expected", [
    ({0: "AD 2D KC", 1: "4D"}, [1, 0]),
    ({0: "AD 2C", 1: "4D 5C"}, [0, 0]),
    ({0: "AC", 1: "4D"}, [0, 1]),
])
def test_R_SC_DENARI(piles, expected):
    assert [s["diamonds"] for s in points(CLASSIC, piles)] == expected


def test_R_SC_SETTEBELLO():
    assert [s["settebello"] for s in points(CLASSIC, {1: "7D"})] == [0, 1]
    assert [s["settebello"] for s in points(CLASSIC, {0: "7C 7H 7S"})] == [0, 0]


@pytest.mark.parametrize("piles, expected", [
    ({0: "7D 7H 7C", 1: "AD AH AC AS"}, [0, 1]),    # 63 (no spade: 0) against 64
    ({0: "7D 6H", 1: "7C 6S"}, [0, 0]),             # 39 each: nobody
    ({0: "KD QH JC KS", 1: "2D"}, [1, 0]),          # 40 against 12
])
def test_R_SC_PRIMIERA(piles, expected):
    assert [s["primiera"] for s in points(CLASSIC, piles)] == expected


@pytest.mark.parametrize("long, pile, grande", [
    (False, "JD QD KD", 5),
    (False, "JD QD KD 7D 6D", 5),
    (False, "JD QD", 0),
    (True, "JD QD KD", 5),
    (True, "JD QD KD 7D", 6),
    (True, "JD QD KD 7D 6D", 7),
    (True, "JD QD KD 6D", 5),       # the 6D counts only after the 7D
])
def test_R_SC_GRANDE_and_grande_long(long, pile, grande):
    assert points(Rules(grande_long=long), {1: pile})[1]["grande"] == grande


@pytest.mark.parametrize("to_seven, pile, piccola", [
    (False, "AD 2D 3D", 3),
    (False, "AD 2D 3D 4D", 4),
    (False, "AD 2D 3D 4D 5D 6D", 6),
    (False, "AD 2D 3D 4D 5D 6D 7D", 6),             # at most 6
    (False, "AD 2D 3D 5D", 3),
    (False, "AD 2D 4D 5D", 0),
    (True, "AD 2D 3D 4D 5D 6D 7D", 7),              # piccola_to_seven
    (True, "AD 2D 3D 4D 5D 7D", 5),
])
def test_R_SC_PICCOLA_and_piccola_to_seven(to_seven, pile, piccola):
    assert points(Rules(piccola_to_seven=to_seven), {0: pile})[0]["piccola"] == piccola


@pytest.mark.parametrize("re_bello, expected", [(False, [0, 0]), (True, [0, 1])])
def test_R_SC_re_bello_option(re_bello, expected):
    assert [s["re_bello"] for s in points(Rules(re_bello=re_bello), {1: "KD", 0: "KC"})] == expected


def test_R_CAPPOTTO_all_ten_diamonds_win_at_once():
    """Side 1 takes the tenth diamond with the hand's last card; side 0 is far ahead."""
    m = position(CLASSIC, ["QS", "5C"], "5D", piles={1: "AD 2D 3D 4D 6D 7D JD QD KD"},
                 rest_to=0, scope={0: 30})
    m.scores = [50, 0]
    m.play("QS")
    m.play("5C x 5D")
    end = hand_ends(m)[-1]
    assert end.cappotto_side == 1
    assert m.is_over and m.winner == 1 and m.scores[0] > m.scores[1]


# --- section 7: the match ---

def _last_hand(rules: Rules) -> Match:
    """Two last cards, then the hand is over: side 1 captures, side 0 drops."""
    return position(rules, ["QS", "5C"], "5D 3H", rest_to=0)


def _hand_totals(rules: Rules) -> list[int]:
    m = _last_hand(rules)
    m.play("QS")
    m.play("5C x 5D")
    return [s.total for s in hand_ends(m)[-1].sides]


def _finish(rules: Rules, before: list[int]) -> Match:
    m = _last_hand(rules)
    m.scores = list(before)
    m.play("QS")
    m.play("5C x 5D")
    return m


def test_R_TARGET_the_match_ends_when_a_side_reaches_the_target():
    t = _hand_totals(CLASSIC)
    m = _finish(CLASSIC, [51 - t[0], 0])
    assert m.scores[0] == 51 and m.is_over and m.winner == 0 and m.phase == "over"
    m = _finish(CLASSIC, [50 - t[0], 0])
    assert not m.is_over and m.hand_number == 1 and m.phase == "deal"
    assert m.dealer == (m.first_dealer + 1) % 2


def test_R_TARGET_other_targets():
    rules = Rules(target=26)
    t = _hand_totals(rules)
    m = _finish(rules, [0, 26 - t[1]])
    assert m.winner == 1


def test_R_WINNER_highest_wins_equal_highest_play_on():
    t = _hand_totals(CLASSIC)
    m = _finish(CLASSIC, [60 - t[0], 55 - t[1]])
    assert m.scores == [60, 55] and m.winner == 0
    m = _finish(CLASSIC, [58 - t[0], 58 - t[1]])
    assert m.scores == [58, 58] and not m.is_over and m.hand_number == 1
    assert m.phase == "deal" and m.legal_moves == []      # waiting for the next deal


def test_R_HANDS_LIMIT():
    rules = Rules(hands=1, target=5)
    t = _hand_totals(rules)
    m = _finish(rules, [0, 0])
    assert m.is_over and m.winner == (0 if t[0] > t[1] else 1) and t[0] != t[1]
    m = _finish(rules, [t[1], t[0]])              # equal totals after the hand: play on
    assert not m.is_over and m.hand_number == 1
    # random matches with a hand limit stop after that many hands unless tied
    # (or at once with a cappotto)
    for seed in range(6):
        m = random_match(Rules(hands=3), seed)
        ends = hand_ends(m)
        if ends[-1].cappotto_side is not None:
            continue
        assert len(ends) >= 3 and m.scores.count(max(m.scores)) == 1
        assert all(e.sides[0].match_total == e.sides[1].match_total for e in ends[2:-1])


@pytest.mark.parametrize("players, dealer, side", [(2, 1, 1), (3, 2, 2), (4, 3, 1)])
def test_R_CAPOTUN_four_equal_table_cards_win_for_the_dealer(players, dealer, side):
    rules = Rules(players=players, capotun=True)
    hands = ["2C 3C 4C", "2D 3D 4D", "6C 6D 6S", "KC KD KS"][:players]
    m = Match(rules, dealer=dealer, manual_deal=True)
    d = m.deal(hands=hands, table="5C 5D 5H 5S")
    assert d.capotun and m.is_over and m.winner == side
    assert not hand_ends(m)


def test_R_CAPOTUN_five_players_four_of_the_five_table_cards():
    rules = Rules.preset("five", capotun=True)
    hands = ["2S 3S 4S", "2H 3H 4H", "2D 3D 4D", "5S 6S 7S", "5C 6C 7C"]
    m = Match(rules, dealer=3, manual_deal=True)
    assert m.deal(hands=hands, table="KC KD KH KS AS").capotun and m.winner == 3
    m = Match(rules, dealer=3, manual_deal=True)
    assert not m.deal(hands=hands, table="KC KD KH QS AS").capotun and not m.is_over


def test_R_CAPOTUN_undo_takes_the_deal_back():
    m = Match(Rules(capotun=True), dealer=0, manual_deal=True)
    m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="5C 5D 5H 5S")
    m.undo()
    assert (m.is_over, m.winner, m.phase, m.events) == (False, None, "deal", [])


def test_R_CAPOTUN_off_and_four_aces():
    m = Match(CLASSIC, dealer=0, manual_deal=True)
    d = m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="5C 5D 5H 5S")
    assert not d.capotun and not m.is_over
    # four aces are two or more aces: the deal is void (R-MONTE), not a capotun
    m = Match(Rules(capotun=True), dealer=0, manual_deal=True)
    d = m.deal(hands=["2C 3C 4C", "2D 3D 4D"], table="AC AD AH AS")
    assert d.void and not d.capotun and not m.is_over


# --- section 9: option validation; section 10: presets ---

@pytest.mark.parametrize("option, bad", [
    ("capture", "sometimes"), ("ace_on_ace", "all"), ("declarations", "never"),
    ("matta", "7D"), ("target", 0), ("target", -5), ("hands", 0), ("single_match_first", 1),
    ("cirullone", "yes"), ("five_players", True),
])
def test_options_bad_values_raise_RulesError(option, bad):
    with pytest.raises(RulesError, match=option.split("_")[0]):
        Rules(**{option: bad})


def test_a_match_the_rules_allow_is_one_a_record_can_keep():
    """target and hands stop at the record's ranges (proto bounds): past them a
    match could be played but not saved (play crashed writing its record)."""
    from cirulla.solver import Match, record
    from cirulla.solver.bounds import field_range
    from cirulla.v1 import game_pb2
    top_target, top_hands = field_range(game_pb2.Rules, "target")[1], field_range(game_pb2.Rules, "hands")[1]
    record.loads(record.dumps(Match(Rules(target=top_target, hands=top_hands), seed=1)))
    for option, value in (("target", top_target + 1), ("target", 2**40), ("hands", top_hands + 1)):
        with pytest.raises(RulesError, match=f"{option}, .* up to "):
            Rules(**{option: value})


def test_options_unknown_option_and_preset():
    with pytest.raises(RulesError, match="unknown option"):
        Rules.preset("classic", jokers=True)
    with pytest.raises(RulesError, match="unknown preset"):
        Rules.preset("scopone")
    with pytest.raises(RulesError):
        Rules.preset("five", cirullone=True)


PRESET_DIFFERENCES = {
    "classic": {},
    "online": {"single_match_first": True, "declarations": "mandatory"},
    "relaxed": {"capture": "optional", "ace_on_ace": "ace_or_fifteen"},
    "extended": {"ace_on_ace": "ace_or_fifteen", "piccola_to_seven": True},
    "cirullone": {"cirullone": True, "target": 101},
    "five": {"five_players": True, "players": 5},
}


@pytest.mark.parametrize("name", list(PRESET_DIFFERENCES))
def test_presets_differ_from_classic_as_section_10_says(name):
    base, preset = Rules().options(), Rules.preset(name).options()
    assert {k: v for k, v in preset.items() if base[k] != v} == PRESET_DIFFERENCES[name]
    assert Rules.preset(name).name == name


def test_presets_are_all_named_and_options_go_on_top():
    assert set(PRESETS) == set(PRESET_DIFFERENCES)
    r = Rules.preset("online", players=4, re_bello=True)
    assert (r.players, r.re_bello, r.single_match_first, r.declarations) == (4, True, True, "mandatory")
    assert Rules.preset("cirullone", target=51).target == 51


def test_default_options():
    r = Rules()
    assert (r.players, r.target, r.hands, r.capture, r.ace_on_ace, r.single_match_first,
            r.declarations, r.matta) == (2, 51, None, "mandatory", "only_ace", False, "optional", "7H")
    assert not any((r.piccola_to_seven, r.grande_long, r.buona_stack, r.grande_in_hand,
                    r.capotun, r.re_bello, r.cirullone, r.five_players))


# --- R-VC: cirullone ---

def test_R_VC_two_disjoint_triples_and_single_ones():
    rules = Rules.preset("cirullone")
    m = Match(rules, dealer=0, manual_deal=True)
    m.deal(hands=["JS QS KS 6S 4D 6C", "2C 3C 4C 5D 5H 5S"], table="KC QC JC 6D")
    decl = declarations(m)
    # the two triples in either order are one declaration (R-MOVE)
    assert move("declare 5S 5H 5D + 4C 3C 2C") == move("declare 2C 3C 4C + 5D 5H 5S")
    assert decl[str(move("declare 5D 5H 5S + 2C 3C 4C"))] == 13
    assert decl[str(move("declare 2C 3C 4C"))] == 3
    assert decl[str(move("declare 5D 5H 5S"))] == 10
    m.play("declare 2C 3C 4C + 5D 5H 5S")
    assert m.hand_points()[1]["declarations"] == 13
    assert len(m.public(1)) == 6
    assert not declarations(m)                     # one declaration per round


def test_R_VC_the_matta_named_once_across_two_triples():
    rules = Rules.preset("cirullone")
    m = Match(rules, dealer=0, manual_deal=True)
    m.deal(hands=["JS QS KS 6S 4D 6C", "7H AC AS 2C 2D 2S"], table="KC QC JC 6D")
    decl = declarations(m)
    # 7H A A named A (decino) with 2 2 2 (decino): 20
    assert decl[str(move("declare 7H=A AC AS + 2C 2D 2S"))] == 20
    for text in decl:
        assert text.count("=") <= 1


# --- R-V5: five players ---

def test_R_V5_deal_and_dealer_buona_at_17_and_34():
    rules = Rules.preset("five")
    assert (rules.players, rules.n_sides, rules.table_cards) == (5, 5, 5)
    hands = ["2S 3S 4S", "2H 3H 4H", "2D 3D 4D", "5S 6S 7S", "5C 6C 7C"]
    for table, scope in (("AC 2C 3C 4C 7D", 1),     # 17
                         ("KC QC JC 6H AS", 2),     # 34
                         ("7H AC 2C 3C KC", 1),     # 16: the matta named A makes 17
                         ("AC 2C 3C 4C 5D", 0),     # 15: not a buona with five players
                         ("KC QC JC 5H AS", 0)):    # 33
        m = Match(rules, dealer=4, manual_deal=True)
        d = m.deal(hands=hands, table=table)
        assert d.dealer_scope == scope, table
        assert m.hand_points()[4]["scope"] == scope


def _one_card_round(cards: list[str], dealer: int, rules: Rules | None = None) -> Match:
    """The R-V5 1-card round, everybody drops (capture optional), nobody captured."""
    rules = rules or Rules.preset("five", capture="optional")
    first = (dealer + 1) % 5
    m = position(rules, cards, "", turn=first, dealer=dealer, round_=2, rest_to=0)
    return m


def _drop_all(m: Match) -> HandEnd:
    while not hand_ends(m):
        card = m.hand(m.to_move)[0]
        m.play(str(card))
    return hand_ends(m)[-1]


@pytest.mark.parametrize("cards, dealer, winner", [
    (["KS", "3C", "AD", "2S", "QS"], 4, 2),        # the ace is lowest
    (["2C", "3C", "KD", "JS", "2S"], 2, 4),        # 2 and 2: seat 4 deals before seat 0
    (["2C", "3C", "KD", "JS", "2S"], 4, 0),        # ... and seat 0 before seat 4
    (["4C", "5C", "KD", "JS", "6S"], 0, None),     # nothing of 3 or less
])
def test_R_V5_lowest_card_in_the_one_card_round(cards, dealer, winner):
    m = _one_card_round(cards, dealer)
    end = _drop_all(m)
    expected = [0] * 5
    if winner is not None:
        expected[winner] = 1
    assert [s.scope for s in end.sides] == expected


def test_R_V5_the_matta_may_be_named_to_qualify():
    m = _one_card_round(["KS", "3C", "7H", "2S", "QS"], 4)
    m.play("KS")
    m.play("3C")
    assert declarations(m) == {"declare 7H=A": 0, "declare 7H=2": 0, "declare 7H=3": 0}
    m.play("declare 7H=A")
    end = _drop_all(m)
    assert [s.scope for s in end.sides] == [0, 0, 1, 0, 0]


def test_R_V5_rounds_in_random_matches():
    m = random_match(Rules.preset("five", hands=2), seed=8)
    for d in valid_deals(m):
        assert [len(h) for h in d.hands] == [[3, 3, 1][d.round]] * 5
