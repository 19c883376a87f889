"""Helpers shared by the rules-engine tests: positions built from card texts,
move sets as texts, and whole random matches.

A position that a deal cannot reach directly is built through
``_core.CoreState.restore`` from a dict shaped like ``CoreState.export()``,
then put in a manual-deal Match, so the tests still go through the public
API (legal_moves, play, events) from there on.
"""
from __future__ import annotations

import random

from cirulla.solver import Card, Match, Move, Rules, _core
from cirulla.solver.cards import mask_of, parse_cards


def cards(text: str) -> list[Card]:
    return parse_cards(text)


def mask(text: str) -> int:
    return mask_of(parse_cards(text))


def texts(moves) -> set[str]:
    return {str(m) for m in moves}


def plays_of(match: Match, card: str) -> set[str]:
    """The legal moves that play `card`, as texts."""
    c = Card.parse(card)
    return {str(m) for m in match.legal_moves if m.card == c}


def declarations(match: Match) -> dict[str, int]:
    """The legal declarations, text -> points."""
    return {str(m): m.points for m in match.legal_moves if m.is_declaration}


def position(rules: Rules, hands: list[str], table: str = "", *, turn: int = 0,
             dealer: int | None = None, piles: dict[int, str] | None = None,
             rest_to: int | None = None, round_: int = 0, cval: dict[str, int] | None = None,
             declared: int = 0, public: dict[int, str] | None = None,
             scope: dict[int, int] | None = None, last_capturer: int = -1) -> Match:
    """A Match in the play phase with exactly these cards where they are said to be.

    Cards not placed stay in the stock (so the hand is not in its last round),
    unless ``rest_to`` names a side: then they go to that side's pile and the
    stock is empty, which makes the next plays the hand's last ones.
    ``cval`` gives a card a capture value other than its own (a named matta).
    """
    n = rules.players
    if dealer is None:
        dealer = (turn - 1) % n
    fields = _core.CoreState(rules.core, dealer).export()
    hand_masks = [mask(h) for h in hands] + [0] * (5 - len(hands))
    pile_masks = [0] * 5
    for side, text in (piles or {}).items():
        pile_masks[side] = mask(text)
    placed = 0
    for m in hand_masks + pile_masks + [mask(table)]:
        assert not placed & m, "a card is placed twice"
        placed |= m
    if rest_to is not None:
        pile_masks[rest_to] |= ((1 << 40) - 1) & ~placed
        placed = (1 << 40) - 1
    dealt = [i for i in range(40) if placed >> i & 1]
    stock = dealt + [i for i in range(40) if not placed >> i & 1]
    cv = fields["cval"]
    for text, value in (cval or {}).items():
        cv[Card.parse(text).index] = value
    pub = [0] * 5
    for seat, text in (public or {}).items():
        pub[seat] = mask(text)
    sc = [0] * 5
    for side, k in (scope or {}).items():
        sc[side] = k
    fields.update(hand=hand_masks, pile=pile_masks, table=mask(table), stock=stock,
                  stock_pos=len(dealt), cval=cv, turn=turn, round=round_,
                  round_cards=rules.round_cards(round_), declared=declared,
                  public=pub, scope=sc, last_capturer=last_capturer,
                  phase=_core.PHASE_PLAY)
    match = Match(rules, dealer=dealer, manual_deal=True)
    match._core = _core.CoreState.restore(rules.core, fields)
    return match


def all_cards(match: Match) -> list[Card]:
    """Every card the match can place now: hands, table, piles, undealt stock."""
    core = match._core
    out = [c for s in range(match.rules.players) for c in match.hand(s)]
    out += match.table
    out += [c for side in range(match.rules.n_sides) for c in match.pile(side)]
    out += [Card(i) for i in core.stock_order()]
    return out


def play_random(match: Match, rng: random.Random, *, max_moves: int = 100_000) -> Match:
    """Play uniformly random legal moves until the match is over."""
    for _ in range(max_moves):
        if match.is_over:
            return match
        match.play(rng.choice(match.legal_moves))
    raise AssertionError("the match did not end")


def random_match(rules: Rules, seed: int, **kw) -> Match:
    return play_random(Match(rules, seed=seed, **kw), random.Random(seed))


def move(text: str, rules: Rules | None = None) -> Move:
    r = rules or Rules()
    return Move.parse(text, matta=r.matta_card)
