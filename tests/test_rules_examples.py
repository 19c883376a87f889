"""The worked examples of docs/rules.md section 11, one test each (classic unless said).

Move sets are compared as sets of canonical move texts; the expected texts are
written as docs/rules.md writes them and normalised through Move.parse, so the
order of the captured cards in the text does not matter.
"""
from __future__ import annotations

import pytest

from cirulla.solver import IllegalMoveError, Match, Rules
from cirulla.solver.cards import cards_of
from rules_support import declarations, move, plays_of, position

CLASSIC = Rules()


def norm(*moves: str, rules: Rules = CLASSIC) -> set[str]:
    return {str(move(t, rules)) for t in moves}


def test_example_1_simple_capture_one_set_not_both():
    """R-SIMPLE: table JD 5H 3S, JC takes JD or 5H 3S, not both; no fifteen (nothing adds to 7)."""
    m = position(CLASSIC, ["JC", "2C"], "JD 5H 3S")
    assert plays_of(m, "JC") == norm("JC x JD", "JC x 5H 3S")
    with pytest.raises(IllegalMoveError, match="R-SIMPLE"):
        m.play("JC x JD 5H 3S")


def test_example_2_fifteen_capture_is_a_scopa():
    """R-FIFTEEN, R-SCOPA: table 3C 4S, JH: 8+3+4 = 15 takes both, a scopa."""
    m = position(CLASSIC, ["JH", "2C"], "3C 4S")
    assert plays_of(m, "JH") == norm("JH x 3C 4S")
    turn = m.play("JH x 3C 4S")
    assert turn.scopa
    assert m.table == []
    assert m.hand_points()[0]["scope"] == 1


@pytest.mark.parametrize("single_match_first, expected", [
    (False, ("7C x 7D", "7C x 2C 5S")),
    (True, ("7C x 7D",)),
])
def test_example_3_settebello_or_the_pair(single_match_first, expected):
    """R-SIMPLE, R-CHOICE: table 7D 2C 5S, 7C takes 7D or 2C 5S; no set adds to 8;
    with single_match_first only the single 7D."""
    rules = Rules(single_match_first=single_match_first)
    m = position(rules, ["7C", "2H"], "7D 2C 5S")
    assert plays_of(m, "7C") == norm(*expected)


def test_example_4_ace_takes_the_table():
    """R-ACE: table KC 4S 6H, AH takes all three, a scopa."""
    m = position(CLASSIC, ["AH", "2C"], "KC 4S 6H")
    assert plays_of(m, "AH") == norm("AH x KC 4S 6H")
    assert m.play("AH x KC 4S 6H").scopa


@pytest.mark.parametrize("ace_on_ace, expected, scopa", [
    ("only_ace", ("AH x AD",), False),
    ("ace_or_fifteen", ("AH x AD", "AH x 6C JS"), False),
    ("sweep", ("AH x AD 6C JS",), True),
])
def test_example_4_ace_on_ace(ace_on_ace, expected, scopa):
    """R-ACE-ACE: table AD 6C JS, AH under each ace_on_ace option."""
    rules = Rules(ace_on_ace=ace_on_ace)
    m = position(rules, ["AH", "2C"], "AD 6C JS")
    assert plays_of(m, "AH") == norm(*expected)
    last = sorted(plays_of(m, "AH"), key=len)[-1]     # the widest capture
    assert m.play(last).scopa == scopa


def test_example_5_ace_on_empty_table_stays_then_ace_takes_it():
    """R-ACE, R-SCOPA: AC on an empty table stays; AS then takes it, a scopa."""
    m = position(CLASSIC, ["AC 5D", "AS 6D"], "")
    assert plays_of(m, "AC") == {"AC"}
    m.play("AC")
    assert [str(c) for c in m.table] == ["AC"]
    assert plays_of(m, "AS") == {"AS x AC"}
    assert m.play("AS x AC").scopa
    assert m.hand_points()[1]["scope"] == 1


def test_example_5_last_card_of_the_hand_is_no_scopa():
    """R-SCOPA exception: the same capture as the hand's last card is no scopa; the capture stands."""
    m = position(CLASSIC, ["AC", "AS"], "", rest_to=0)
    m.play("AC")
    core = m.core                      # the hand's state object, kept after the hand ends
    turn = m.play("AS x AC")
    assert not turn.scopa
    end = m.events[-1]
    assert end.sides[1].scope == 0
    assert {str(c) for c in cards_of(core.pile(1))} == {"AC", "AS"}


