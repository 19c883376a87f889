"""Property tests (hypothesis) of the rules engine against independent oracles.

- R-DECK: the 40 cards are always all accounted for through random play.
- R-SIMPLE, R-FIFTEEN, R-ACE, R-ACE-ACE, R-CHOICE, R-MUST, R-MOVE: the core's
  captures equal a brute-force enumeration of every subset of the table,
  written below from docs/rules.md section 5, under every option combination.
- R-DECL-*, R-MATTA: the core's declarations equal a brute-force enumeration
  of every triple (and pair of triples, R-VC) and every naming of the matta.
- Section 6: end-of-hand scoring equals a plain recount from the piles, and
  the piles equal a recount from the events.
- Records round-trip; seeded self-play is reproducible; undo restores
  exactly; a SeatView never holds another seat's hidden cards.
"""
from __future__ import annotations

import dataclasses
import itertools
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cirulla.solver import CATEGORIES, DECK, Card, HandEnd, Match, Rules, _core, record
from cirulla.solver.cards import cards_of
from cirulla.solver.players import RandomPlayer, self_play
from cirulla.solver.rules import AceOnAce, Capture
from cirulla.solver.view import SeatView
from rules_support import all_cards, hands_of, position, recount_hand, score_oracle

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PRESET_PLAYERS = [(p, n) for p in ("classic", "online", "relaxed", "extended", "cirullone")
                  for n in (2, 3, 4)] + [("five", 5)]

# rules for random play: a preset and a player count, and a few variants on top
rules_st = st.builds(
    lambda pn, extra: Rules.preset(pn[0], players=pn[1], **extra),
    st.sampled_from(PRESET_PLAYERS),
    st.fixed_dictionaries({}, optional={
        "buona_stack": st.booleans(), "grande_in_hand": st.booleans(),
        "capotun": st.booleans(), "re_bello": st.booleans(), "grande_long": st.booleans(),
        "piccola_to_seven": st.booleans(), "matta": st.sampled_from(["7H", "QH", "none"]),
        "ace_on_ace": st.sampled_from(list(AceOnAce)), "capture": st.sampled_from(list(Capture)),
        "declarations": st.sampled_from(["optional", "mandatory"]),
    }))


def random_steps(match: Match, rng: random.Random, steps: int):
    """Yield after every random move, up to `steps` moves or the match's end."""
    for _ in range(steps):
        if match.is_over:
            return
        match.play(rng.choice(match.legal_moves))
        yield


# --- R-DECK: every card accounted for ---

@FAST
@given(rules=rules_st, seed=st.integers(0, 2**32))
def test_R_DECK_forty_cards_always_accounted_for(rules, seed):
    m = Match(rules, seed=seed)
    rng = random.Random(seed)
    assert sorted(all_cards(m)) == sorted(DECK)
    for _ in random_steps(m, rng, 120):
        assert sorted(all_cards(m)) == sorted(DECK)
        if not m.is_over:
            assert len(m.hand(m.to_move)) > 0


# --- captures: the brute-force oracle of section 5 ---

def oracle_plays(hand: list[Card], table: list[Card], value: dict[Card, int], rules: Rules):
    """Every (card, set taken) docs/rules.md section 5 allows, by trying every subset."""
    subsets = [frozenset(s) for k in range(1, len(table) + 1)
               for s in itertools.combinations(table, k)]

    def total(s):
        return sum(value[c] for c in s)

    aces = [c for c in table if value[c] == 1]          # a matta named ace is an ace
    out = set()
    for card in hand:
        v = value[card]
        takes: set[frozenset] = set()
        if table and v == 1:
            if not aces or rules.ace_on_ace == "sweep":
                takes.add(frozenset(table))              # R-ACE, R-ACE-ACE sweep
            else:
                takes |= {frozenset([a]) for a in aces}  # R-ACE-ACE only_ace
                if rules.ace_on_ace == "ace_or_fifteen":
                    takes |= {s for s in subsets if 1 + total(s) == 15}
        elif table:
            simple = {s for s in subsets if total(s) == v}                   # R-SIMPLE
            if rules.single_match_first and any(value[c] == v for c in table):
                simple = {s for s in simple if len(s) == 1}                  # R-CHOICE
            takes = simple | {s for s in subsets if v + total(s) == 15}      # R-FIFTEEN
        out |= {(card, s) for s in takes}
        if not takes or rules.capture == "optional":                         # R-MUST
            out.add((card, frozenset()))
    return out


