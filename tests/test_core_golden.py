"""Golden values of the Cython rules core (solver/_core.pyx): a guard for
optimisations that must not change behaviour.

The numbers below were recorded from the core as it was at commit b40b364
("Cython rules core, ..."), before any performance work, by running this file
as a script (``python tests/test_core_golden.py``), which prints the tables.
They pin down, for many rule sets:

- ``bench_playouts(rules, N, seed, greedy)``: the sum of side 0's points over
  N seeded whole hands, random and greedy policy. Any change in the legal
  moves or their order, in the rng, the deal, apply_move, the greedy policy or
  scoring changes these totals (almost surely).
- a digest of seeded hands played through the Python-level ``CoreState`` API:
  every deal result, every ``legal_moves()`` list in order, the greedy choice,
  the state after every move, the final score and cappotto, plus a
  ``CoreState.playout`` from the first turn of each hand.

If a rule is changed on purpose, re-record (run this file) and say so in the
commit; a pure optimisation must leave every value here unchanged.
"""
from __future__ import annotations

import hashlib
import sys

import pytest

from cirulla.solver import _core

BASE = dict(n_players=2, capture_optional=0, ace_on_ace=0, single_match_first=0,
            decl_mandatory=0, matta=16, piccola_to_seven=0, grande_long=0,
            buona_stack=0, grande_in_hand=0, capotun=0, re_bello=0, cirullone=0,
            five_players=0)

# name -> overrides of BASE (classic, 2 players, matta 7H)
RULESETS: dict[str, dict[str, int]] = {
    "classic2": {},
    "classic3": dict(n_players=3),
    "classic4": dict(n_players=4),
    "capture_optional": dict(capture_optional=1),
    "ace_or_fifteen": dict(ace_on_ace=1),
    "ace_sweep": dict(ace_on_ace=2),
    "single_match_first": dict(single_match_first=1),
    "decl_mandatory": dict(decl_mandatory=1),
    "online": dict(single_match_first=1, decl_mandatory=1),
    "relaxed": dict(capture_optional=1, ace_on_ace=1),
    "matta_qh": dict(matta=18),
    "matta_none": dict(matta=-1),
    "buona_stack": dict(buona_stack=1),
    "grande_in_hand": dict(grande_in_hand=1),
    "scoring_variants": dict(piccola_to_seven=1, grande_long=1, re_bello=1),
    "capotun": dict(capotun=1),
    "cirullone2": dict(cirullone=1),
    "cirullone4": dict(cirullone=1, n_players=4, buona_stack=1, decl_mandatory=1),
    "five": dict(five_players=1, n_players=5),
    "five_mandatory": dict(five_players=1, n_players=5, decl_mandatory=1, ace_on_ace=2),
    "everything3": dict(n_players=3, capture_optional=1, ace_on_ace=1, buona_stack=1,
                        grande_in_hand=1, capotun=1, piccola_to_seven=1, grande_long=1,
                        re_bello=1),
}

BENCH_HANDS = 20000
BENCH_SEEDS = (1, 20240607)
API_HANDS = 150


def make_rules(name: str) -> _core.CoreRules:
    return _core.CoreRules(**{**BASE, **RULESETS[name]})


def bench_totals(name: str) -> list[int]:
    """[random seed1, random seed2, greedy seed1, greedy seed2]."""
    rules = make_rules(name)
    return [_core.bench_playouts(rules, BENCH_HANDS, seed, greedy)
            for greedy in (False, True) for seed in BENCH_SEEDS]


