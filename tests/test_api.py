"""The Python API's values and bad input: cards and moves in text (R-CODE,
R-MOVE), the core encoding, rules, seat views (section 8), baseline players,
and one error family (CirullaError, a ValueError) for everything a caller can
get wrong."""
from __future__ import annotations

import dataclasses
import random

import pytest

from cirulla.solver import (
    DECK,
    Card,
    CirullaError,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    Match,
    Move,
    RecordError,
    Rules,
    RulesError,
    StateError,
)
from cirulla.solver.cards import cards_of, format_cards, mask_of, parse_cards
from cirulla.solver.events import Turn
from cirulla.solver.players import GreedyPlayer, RandomPlayer, make_player, self_play
from rules_support import position

# --- R-CODE: cards ---

def test_R_CODE_every_card_prints_and_parses_back():
    for c in DECK:
        assert Card.parse(str(c)) is c
        assert Card.parse(str(c).lower()) is c
        assert Card.parse(c.symbol) is c
        assert eval(repr(c)) is c                  # noqa: S307 - repr pastes back as code
    assert [str(c) for c in DECK[:10]] == "AD 2D 3D 4D 5D 6D 7D JD QD KD".split()


@pytest.mark.parametrize("text, card", [("7d", "7D"), ("7♦", "7D"), ("q♠", "QS"), (" kh ", "KH"),
                                        ("a♣", "AC")])
def test_R_CODE_lowercase_and_suit_symbols_print_canonical(text, card):
    assert str(Card.parse(text)) == card


@pytest.mark.parametrize("text, reason", [
    ("", "not a card"), ("7", "not a card"), ("10D", "not a card"), ("7DD", "not a card"),
    ("1D", "unknown rank '1'"), ("8C", "unknown rank '8'"), ("7X", "unknown suit 'X'"),
    (None, "text like"), (7, "text like"),
])
def test_R_CODE_bad_cards(text, reason):
    with pytest.raises(InvalidCardError, match=reason):
        Card.parse(text)


@pytest.mark.parametrize("index", [-1, 40, "7D", 1.0])
def test_bad_card_index(index):
    with pytest.raises(InvalidCardError, match="0..39"):
        Card(index)


def test_card_sets_and_masks():
    cards = parse_cards("7D, 2c 5S")
    assert cards_of(mask_of(cards)) == sorted(cards)
    assert format_cards(cards) == "2C 5S 7D"
    assert mask_of(parse_cards("AD KS")) == 1 | 1 << 39


# --- R-MOVE: moves ---

@pytest.mark.parametrize("text, canonical", [
    ("7C x 2C 5S", "7C x 2C 5S"),
    ("7c X 5s, 2c", "7C x 2C 5S"),
    ("7♣ x 5♠ 2♣", "7C x 2C 5S"),
    ("7C", "7C"),
    ("declare 7H=A 5C 2S", "declare 2S 5C 7H=A"),
    ("DECLARE 2s 5c 7h=a", "declare 2S 5C 7H=A"),
    ("declare AC AS 7H=7", "declare AC AS 7H"),      # named as itself: not named
    ("declare 5S 5H 5D + 4C 3C 2C", "declare 2C 3C 4C + 5D 5H 5S"),
])
def test_R_CODE_moves_print_canonical_and_parse_back(text, canonical):
    m = Move.parse(text)
    assert str(m) == canonical
    assert Move.parse(str(m)) == m and eval(repr(m)) == m   # noqa: S307


@pytest.mark.parametrize("text, reason", [
    ("", "a move is text"), (None, "a move is text"),
    ("7C 5S", "play one card"), ("7C x", "'x' is not a card"),
    ("7C x 7C", "appears twice"), ("7C x 2C 2C", "appears twice"),
    ("7C x 9S", "unknown rank"), ("ZZ", "not a card|unknown"),
    ("declare 7D=A 2C 3C", "only the matta"), ("declare 7H=Z 2C 3C", "name the matta"),
    ("declare AC AC AS", "appears twice"), ("declare", "declare one or two"),
    ("declare AC + 2C + 3C", "declare one or two"),
])
def test_bad_moves(text, reason):
    with pytest.raises(InvalidMoveError, match=reason):
        Move.parse(text)