@pytest.mark.parametrize("capture, ace_on_ace, single_match_first",
                         list(itertools.product(Capture, AceOnAce, (False, True))))
@settings(max_examples=80, deadline=None)
@given(deck=st.permutations(range(40)), n_hand=st.integers(1, 4), n_table=st.integers(0, 9),
       matta_at=st.none() | st.integers(0, 12), named=st.none() | st.integers(1, 10))
def test_captures_equal_brute_force(capture, ace_on_ace, single_match_first,
                                    deck, n_hand, n_table, matta_at, named):
    rules = Rules(capture=capture, ace_on_ace=ace_on_ace, single_match_first=single_match_first)
    deck = list(deck)
    if matta_at is not None and matta_at < n_hand + n_table:
        deck.remove(16)                                  # put the matta (7H) in play
        deck.insert(matta_at, 16)
    hand = [Card(i) for i in deck[:n_hand]]
    table = [Card(i) for i in deck[n_hand:n_hand + n_table]]
    value = {c: c.value for c in DECK}
    cval = {}
    if named is not None:                                # a matta named by a declaration
        value[Card(16)] = named
        cval = {"7H": named}
    m = position(rules, [" ".join(map(str, hand)), ""], " ".join(map(str, table)),
                 cval=cval, declared=0b1)
    legal = m.legal_moves
    got = [(mv.card, mv.captured) for mv in legal]
    assert len(got) == len(set(got)), "a move listed twice (R-MOVE)"
    assert set(got) == oracle_plays(hand, table, value, rules)


# --- declarations: the brute-force oracle of section 4 ---

def triple_points(rules: Rules, triple: frozenset[Card], value: dict[Card, int]) -> int:
    vals = [value[c] for c in triple]
    if rules.grande_in_hand and {str(c) for c in triple} == {"JD", "QD", "KD"}:
        return 30                                        # R-V30
    decino = len(set(vals)) == 1                         # R-DECINO
    buona = sum(vals) <= 9                               # R-BUONA3
    if decino and buona and rules.buona_stack:
        return 13                                        # R-V13
    return 10 if decino else 3 if buona else 0           # R-DECL-ONE: the better one


def oracle_declarations(rules: Rules, holding: list[Card]) -> set:
    """Every (triples, matta rank, points) a holding may declare."""
    matta = rules.matta_card

    def namings(triple):
        """(rank named or None, points) for each way the triple scores (R-MATTA)."""
        out = []
        for rank in [None] + ([r for r in range(10) if r != matta.rank]
                              if matta in triple else []):
            value = {c: c.value for c in triple}
            if rank is not None:
                value[matta] = rank + 1
            pts = triple_points(rules, triple, value)
            if pts:
                out.append((rank, pts))
        return out

    triples = {frozenset(t): namings(frozenset(t)) for t in itertools.combinations(holding, 3)}
    out = {(frozenset([t]), rank, pts) for t, ns in triples.items() for rank, pts in ns}
    if rules.cirullone:                                  # R-VC: two disjoint triples
        for (a, na), (b, nb) in itertools.combinations(triples.items(), 2):
            if not a & b:
                out |= {(frozenset([a, b]), ra if ra is not None else rb, pa + pb)
                        for ra, pa in na for rb, pb in nb}
    return out


@settings(max_examples=300, deadline=None)
@given(deck=st.permutations(range(40)), cirullone=st.booleans(), buona_stack=st.booleans(),
       grande_in_hand=st.booleans(), matta=st.sampled_from(["7H", "QH", "none"]),
       low=st.booleans())
