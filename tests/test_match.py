"""The Match API over a whole match: deals (random and manual), phases, undo,
copy, views; and whole random matches for every preset and player count that
must finish with consistent scores (R-TARGET, R-WINNER, R-HANDS-LIMIT,
R-CAPPOTTO, R-CAPOTUN)."""
from __future__ import annotations

import random

import pytest

from cirulla.solver import (
    CATEGORIES,
    DECK,
    CirullaError,
    Deal,
    HandEnd,
    IllegalMoveError,
    InvalidCardError,
    InvalidMoveError,
    Match,
    Move,
    Rules,
    StateError,
    Turn,
)
from cirulla.solver.players import GreedyPlayer, RandomPlayer, self_play
from rules_support import all_cards, hands_of, random_match, recount_hand

PRESET_PLAYERS = [(p, n) for p in ("classic", "online", "relaxed", "extended", "cirullone")
                  for n in (2, 3, 4)] + [("five", 5)]


def check_match(m: Match) -> None:
    """A finished match is consistent: hand totals add up to the match scores, every
    hand's points equal a recount from its events, and the winner is the one
    R-TARGET / R-WINNER / R-HANDS-LIMIT / R-CAPPOTTO / R-CAPOTUN name."""
    r = m.rules
    assert m.is_over and m.phase == "over" and m.legal_moves == []
    totals = [0] * r.n_sides
    ends = [e for e in m.events if isinstance(e, HandEnd)]
    for i, (events, end) in enumerate(zip(hands_of(m), ends, strict=False)):
        assert end.hand == i
        for s in end.sides:
            totals[s.side] += s.total
            assert s.match_total == totals[s.side]
        recount = recount_hand(r, events)
        assert [{c: getattr(s, c) for c in CATEGORIES} for s in end.sides] == recount["points"]
        assert end.cappotto_side == recount["cappotto"]
        if i < len(ends) - 1:                       # the match went on after this hand
            assert end.cappotto_side is None
            best = max(totals)
            decided = (i + 1 >= r.hands) if r.hands else best >= r.target
            assert not decided or totals.count(best) > 1
    assert totals == m.scores
    last = m.events[-1]
    if isinstance(last, Deal) and last.capotun:                         # R-CAPOTUN
        assert m.winner == r.side_of(last.dealer)
    elif ends[-1].cappotto_side is not None:                                    # R-CAPPOTTO
        assert m.winner == ends[-1].cappotto_side
    else:
        assert isinstance(last, HandEnd)
        if r.hands:                                                      # R-HANDS-LIMIT
            assert len(ends) >= r.hands
        else:                                                            # R-TARGET
            assert max(m.scores) >= r.target
        assert m.scores[m.winner] == max(m.scores) and m.scores.count(max(m.scores)) == 1


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("preset, players", PRESET_PLAYERS)
def test_whole_random_matches_finish_consistently(preset, players, seed):
    m = random_match(Rules.preset(preset, players=players), seed)
    check_match(m)


@pytest.mark.parametrize("options", [
    dict(capotun=True, target=31), dict(hands=2), dict(re_bello=True, grande_long=True,
                                                       piccola_to_seven=True, buona_stack=True),
    dict(grande_in_hand=True, matta="QH"), dict(matta="none", capture="optional"),
])
@pytest.mark.parametrize("preset, players", [("classic", 2), ("classic", 3), ("online", 4),
                                             ("cirullone", 2), ("five", 5)])
def test_whole_random_matches_with_variants(preset, players, options):
    for seed in range(2):
        check_match(random_match(Rules.preset(preset, players=players, **options), seed))


@pytest.mark.parametrize("preset, players", [("classic", 2), ("classic", 4), ("five", 5)])
def test_whole_greedy_matches(preset, players):
    rules = Rules.preset(preset, players=players)
    m = self_play(rules, [GreedyPlayer() if i % 2 else RandomPlayer(i) for i in range(players)],
                  seed=7)
    check_match(m)