def test_the_matta_is_named_only_with_a_matta():
    with pytest.raises(InvalidMoveError, match="only the matta"):
        Move.parse("declare 7H=A 2C 3C", matta=None)
    assert str(Move.parse("declare QH=A 2C 3C", matta=Card.parse("QH"))) == "declare 2C 3C QH=A"
    # a move built by hand with the matta but no rank for it prints the matta as itself
    # (its text used to fail with a TypeError)
    unnamed = Move(declared=frozenset(parse_cards("2C 3C QH")), matta=Card.parse("QH"))
    assert str(unnamed) == "declare 2C 3C QH"


def test_moves_text_and_core_encoding_round_trip_in_random_play():
    for preset, players in (("classic", 2), ("cirullone", 3), ("five", 5), ("online", 4)):
        rules = Rules.preset(preset, players=players, matta="QH" if players == 3 else "7H")
        m = Match(rules, seed=players)
        rng = random.Random(players)
        while not m.is_over and m.hand_number < 1:
            for mv in m.legal_moves:
                assert Move.parse(str(mv), matta=rules.matta_card) == mv
                assert Move.from_core(mv.to_core(), rules.matta_card) == mv
            m.play(rng.choice(m.legal_moves))


# --- the error family ---

@pytest.mark.parametrize("error", [InvalidCardError, InvalidMoveError, IllegalMoveError,
                                   RulesError, StateError, RecordError])
def test_one_error_family(error):
    assert issubclass(error, CirullaError) and issubclass(error, ValueError)


def test_record_error_names_its_event():
    e = RecordError("bad card", event=3)
    assert e.event == 3 and str(e) == "event 3: bad card"
    assert RecordError("bad header").event is None


# --- rules ---

def test_rules_are_frozen_values():
    r = Rules.preset("online")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.players = 3
    assert r == Rules.preset("online") and hash(r) == hash(Rules.preset("online"))
    assert r.replace(players=3).players == 3 and r.players == 2
    assert Rules(matta="none").matta_card is None and Rules().matta_card == Card.parse("7H")


# --- seat views (section 8) ---

def test_seat_view_shows_own_cards_public_facts_and_counts_only():
    m = Match(Rules(), dealer=0, manual_deal=True)
    m.deal(hands=["JS QS KS", "2H 3H 4H"], table="KC QC JC 6D")
    m.play("declare 2H 3H 4H")
    v0, v1 = m.view(0), m.view(1)
    assert set(v0.hand) == set(m.hand(0)) and v0.hand_sizes == (3, 3)
    assert set(v0.public[1]) == {Card.parse(c) for c in ("2H", "3H", "4H")}
    assert v0.hidden_count(1) == 0 and v1.hidden_count(0) == 3
    assert v0.declarations == (0, 3) and v0.declared == (False, True)
    deal = v1.history[0]
    assert deal.hands[0] == () and len(deal.hands[1]) == 3      # the other hand is masked
    assert set(v1.unseen()) == set(DECK) - set(m.hand(1)) - set(m.table)
    assert "seat 0" in str(v0)
    v0.validate()
    v1.validate()


def test_seat_view_remembers_plays_and_the_named_matta():
    m = Match(Rules(), dealer=0, manual_deal=True)
    m.deal(hands=["JS QS KS", "7H 5C 2S"], table="KC 4S 6H 3D")
    m.play("declare 7H=A 5C 2S")
    m.play("7H x KC 4S 6H 3D")
    v = m.view(0)
    assert v.matta_as == 0 and v.played_this_round[1] == (Card.parse("7H"),)
    assert set(v.piles[1]) == {Card.parse(c) for c in ("7H", "KC", "4S", "6H", "3D")}
    assert v.scope == (0, 1) and v.last_capturer == 1


@pytest.mark.parametrize("change, field", [
    (dict(stock_size=3), "accounts for"),
    (dict(hand_sizes=(3,)), "hand_sizes"),
    (dict(seat=5), "seat"),
    (dict(hand=()), "hand"),
])
def test_seat_view_validate_rejects_impossible_views(change, field):
    v = Match(Rules(), seed=2).view(0)
    with pytest.raises(StateError, match=field):
        dataclasses.replace(v, **change).validate()