def test_declarations_equal_brute_force(deck, cirullone, buona_stack, grande_in_hand, matta, low):
    rules = Rules(cirullone=cirullone, buona_stack=buona_stack,
                  grande_in_hand=grande_in_hand, matta=matta)
    size = 6 if cirullone else 3
    if low:   # draw from the low cards and the court diamonds, where declarations are
        pool = [i for i in deck if i % 10 < 4 or i in (7, 8, 9, 16, 18)]
    else:
        pool = list(deck)
    holding = [Card(i) for i in pool[:size]]
    m = position(rules, ["", " ".join(map(str, holding))], "", turn=1, round_=0)
    got = [(frozenset(t for t in (mv.declared, mv.declared_second) if t), mv.matta_as, mv.points)
           for mv in m.legal_moves if mv.is_declaration]
    assert len(got) == len(set(got))
    assert set(got) == oracle_declarations(rules, holding)


# --- scoring: a plain recount ---

@settings(max_examples=150, deadline=None)
@given(players=st.sampled_from([2, 3, 4, 5]), owners=st.lists(st.integers(-1, 4), min_size=40,
                                                                max_size=40),
       grande_long=st.booleans(), piccola_to_seven=st.booleans(), re_bello=st.booleans(),
       scope=st.lists(st.integers(0, 4), min_size=5, max_size=5),
       decl=st.lists(st.sampled_from([0, 3, 10, 13, 30]), min_size=5, max_size=5))
def test_scoring_equals_a_recount_of_the_piles(players, owners, grande_long, piccola_to_seven,
                                               re_bello, scope, decl):
    rules = Rules(players=players, five_players=players == 5, grande_long=grande_long,
                  piccola_to_seven=piccola_to_seven, re_bello=re_bello)
    ns = rules.n_sides
    piles = [{c for c, o in zip(DECK, owners, strict=False) if o == side} for side in range(ns)]
    m = position(rules, [""] * players, "",
                 piles={s: " ".join(map(str, p)) for s, p in enumerate(piles)},
                 scope=dict(enumerate(scope[:ns])), decl=dict(enumerate(decl[:ns])))
    assert m.hand_points() == score_oracle(rules, piles, scope[:ns], decl[:ns])


@FAST
@given(rules=rules_st, seed=st.integers(0, 2**32))
def test_hand_ends_equal_a_recount_of_the_events(rules, seed):
    """Piles rebuilt from the captures in the events, scope from the scopa flags and the
    dealer's buona (and R-V5's low card), then scored by section 6: the HandEnd agrees;
    and so do the core's piles at the end of the hand."""
    m = Match(rules.replace(hands=2), seed=seed)
    rng = random.Random(seed)
    cores = []
    while not m.is_over:
        core, n = m.core, len(m.events)
        m.play(rng.choice(m.legal_moves))
        if any(isinstance(e, HandEnd) for e in m.events[n:]):
            cores.append(core)                           # that hand's final state
    for events, core in zip(hands_of(m), cores, strict=False):
        r = recount_hand(m.rules, events)
        end = events[-1]
        assert [{c: getattr(s, c) for c in CATEGORIES} for s in end.sides] == r["points"]
        assert (end.leftover_side, end.cappotto_side) == (r["leftover_side"], r["cappotto"])
        assert [set(cards_of(core.pile(s))) for s in range(m.rules.n_sides)] == r["piles"]


# --- records round-trip ---

def dealt_state(m: Match) -> dict:
    """The core's state but the order of the stock (a record keeps which cards were
    dealt, not the order of the undealt ones)."""
    d = m.core.export()
    d["stock"] = sorted(d["stock"][:d["stock_pos"]])
    return d


@settings(max_examples=40, deadline=None)
@given(rules=rules_st, seed=st.integers(0, 2**32), steps=st.integers(0, 150))
def test_records_round_trip(rules, seed, steps):
    m = Match(rules.replace(hands=2), seed=seed, names=[f"P{i}" for i in range(rules.players)])
    for _ in random_steps(m, random.Random(seed), steps):
        pass
    text = record.dumps(m)
    back = record.loads(text)
    assert back.events == m.events
    assert (back.scores, back.winner, back.phase, back.hand_number) == \
        (m.scores, m.winner, m.phase, m.hand_number)
    assert back.rules == m.rules and back.names == m.names
    assert dealt_state(back) == dealt_state(m)
    assert [str(x) for x in back.legal_moves] == [str(x) for x in m.legal_moves]
    assert record.dumps(back) == text