def test_a_match_won_by_a_capotun_in_its_second_hand():
    """R-CAPOTUN ends the match at the deal, whatever the scores (check_match agrees)."""
    rules = Rules(players=3, capotun=True)
    m = Match(rules, dealer=0, manual_deal=True)
    m.deal(hands=["AD 2D 3D", "4D 5D 6D", "AH 2H 3H"], table="7D JD QD KH")
    rng = random.Random(1)
    while m.hand_number == 0:
        if m.phase == "deal":
            dealt = {c for d in m.events if isinstance(d, Deal) for h in d.hands for c in h}
            dealt |= set(m.events[0].table)
            rest = sorted(c for c in DECK if c not in dealt)
            m.deal(hands=[rest[0:3], rest[3:6], rest[6:9]])
        else:
            m.play(rng.choice(m.legal_moves))
    m.deal(hands=["AD 2D 3D", "4D 5D 6D", "AH 2H 3H"], table="KC KD KH KS")
    assert m.is_over and m.winner == 1                 # the second hand's dealer, seat 1
    check_match(m)


# --- phases and the flow ---

def test_a_new_match_is_dealt_and_waits_for_the_first_player():
    m = Match(Rules(), seed=4)
    assert m.phase == "play" and m.hand_number == 0 and m.round == 0
    assert m.to_move == (m.dealer + 1) % 2
    assert [len(m.hand(s)) for s in (0, 1)] == [3, 3] and len(m.table) in (0, 4)
    assert m.stock_size == 30
    assert sorted(all_cards(m)) == sorted(all_cards(m.copy()))


def test_manual_deal_waits_for_cards_round_by_round():
    m = Match(Rules(), dealer=1, manual_deal=True)
    assert m.phase == "deal" and m.legal_moves == []
    with pytest.raises(StateError, match="phase 'deal'"):
        m.play("7C")
    m.deal(hands=["AD 2D 3D", "4D 5D 6D"], table="7D JD QD KH")   # 7+8+9+10 = 34: no buona
    assert m.to_move == 0 and m.stock_size == 30
    while m.phase == "play":
        m.play(m.legal_moves[-1])
    assert m.phase == "deal" and m.round == 1
    with pytest.raises(StateError, match="table gets 0"):
        m.deal(hands=["AH 2H 3H", "4H 5H 6H"], table="7H")
    with pytest.raises(StateError, match="dealt already"):
        m.deal(hands=["AD 2H 3H", "4H 5H 6H"])
    d = m.deal(hands=["AH 2H 3H", "4H 5H 6H"])
    assert d.round == 1 and d.table == () and m.stock_size == 24


@pytest.mark.parametrize("hands, table, message", [
    (["AD 2D 3D"], "7D JD QD KH", "1 holdings"),
    (["AD 2D 3D", "4D 5D"], "7D JD QD KH", "seat 1 gets 3"),
    (["AD 2D 3D", "4D 5D 6D"], "7D JD QD", "table gets 4"),
    (["AD 2D 3D", "4D 5D 3D"], "7D JD QD KH", "3D is dealt twice"),
    (["AD 2D 3D", "4D 5D 6D"], "7D JD QD 6D", "6D is dealt twice"),
])
def test_manual_deal_errors(hands, table, message):
    m = Match(Rules(), dealer=0, manual_deal=True)
    with pytest.raises(StateError, match=message):
        m.deal(hands=hands, table=table)
    assert m.phase == "deal" and m.events == []


def test_manual_deal_bad_card_text():
    m = Match(Rules(), dealer=0, manual_deal=True)
    with pytest.raises(InvalidCardError, match="9D"):
        m.deal(hands=["AD 2D 9D", "4D 5D 6D"], table="7D JD QD KH")


def test_deal_when_no_deal_is_due():
    m = Match(Rules(), seed=1)
    with pytest.raises(StateError, match="no deal is due"):
        m.deal(hands=["AD 2D 3D", "4D 5D 6D"])


def test_constructor_errors():
    with pytest.raises(StateError, match="dealer"):
        Match(Rules(), dealer=2)
    with pytest.raises(StateError, match="names"):
        Match(Rules(), names=["a", "b", "c"])
    with pytest.raises(StateError, match=r"names are text, got \['a', 5\]"):    # a record could not hold it
        Match(Rules(), names=["a", 5])
    assert Match(Rules(players=3), seed=1, names=["a", "b", "c"]).names == ("a", "b", "c")


def test_seat_and_side_errors():
    m = Match(Rules(), seed=1)
    for call in (lambda: m.hand(2), lambda: m.view(-1), lambda: m.public("0"), lambda: m.pile(2)):
        with pytest.raises(StateError):
            call()


def test_play_after_the_end_is_refused():
    m = random_match(Rules(target=11), seed=2)
    with pytest.raises(StateError, match="over"):
        m.play("7C")