def test_seat_view_validate_rejects_a_card_twice():
    m = Match(Rules(), seed=2)
    v = m.view(0)
    with pytest.raises(StateError, match="also in"):
        dataclasses.replace(v, table=v.table + (v.hand[0],)).validate()


def test_seat_view_round_plays_rebuild_the_tables_and_reject_a_history_that_does_not_fit():
    m = Match(Rules(), dealer=0, manual_deal=True)
    m.deal(hands=["JS QS 5S", "3H 2C 6S"], table="KC QC JC 5D")
    m.play("3H")                                # seat 1 drops
    m.play("5S x 5D")                           # seat 0 captures
    m.play("6S x QC")                           # seat 1 captures by fifteen
    v = m.view(0)
    assert [(seat, set(cards_of(table)), str(move)) for _, seat, table, move in v.round_plays()] == [
        (1, set(parse_cards("KC QC JC 5D")), "3H"),
        (0, set(parse_cards("3H KC QC JC 5D")), "5S x 5D"),
        (1, set(parse_cards("3H KC QC JC")), "6S x QC")]
    turns = [i for i, e in enumerate(v.history) if isinstance(e, Turn)]
    # a drop of a card that is not on the table after it
    bad = list(v.history)
    bad[turns[2]] = Turn(1, Move.parse("2C"))
    with pytest.raises(StateError, match=rf"history\[{turns[2]}\]\.turn\.move: 2C does not fit the table"):
        dataclasses.replace(v, history=tuple(bad), played_this_round=(
            v.played_this_round[0], (Card.parse("3H"), Card.parse("2C")))).validate()
    # plays that are not the ones played_this_round lists
    with pytest.raises(StateError, match=r"history: seat 1's card plays .* are not played_this_round\[1\]"):
        dataclasses.replace(v, history=tuple(bad)).validate()


def test_seat_view_is_a_snapshot():
    m = Match(Rules(), seed=3)
    v = m.view(m.to_move)
    table = v.table
    m.play(m.legal_moves[0])
    assert v.table == table and m.view(0).table != table


# --- baseline players ---

def test_baseline_players_play_legal_moves():
    m = Match(Rules(players=3), seed=1)
    for player in (RandomPlayer(1), GreedyPlayer(), make_player("greedy"), make_player("random", seed=2)):
        assert player.choose(m) in m.legal_moves


def test_greedy_player_takes_the_settebello_and_the_scopa():
    m = position(Rules(), ["7C 2S", "KD"], "7D 3H 4S")
    assert str(GreedyPlayer().choose(m)) == "7C x 7D"
    m = position(Rules(), ["7C 2S", "KD"], "3H 4S")
    assert str(GreedyPlayer().choose(m)) == "7C x 3H 4S"


def test_baseline_player_errors_are_in_the_family():
    with pytest.raises(CirullaError, match="unknown level"):
        make_player("grandmaster")
    with pytest.raises(CirullaError, match="3 players"):
        self_play(Rules(), [RandomPlayer(), RandomPlayer(), RandomPlayer()])


def test_options_phases_and_methods_are_enums():
    """Strings are accepted where a person types them; what comes back is the enum."""
    from cirulla.solver.match import Phase
    from cirulla.solver.rules import AceOnAce, Capture, Declarations, Matta
    from cirulla.solver.search import SearchBudget, SearchMethod, search
    r = Rules(capture="optional", ace_on_ace="sweep", matta="QH")
    assert (r.capture, r.ace_on_ace, r.matta) == (Capture.OPTIONAL, AceOnAce.SWEEP, Matta.QUEEN_OF_HEARTS)
    assert Rules.preset("online").declarations is Declarations.MANDATORY
    assert r == Rules(capture=Capture.OPTIONAL, ace_on_ace=AceOnAce.SWEEP, matta=Matta.QUEEN_OF_HEARTS)
    with pytest.raises(RulesError) as e:
        Rules(ace_on_ace="everything")
    assert e.value.field == "ace_on_ace" and "only_ace, ace_or_fifteen, sweep" in str(e.value)
    m = Match(Rules(), seed=3)
    assert m.phase is Phase.PLAY and Match(Rules(), seed=3, manual_deal=True).phase is Phase.DEAL
    assert search(m.view(m.to_move), SearchBudget(iterations=200)).method is SearchMethod.ISMCTS
