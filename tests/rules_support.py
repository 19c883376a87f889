"""Helpers shared by the rules-engine tests: positions built from card texts,
move sets as texts, and whole random matches.

A position that a deal cannot reach directly is built by ``Match.restore``
from a dict shaped like ``CoreState.export()``, so the tests still go
through the public API (legal_moves, play, events) from there on.
"""
from __future__ import annotations

import random
import re

from cirulla.solver import CATEGORIES, DECK, Card, Deal, HandEnd, Match, Move, Rules, Turn, _core
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
             scope: dict[int, int] | None = None, decl: dict[int, int] | None = None,
             last_capturer: int = -1) -> Match:
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
    sc, dc = [0] * 5, [0] * 5
    for side, k in (scope or {}).items():
        sc[side] = k
    for side, k in (decl or {}).items():
        dc[side] = k
    fields.update(hand=hand_masks, pile=pile_masks, table=mask(table), stock=stock,
                  stock_pos=len(dealt), cval=cv, turn=turn, round=round_,
                  round_cards=rules.round_cards(round_), declared=declared,
                  public=pub, scope=sc, decl=dc, last_capturer=last_capturer,
                  phase=_core.PHASE_PLAY)
    return Match.restore(rules, fields)


def all_cards(match: Match) -> list[Card]:
    """Every card the match can place now: hands, table, piles, undealt stock."""
    core = match.core
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


# --- independent recounts (oracles written from docs/rules.md, not from the core) ---

PRIMIERA = dict(zip("A234567JQK", (16, 12, 13, 14, 15, 18, 21, 10, 10, 10), strict=False))   # R-PRIM


def score_oracle(rules: Rules, piles: list[set[Card]], scope: list[int],
                 decl: list[int]) -> list[dict[str, int]]:
    """Section 6 by the letter: points by side and category from the piles."""
    rows = [dict.fromkeys(CATEGORIES, 0) for _ in piles]

    def most(values: list[int], cat: str) -> None:      # strictly the most; a tie: nobody
        best = max(values)
        if values.count(best) == 1:
            rows[values.index(best)][cat] = 1

    def primiera(pile: set[Card]) -> int:
        return sum(max((PRIMIERA[str(c)[0]] for c in pile if str(c)[1] == suit), default=0)
                   for suit in "DHCS")

    for row, pile, sc, dc in zip(rows, piles, scope, decl, strict=False):
        diamonds = {str(c)[0] for c in pile if str(c)[1] == "D"}
        row["scope"], row["declarations"] = sc, dc
        row["settebello"] = int("7" in diamonds)
        if {"J", "Q", "K"} <= diamonds:
            row["grande"] = 5
            if rules.grande_long and "7" in diamonds:
                row["grande"] = 7 if "6" in diamonds else 6
        if {"A", "2", "3"} <= diamonds:
            run = 3
            for rank in "4567" if rules.piccola_to_seven else "456":
                if rank not in diamonds:
                    break
                run += 1
            row["piccola"] = run
        row["re_bello"] = int(rules.re_bello and "K" in diamonds)
    most([len(p) for p in piles], "cards")
    most([sum(str(c)[1] == "D" for c in p) for p in piles], "diamonds")
    most([primiera(p) for p in piles], "primiera")
    return rows


def recount_hand(rules: Rules, events) -> dict:
    """Replay one hand's events (its deals, turns and HandEnd) by hand: the piles,
    scope and declarations by side, the leftover's side, the points by
    section 6, cappotto. Uses only the events, never the core."""
    ns, n = rules.n_sides, rules.players
    side = rules.side_of
    piles = [set() for _ in range(ns)]
    scope, decl = [0] * ns, [0] * ns
    last, dealer, rnd, matta_value = -1, None, 0, None
    low: dict[int, int] = {}                        # R-V5: seat -> value in the 1-card round
    matta = rules.matta_card
    for e in events:
        if isinstance(e, Deal):
            if e.void:
                continue
            dealer, rnd = e.dealer, e.round
            if e.round == 0 and e.dealer_scope:    # R-DEALER-BUONA
                piles[side(dealer)] |= set(e.table)
                scope[side(dealer)] += e.dealer_scope
                last = side(dealer)
        elif isinstance(e, Turn):
            s, mv = side(e.seat), e.move
            if mv.is_declaration:
                decl[s] += mv.points
                if mv.matta_as is not None:
                    matta_value = mv.matta_as + 1
                continue
            if mv.captured:
                piles[s] |= set(mv.captured) | {mv.card}
                last = s
            scope[s] += e.scopa
            if rules.five_players and rnd == 2:
                low[e.seat] = matta_value if mv.card == matta and matta_value else mv.card.value
        elif isinstance(e, HandEnd):
            if rules.five_players:
                order = [(dealer + 1 + k) % n for k in range(n)]
                best = min((low[s], k) for k, s in enumerate(order))
                if best[0] <= 3:
                    scope[side(order[best[1]])] += 1
            leftover_side = last if e.leftover and last >= 0 else None
            if leftover_side is not None:
                piles[leftover_side] |= set(e.leftover)
            diamonds = {c for c in DECK if str(c)[1] == "D"}
            return dict(piles=piles, scope=scope, decl=decl, leftover_side=leftover_side,
                        points=score_oracle(rules, piles, scope, decl),
                        cappotto=next((k for k, p in enumerate(piles) if diamonds <= p), None))
    raise AssertionError("no HandEnd in these events")


def hands_of(match: Match) -> list[list]:
    """The match's events split by hand (from a hand's first deal to its HandEnd)."""
    out, cur = [], []
    for e in match.events:
        cur.append(e)
        if isinstance(e, HandEnd):
            out.append(cur)
            cur = []
    return out


def drawn(text: str, matta: Card | None = None) -> str:
    """A text as the terminal draws it for a player (cli.render.prose): its card
    codes as cards with suit symbols (the matta starred), " x " as " × ", its
    whitespace single spaces."""
    def one(m: re.Match) -> str:
        c = Card.parse(m.group(0))
        return c.symbol + ("*" if c == matta else "")
    text = re.sub(r"\b[A2-7JQK][DHCS](?![A-Za-z])", one, text)
    return " ".join(text.replace(" x ", " × ").split())