def test_illegal_moves_say_why():
    """why_illegal gives the reason without raising; play raises it; the seat's
    view, asked the same, gives the same reason."""
    m = Match(Rules(), dealer=0, manual_deal=True)
    m.deal(hands=["2S 3S 4S", "5H 6H KC"], table="5D JD QD KH")
    cases = [("AS", "does not hold AS"), ("5H x JD", "R-SIMPLE"), ("5H", "R-MUST"),
             ("KC x 2S", "not on the table"), ("declare 5H 6H KC", "not a declaration"),
             ("declare 2S 3S 4S", "does not hold")]
    view = m.view(m.to_move)
    for text, why in cases:
        reason = m.why_illegal(text)
        assert reason is not None and why in reason
        assert view.why_illegal(text) == reason
        with pytest.raises(IllegalMoveError) as refused:
            m.play(text)
        assert refused.value.reason == reason
    assert m.why_illegal("5H x 5D") is None and m.why_illegal(Move.parse("5H x 5D")) is None
    assert view.why_illegal("5H x 5D") is None
    assert isinstance(IllegalMoveError("x"), CirullaError) and isinstance(IllegalMoveError("x"), ValueError)
    assert len(m.events) == 1                      # nothing was played


def test_why_illegal_when_no_move_is_due():
    """Out of the play phase, or asked of a seat not to move, the reason says so;
    a text that is no move is bad input, and raises."""
    m = Match(Rules(), dealer=0, manual_deal=True)
    assert m.why_illegal("AS") == "no move is due: the match is in phase 'deal'"
    m.deal(hands=["2S 3S 4S", "5H 6H KC"], table="5D JD QD KH")
    assert "seat 1 is to move, not the view's seat 0" in m.view(0).why_illegal("2S")
    with pytest.raises(InvalidMoveError):
        m.why_illegal("2S x")
    with pytest.raises(InvalidMoveError):
        m.view(1).why_illegal("")
    over = random_match(Rules(target=11), seed=2)
    assert over.why_illegal("7C") == "no move is due: the match is in phase 'over'"


def _candidates(match: Match) -> set[Move]:
    """The legal moves and moves near them: every held card dropped, taking each
    table card alone or the whole table, a card not held, and declarations."""
    held, table = match.hand(match.to_move), match.table
    out = set(match.legal_moves)
    for c in held:
        out |= {Move(c), Move(c, frozenset(table))} | {Move(c, frozenset([t])) for t in table}
    out.add(Move(next(c for c in DECK if c not in held)))
    out |= {Move(declared=frozenset(held[:3])), Move(declared=frozenset(DECK[:3]))}
    return out


@pytest.mark.parametrize("preset, players", [("classic", 2), ("online", 3), ("cirullone", 2), ("five", 5)])
def test_why_illegal_is_none_exactly_for_the_legal_moves(preset, players):
    """At every decision of random matches: a move is legal iff why_illegal has no
    reason for it; the view of the seat to move gives the match's reasons (they
    read only what that seat sees); and play refuses with the same reason."""
    m = Match(Rules.preset(preset, players=players, hands=1), seed=players)
    rng = random.Random(players)
    while not m.is_over:
        legal, view = m.legal_moves, m.view(m.to_move)
        for move in _candidates(m):
            reason = m.why_illegal(move)
            assert (reason is None) == (move in legal), (move, reason)
            assert view.why_illegal(move) == reason
        illegal = next(x for x in _candidates(m) if x not in legal)
        with pytest.raises(IllegalMoveError) as refused:
            m.play(illegal)
        assert refused.value.reason == m.why_illegal(illegal)
        m.play(rng.choice(legal))


# --- undo and copy ---

def test_undo_a_move_a_deal_and_a_hand_end():
    rng = random.Random(5)
    m = Match(Rules(), seed=5)
    before = (m.core.export(), list(m.events))
    m.play(rng.choice(m.legal_moves))
    m.undo()
    assert (m.core.export(), m.events) == before
    # the move that ends a hand (and deals the next one) undoes in one step
    while not any(isinstance(e, HandEnd) for e in m.events):
        state = (m.core.export(), list(m.events), list(m.scores), m.hand_number)
        m.play(rng.choice(m.legal_moves))
    m.undo()
    assert (m.core.export(), m.events, m.scores, m.hand_number) == state
    with pytest.raises(StateError, match="nothing to undo"):
        Match(Rules(), seed=1).undo()