def _first_round(rules: Rules, first: str, table: str, other: str = "KS QC 9D") -> Match:
    """A manual deal by seat 0, so seat 1 (holding `first`) plays first."""
    m = Match(rules, dealer=0, manual_deal=True)
    m.deal(hands=[other, first], table=table)
    assert m.to_move == 1
    return m


def test_example_6_matta_named_ace_or_two_then_plays_as_an_ace():
    """R-MATTA, R-MATTA-CHOICE, R-BUONA3: 7H 5C 2S, the matta named A (8) or 2 (9): 3 points;
    named A it later takes the whole table (R-ACE)."""
    m = _first_round(CLASSIC, "7H 5C 2S", "KC 4S 6H 3D", other="KS QC JC")
    assert declarations(m) == {str(move("declare 7H=A 5C 2S")): 3, str(move("declare 7H=2 5C 2S")): 3}
    m.play("declare 7H=A 5C 2S")
    assert m.matta_as == 0
    assert m.hand_points()[1]["declarations"] == 3
    assert plays_of(m, "7H") == norm("7H x KC 4S 6H 3D")
    assert m.play("7H x KC 4S 6H 3D").scopa


@pytest.mark.parametrize("buona_stack, points", [(False, 10), (True, 13)])
def test_example_7_matta_named_three_makes_a_decino(buona_stack, points):
    """R-DECINO, R-DECL-ONE, R-V13: 7H 3C 3S, the matta named 3 -> decino 10
    (buona_stack: 3+3+3 = 9 is also a buona da tre, 13). Named A or 2 it is a buona da tre."""
    m = _first_round(Rules(buona_stack=buona_stack), "7H 3C 3S", "KC 4S 6H 2D", other="KS QC JC")
    assert declarations(m) == {str(move("declare 3C 3S 7H=3")): points,
                               str(move("declare 3C 3S 7H=A")): 3,
                               str(move("declare 3C 3S 7H=2")): 3}


def test_example_7_matta_as_itself_or_as_an_ace():
    """R-MATTA-CHOICE: 7H AC AS: as itself 7+1+1 = 9, buona da tre (3); named A, decino (10)."""
    m = _first_round(CLASSIC, "7H AC AS", "KC 4S 6H 2D", other="KS QC JC")
    decl = declarations(m)
    assert decl[str(move("declare 7H AC AS"))] == 3
    assert decl[str(move("declare 7H=A AC AS"))] == 10


@pytest.mark.parametrize("table, scope", [
    ("3C 4S 5D 7H", 1),         # 12 + the matta named 3 = 15
    ("KC QS 2D 7H", 2),         # 21 + the matta named 9 = 30
    ("KC QS JD 2H", 0),         # 29, no matta: nothing
])
def test_example_8_dealer_buona(table, scope):
    """R-DEALER-BUONA: the dealer takes a table of 15 (1 scopa) or 30 (2 scope); the matta helps."""
    m = Match(CLASSIC, dealer=0, manual_deal=True)
    deal = m.deal(hands=["AS 5S 6S", "AC 6C JC"], table=table)
    assert not deal.void
    assert deal.dealer_scope == scope
    assert m.hand_points()[0]["scope"] == scope
    if scope:
        assert m.table == [] and {str(c) for c in m.pile(0)} == set(table.split())
    else:
        assert {str(c) for c in m.table} == set(table.split()) and m.pile(0) == []


def test_example_9_piccola_broken_by_the_missing_five():
    """R-SC-PICCOLA: diamonds A 2 3 4 6: piccola 4."""
    m = position(CLASSIC, ["KS", "KC"], "", piles={0: "AD 2D 3D 4D 6D"})
    assert m.hand_points()[0]["piccola"] == 4


def test_example_10_primiera_73_against_81():
    """R-SC-PRIMIERA, R-PRIM: 7D AC 6H 6S = 73 against 6D 7C 7H 7S = 81: side 1 scores it."""
    m = position(CLASSIC, ["KS", "KC"], "", piles={0: "7D AC 6H 6S", 1: "6D 7C 7H 7S"})
    points = m.hand_points()
    assert (points[0]["primiera"], points[1]["primiera"]) == (0, 1)