# --- reproducibility ---

@settings(max_examples=20, deadline=None)
@given(rules=rules_st, seed=st.integers(0, 2**32))
def test_seeded_self_play_is_reproducible(rules, seed):
    r = rules.replace(hands=2)
    players = lambda: [RandomPlayer(seed + i) for i in range(r.players)]   # noqa: E731
    a = self_play(r, players(), seed=seed)
    b = self_play(r, players(), seed=seed)
    assert a.events == b.events and a.scores == b.scores and a.winner == b.winner
    # the core's own playouts too
    s1 = _core.CoreState(r.core, 0)
    s1.shuffle(seed)
    s2 = s1.copy()
    s1.playout(seed, False)
    s2.playout(seed, False)
    assert s1.export() == s2.export()


# --- undo ---

def snapshot(m: Match):
    return (m.core.export(), list(m.events), list(m.scores), m.hand_number, m.winner,
            m.phase, m.to_move, [str(x) for x in m.legal_moves])


@FAST
@given(rules=rules_st, seed=st.integers(0, 2**32), depth=st.integers(1, 4))
def test_undo_restores_exactly(rules, seed, depth):
    m = Match(rules, seed=seed)
    rng = random.Random(seed)
    for _ in random_steps(m, rng, rng.randrange(0, 80)):
        pass
    before, twin = snapshot(m), m.copy()
    done = 0
    for _ in random_steps(m, rng, depth):
        done += 1
    for _ in range(done):
        m.undo()
    assert snapshot(m) == before
    # the shuffles to come too: the same plays from here deal the next hands' cards alike
    for _ in zip(random_steps(m, random.Random(seed), 120), random_steps(twin, random.Random(seed), 120),
                 strict=True):
        pass
    assert m.events == twin.events


@settings(max_examples=30, deadline=None)
@given(rules=rules_st, seed=st.integers(0, 2**32))
def test_undo_a_manual_deal(rules, seed):
    m = Match(rules, dealer=0, manual_deal=True)
    before = snapshot(m)
    deck = list(DECK)
    random.Random(seed).shuffle(deck)
    n = rules.round_cards(0)
    hands = [deck[i * n:(i + 1) * n] for i in range(rules.players)]
    table = deck[rules.players * n:rules.players * n + rules.table_cards]
    m.deal(hands=hands, table=table)
    m.undo()
    assert snapshot(m) == before


# --- what a seat knows (section 8) ---

def reachable(obj, seen=None):
    """Every object reachable through dataclass fields, tuples, lists, dicts, frozensets."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        children = [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    elif isinstance(obj, (tuple, list, set, frozenset)):
        children = list(obj)
    elif isinstance(obj, dict):
        children = list(obj.keys()) + list(obj.values())
    else:
        children = []
    for child in children:
        yield from reachable(child, seen)


@FAST
@given(rules=rules_st, seed=st.integers(0, 2**32))
def test_seat_view_never_holds_hidden_cards(rules, seed):
    m = Match(rules, seed=seed)
    rng = random.Random(seed)
    for _ in random_steps(m, rng, 60):
        if m.phase != "play":
            continue
        for seat in range(rules.players):
            v = m.view(seat)
            hidden = {c for s in range(rules.players) if s != seat
                      for c in set(m.hand(s)) - set(m.public(s))}
            objs = list(reachable(v))
            assert not hidden & {o for o in objs if isinstance(o, Card)}
            assert not any(isinstance(o, (Match, _core.CoreState)) for o in objs)
            v.validate()
            assert hidden <= set(v.unseen()) and not set(v.hand) & set(v.unseen())
            assert len(v.unseen()) == sum(v.hidden_count(s) for s in range(rules.players)) \
                + v.stock_size
            assert isinstance(v, SeatView) and set(v.hand) == set(m.hand(seat))