def test_undo_in_a_later_hand_keeps_the_deals_to_come():
    """Undoing a move of the second hand restores the shuffle's generator as it
    was after that hand's shuffle: the third hand is dealt as without the undo
    (the generator's state is read once a hand, not at every move)."""
    def play_on(m: Match, rng: random.Random, undo_at: int | None) -> list[object]:
        moves = 0
        while m.hand_number < 2 and not m.is_over:
            move = rng.choice(m.legal_moves)
            if m.hand_number == 1 and moves == undo_at:
                m.play(m.legal_moves[-1])
                m.undo()
            m.play(move)
            moves += m.hand_number == 1
        return list(m.events)

    undone = play_on(Match(Rules(), seed=3), random.Random(3), 4)
    assert undone == play_on(Match(Rules(), seed=3), random.Random(3), None)


def test_copy_is_independent():
    m = Match(Rules(), seed=6)
    c = m.copy()
    c.play(c.legal_moves[0])
    assert len(c.events) == len(m.events) + 1
    assert m.core.export() != c.core.export()
    # both go on identically from the same state
    m.play(m.legal_moves[0])
    assert m.events == c.events
    rng1, rng2 = random.Random(9), random.Random(9)
    a, b = m.copy(), m.copy()
    while not a.is_over:
        a.play(rng1.choice(a.legal_moves))
        b.play(rng2.choice(b.legal_moves))
    assert a.events == b.events and a.scores == b.scores


def test_restore_sets_up_a_position_a_deal_cannot_reach():
    """A match restored from a hand's core state plays on from there as the
    original does, to the hand's end; a state with no move due is refused."""
    m = Match(Rules(players=3), seed=4)
    rng = random.Random(4)
    for _ in range(5):
        m.play(rng.choice(m.legal_moves))
    r = Match.restore(m.rules, m.core.export(), names=["a", "b", "c"])
    assert (r.to_move, r.dealer, r.round, r.table, r.names, r.events) == \
        (m.to_move, m.dealer, m.round, m.table, ("a", "b", "c"), [])
    assert [r.hand(s) for s in range(3)] == [m.hand(s) for s in range(3)] and r.legal_moves == m.legal_moves
    start = len(m.events)
    while r.phase == "play":                   # to the round's end: the next deal is the caller's
        move = rng.choice(m.legal_moves)
        assert r.play(move) == m.play(move)
    assert r.events == m.events[start:start + len(r.events)] and r.hand(0) == []
    with pytest.raises(StateError, match="a move due") as refused:
        Match.restore(r.rules, r.core.export())
    assert refused.value.field == "phase"


def test_restore_refuses_a_state_no_hand_can_be_in():
    """Match.restore names what is wrong with fields a caller set up by hand, as
    a view's checks do (the core would take them as they are)."""
    m = Match(Rules(), seed=1)
    good = m.core.export()
    first = good["hand"][0] & -good["hand"][0]              # a card of seat 0's

    def refused(**changes) -> tuple[str, str]:
        with pytest.raises(StateError) as e:
            Match.restore(m.rules, {**good, **changes})
        return e.value.field, str(e.value)

    assert refused(turn=7) == ("turn", "turn: 7 is not a seat 0..1 (R-SEATS)")
    assert refused(hand="x") == ("hand", "hand: must be a list of 5 whole numbers")
    field, why = refused(table=good["table"] | first)
    assert field == "table" and why.endswith(" placed twice")
    field, why = refused(table=0)
    assert field == "stock" and why.endswith(" nowhere")
    assert refused(stock_pos=41) == ("stock_pos", "stock_pos: 41 is not 0..40")
    assert refused(stock=[0] * 40)[0] == "stock"
    assert refused(table=1 << 45)[0] == "table"
    assert refused(hand=[*good["hand"][:2], first, 0, 0]) == ("hand[2]", "hand[2]: 2 players have no such seat or side")
    fields = {k: v for k, v in good.items() if k != "turn"}
    with pytest.raises(StateError, match="fields: missing turn, unknown bogus"):
        Match.restore(m.rules, {**fields, "bogus": 1})
    assert Match.restore(m.rules, good).legal_moves == m.legal_moves


def test_hand_points_and_breakdown_categories():
    m = Match(Rules(players=3), seed=3)
    assert len(m.hand_points()) == 3 and all(list(p) == list(CATEGORIES) for p in m.hand_points())


def test_events_are_deals_turns_and_hand_ends_in_order():
    m = random_match(Rules(hands=1), seed=4)
    kinds = {type(e) for e in m.events}
    assert kinds <= {Deal, Turn, HandEnd}
    assert isinstance(m.events[0], Deal) and isinstance(m.events[-1], HandEnd)