def _mix(x: int) -> int:
    """splitmix64 step, so the move choices do not depend on Python's random."""
    x = (x + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def _state(st: _core.CoreState, n_players: int, n_sides: int) -> tuple:
    return (st.phase, st.turn, st.round, st.round_cards, st.stock_pos, st.table,
            st.last_capturer, st.dealer_buona, st.instant_winner, st.declared,
            tuple(st.hand(k) for k in range(n_players)),
            tuple(st.public(k) for k in range(n_players)),
            tuple(st.pile(k) for k in range(n_sides)),
            tuple(st.scope(k) for k in range(n_sides)),
            tuple(st.decl(k) for k in range(n_sides)),
            tuple(st.cval(c) for c in range(40)))


def api_digest(name: str) -> str:
    """sha256 over API_HANDS seeded hands played through CoreState."""
    rules = make_rules(name)
    n_players = RULESETS[name].get("n_players", 2)
    n_sides = rules.n_sides
    h = hashlib.sha256()
    rng = 0xC0FFEE ^ len(name)
    for hand in range(API_HANDS):
        st = _core.CoreState(rules, hand % n_players)
        rng = _mix(rng)
        st.shuffle(rng)
        played_out = False
        while st.phase != _core.PHASE_OVER:
            if st.phase == _core.PHASE_DEAL:
                res = st.deal()
                h.update(repr(("deal", res)).encode())
                if res == _core.DEAL_RESULT_VOID:
                    rng = _mix(rng)
                    st.shuffle(rng)
                continue
            if not played_out:
                played_out = True
                for greedy in (False, True):
                    other = st.copy()
                    rng = _mix(rng)
                    other.playout(rng, greedy)
                    h.update(repr(("playout", other.score(), other.cappotto())).encode())
            moves = st.legal_moves()
            g = st.greedy_choice(moves)
            h.update(repr((moves, g)).encode())
            rng = _mix(rng)
            # alternate the greedy and a random policy so both kinds of states occur
            i = g if (rng >> 7) % 3 == 0 else (rng >> 20) % len(moves)
            st.apply(*moves[i])
            h.update(repr(_state(st, n_players, n_sides)).encode())
        h.update(repr(("end", st.score(), st.cappotto(), st.instant_winner)).encode())
    return h.hexdigest()[:32]


# --- recorded from the core at b40b364 (before the performance work) ---

GOLDEN_BENCH: dict[str, list[int]] = {
    'classic2': [132148, 132222, 187312, 187187],
    'classic3': [78953, 79853, 116872, 116571],
    'classic4': [132012, 131602, 187405, 188341],
    'capture_optional': [96593, 95755, 182984, 183421],
    'ace_or_fifteen': [131984, 132248, 187356, 187231],
    'ace_sweep': [132431, 132436, 188651, 188495],
    'single_match_first': [131509, 131615, 187388, 187186],
    'decl_mandatory': [164164, 164156, 187312, 187187],
    'online': [164132, 164088, 187388, 187186],
    'relaxed': [95584, 95324, 183060, 183458],
    'matta_qh': [131128, 130588, 187334, 186683],
    'matta_none': [125926, 125430, 171381, 171686],
    'buona_stack': [132352, 132450, 188473, 188327],
    'grande_in_hand': [133588, 131444, 187762, 187547],
    'scoring_variants': [144572, 144711, 199563, 199399],
    'capotun': [131499, 132298, 187293, 187175],
    'cirullone2': [142777, 142165, 238356, 238011],
    'cirullone4': [234082, 233113, 299967, 300584],
    'five': [46341, 46238, 65217, 65050],
    'five_mandatory': [57427, 58134, 65636, 65511],
    'everything3': [62629, 62743, 121936, 121837],
}

GOLDEN_API: dict[str, str] = {
    'classic2': '45163e33387e3234a770d6a0b86dcadf',
    'classic3': 'ea8d3a2883545fec75ecf73f9db1f4dd',
    'classic4': 'cb5b1688c96329a257c762a64963b405',
    'capture_optional': 'a8759993b47fd68e63b9f394601621d7',
    'ace_or_fifteen': '0aba6d1af47190fa902d7539bf5a786b',
    'ace_sweep': 'b30e4fe0ae8b0df0d85496f7ca691ab7',
    'single_match_first': '9e4867b3daf0b521a14094a44b7a2bce',
    'decl_mandatory': 'a24e1ec60596d76f8b2ad936ffe06fe7',
    'online': 'e82be511998aeebb77e6da8c900c9920',
    'relaxed': '5271eb4e39ec473f9567e2333e779143',
    'matta_qh': '4a2c12b1b6af50ec58c8166d6739551a',
    'matta_none': 'b2f9217ef76e08adcaaeddccb94b8c62',
    'buona_stack': 'f0101640a75207c22804463532b1912d',
    'grande_in_hand': 'b0d5b80084efc003220bfebc48f71ee0',
    'scoring_variants': '0b239ea977038b30bd071f475e93eded',
    'capotun': '3337f455512a071da4950e78be30e7b9',
    'cirullone2': '063a782fddf11be1770934caa07a29d5',
    'cirullone4': '024b4b4991822cfd532fd2bb042f7480',
    'five': '2fedda3a5eb90cd4879525fb86caa6bf',
    'five_mandatory': '3c32f01e4275cc720957378b514ec4f6',
    'everything3': 'dfd721b9e2bd7992edfdd3fccd38cf72',
}


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_bench_playouts_totals(name: str) -> None:
    assert bench_totals(name) == GOLDEN_BENCH[name]


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_api_hands_digest(name: str) -> None:
    assert api_digest(name) == GOLDEN_API[name]


# --- a reference for the move order: the core's move generation as it was at
# b40b364 (a depth-first search over the table sorted by capture value),
# ported line by line, compared with legal_moves() on random positions ---

def _ref_triple_points(rules: dict, cards: int, v0: int, v1: int, v2: int) -> int:
    pts = 0
    if rules["grande_in_hand"] and cards == (1 << 7 | 1 << 8 | 1 << 9):
        return 30
    if v0 == v1 == v2:
        pts = 10
    if v0 + v1 + v2 <= 9:
        if pts and rules["buona_stack"]:
            pts = 13
        elif not pts:
            pts = 3
    return pts


def _bits(x: int) -> list[int]:
    return [c for c in range(64) if x >> c & 1]


def _ref_triple_namings(rules: dict, cards: int) -> list[tuple[int, int]]:
    matta = rules["matta"]
    cs = _bits(cards)
    v = [c % 10 + 1 for c in cs]
    mi = cs.index(matta) if matta in cs else -1
    out = []
    pts = _ref_triple_points(rules, cards, *v)
    if pts:
        out.append((-1, pts))
    if mi >= 0:
        for rank in range(10):
            if rank == matta % 10:
                continue
            v[mi] = rank + 1
            pts = _ref_triple_points(rules, cards, *v)
            if pts:
                out.append((rank, pts))
    return out


def _ref_declarations(rules: dict, h: int) -> list[tuple]:
    cards = _bits(h)
    out = []
    if len(cards) == 1:
        if rules["five_players"] and cards[0] == rules["matta"]:
            out += [(-1, h, 0, rank, 0) for rank in range(3)]
        return out
    triples = []
    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            for k in range(j + 1, len(cards)):
                a = 1 << cards[i] | 1 << cards[j] | 1 << cards[k]
                names = _ref_triple_namings(rules, a)
                if names:
                    triples.append((a, names))
    for a, names in triples:
        out += [(-1, a, 0, rank, pts) for rank, pts in names]
    for i in range(len(triples)):
        for j in range(i + 1, len(triples)):
            (a, na), (b, nb) = triples[i], triples[j]
            if a & b:
                continue
            for x, px in na:
                for y, py in nb:
                    if x >= 0 and y >= 0:
                        continue
                    out.append((-1, a, b, x if x >= 0 else y, px + py))
    return out


def _ref_moves(rules: dict, f: dict) -> list[tuple]:
    """legal_moves() of the position f (export()'s fields) by the old algorithm."""
    if f["phase"] != _core.PHASE_PLAY:
        return []
    seat, cval, table = f["turn"], f["cval"], f["table"]
    h = f["hand"][seat]
    out: list[tuple] = []
    if not (f["declared"] >> seat & 1) and bin(h).count("1") == f["round_cards"]:
        out = _ref_declarations(rules, h)
        if rules["decl_mandatory"]:
            scoring = [m for m in out if m[4] > 0]
            if scoring:
                return scoring
    tab = sorted(_bits(table), key=lambda c: (cval[c], c))     # stable: by value, then card
    tval = [cval[c] for c in tab]
    ace_on_table = 1 in tval

    def subsets(start: int, remaining: int, taken: int, emit) -> None:
        for i in range(start, len(tab)):
            v = tval[i]
            if v > remaining:
                break
            if v == remaining:
                emit(taken | 1 << tab[i])
            else:
                subsets(i + 1, remaining - v, taken | 1 << tab[i], emit)

    for c in _bits(h):
        v = cval[c]
        before = len(out)
        def emit(take: int, c: int = c) -> None:
            out.append((c, take, 0, -1, 0))
        if table:
            if v == 1 and not ace_on_table:
                emit(table)
            elif v == 1:
                if rules["ace_on_ace"] == 2:
                    emit(table)
                else:
                    for i in range(len(tab)):
                        if tval[i] == 1:
                            emit(1 << tab[i])
                    if rules["ace_on_ace"] == 1:
                        subsets(0, 14, 0, emit)
            else:
                single = False
                if rules["single_match_first"]:
                    for i in range(len(tab)):
                        if tval[i] == v:
                            single = True
                            emit(1 << tab[i])
                if not single:
                    subsets(0, v, 0, emit)
                subsets(0, 15 - v, 0, emit)
        if len(out) == before or rules["capture_optional"]:
            emit(0)
    return out


def _random_position(rules: dict, rnd) -> dict:
    """A position to move in: a holding, a table of 0 to 12 cards, maybe a
    named matta, maybe the seat's first turn of the round."""
    n_players = rules["n_players"]
    st = _core.CoreState(_core.CoreRules(**rules), 0)
    f = st.export()
    deck = list(range(40))
    rnd.shuffle(deck)
    seat = rnd.randrange(n_players)
    n_hand = rnd.choice([1, 2, 3, 3, 3] + ([6] if rules["cirullone"] else []))
    n_table = rnd.choice([0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 10, 12])
    hand = sum(1 << c for c in deck[:n_hand])
    table = sum(1 << c for c in deck[n_hand:n_hand + n_table])
    f["hand"] = [hand if k == seat else 0 for k in range(5)]
    f["table"] = table
    f["turn"] = seat
    f["phase"] = _core.PHASE_PLAY
    f["round_cards"] = n_hand if rnd.random() < 0.6 else 3
    f["declared"] = 0 if rnd.random() < 0.8 else 1 << seat
    if rules["matta"] >= 0 and rnd.random() < 0.3:
        f["cval"][rules["matta"]] = rnd.randrange(1, 11)        # a named matta
    if rnd.random() < 0.05:
        # capture values no legal position has: the same moves all the same
        for _ in range(rnd.randrange(1, 4)):
            f["cval"][rnd.choice(deck[:n_hand + n_table])] = rnd.choice([0, 11, 14, 15, 16, 31, 40, 255])
    return f


REF_RULESETS = ["classic2", "classic4", "capture_optional", "ace_or_fifteen", "ace_sweep",
                "single_match_first", "online", "relaxed", "matta_qh", "matta_none",
                "buona_stack", "grande_in_hand", "cirullone2", "five_mandatory", "everything3"]


@pytest.mark.parametrize("name", REF_RULESETS)
def test_legal_moves_match_reference(name: str) -> None:
    import random
    rules = {**BASE, **RULESETS[name]}
    core_rules = _core.CoreRules(**rules)
    rnd = random.Random(name)
    for _ in range(1500):
        f = _random_position(rules, rnd)
        st = _core.CoreState.restore(core_rules, f)
        assert st.legal_moves() == _ref_moves(rules, f), f


if __name__ == "__main__":
    # print the golden tables from the core as it is now
    print("GOLDEN_BENCH: dict[str, list[int]] = {")
    for name in RULESETS:
        print(f"    {name!r}: {bench_totals(name)},")
        sys.stdout.flush()
    print("}\n\nGOLDEN_API: dict[str, str] = {")
    for name in RULESETS:
        print(f"    {name!r}: {api_digest(name)!r},")
        sys.stdout.flush()
    print("}")
