# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The rules of Cirulla (docs/rules.md), written once, in C.

State, move generation, applying a move, scoring and whole-hand playouts are
nogil C functions over plain structs (see _core.pxd). ``CoreRules`` and
``CoreState`` at the bottom are the thin wrappers the Python API is built on;
they check nothing the Python layer has not already checked (like
python-chess's ``push``), so they are private.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport exp
from libc.string cimport memcpy, memset

from cirulla.solver.events import CATEGORIES     # the score's categories, in the core's order

cdef enum:
    DIAMONDS = 0x3FF            # suit 0: bits 0..9
    SETTEBELLO = 6              # 7D
    RE_BELLO = 9                # KD

# R-PRIM, by rank A 2 3 4 5 6 7 J Q K
cdef int PRIM[10]
PRIM[:] = [16, 12, 13, 14, 15, 18, 21, 10, 10, 10]
# best primiera value of a 10-bit suit mask
cdef unsigned char PRIM_BEST[1024]
cdef int _m, _k, _best
for _m in range(1024):
    _best = 0
    for _k in range(10):
        if _m >> _k & 1 and PRIM[_k] > _best:
            _best = PRIM[_k]
    PRIM_BEST[_m] = _best

# how much the greedy policy likes to own each card (a heuristic, in points x 100)
cdef int GREEDY_W[40]
for _k in range(40):
    GREEDY_W[_k] = 10 + PRIM[_k % 10] // 3 - 3
    if _k < 10:
        GREEDY_W[_k] += 15
        if _k in (0, 1, 2, 7, 8, 9):
            GREEDY_W[_k] += 6
GREEDY_W[SETTEBELLO] += 70

# The learned policy's weights, one per POLICY_FEATURES entry (learned_worth),
# in millionths of the fitted logit's (integers: an exact score, and a sum
# without a chain of floating-point additions in the rollout's hot loop).
# BEGIN LEARNED_W (written by bench/policy/fit.py --write; see bench/policy/README.md)
# bench/policy/fit.py data.jsonl.gz --target mix --soft-t 0.25 --steps 3000 --lr 0.5 --l2 0.0001; data:
# make_data.py --hands 600 --iterations 40000 --seed 1000
cdef long long LEARNED_W[22]
LEARNED_W[:] = [9298, -174474, 208064, 362184, 543218, 262238, 147361, -1670127, -2640, -1228096, 174474, -12025,
                -13479, -327722, -159898, -101215, -447782, -309924, 337852, -278321, -409223, 549800]
# END LEARNED_W

# 1 for a capture value out of 1..10 (R-VALUE, R-MATTA): in no legal position
cdef unsigned char BAD_VALUE[256]
for _k in range(256):
    BAD_VALUE[_k] = not (1 <= _k <= 10)

# a fresh hand's stock (the deck in order) and capture values (R-VALUE)
cdef signed char INIT_STOCK[N_CARDS]
cdef unsigned char INIT_CVAL[N_CARDS]
for _k in range(N_CARDS):
    INIT_STOCK[_k] = _k
    INIT_CVAL[_k] = _k % 10 + 1

cdef enum:
    LEX_MAX = 6                 # tables up to this many cards use the LEX_* tables

# The non-empty subsets of n sorted table positions (n <= LEX_MAX) in
# lexicographic order of their position sequences, which is the order a
# depth-first search over the sorted table finds them in: subset k is subset
# LEX_PARENT[n][k] (an earlier one, or -1 for none) plus position LEX_LAST[n][k].
cdef signed char LEX_PARENT[LEX_MAX + 1][64]
cdef signed char LEX_LAST[LEX_MAX + 1][64]


def _lex_order(int n):
    out = []

    def walk(prefix, int start):
        for i in range(start, n):
            out.append(prefix + (i,))
            walk(prefix + (i,), i + 1)
    walk((), 0)
    return out


# Tables of up to 4 cards ("short"): their subsets' sums go a byte each, in
# lexicographic order again, into one word (3 positions, 7 subsets) or two
# (4 positions, 15 subsets: 8 in the first word, 7 in the second). A missing
# card counts as value 31, so no subset holding it adds up to a target 1..14.
# The sums are sum over positions i of value[i] * SHORT_MUL[four][i][word];
# SHORT_POS[four][k] is the set of positions in subset k (0 for k = 15), and
# bit k of SHORT_SINGLES[four] is set if subset k is a single card.
cdef u64 SHORT_MUL[2][4][2]
cdef unsigned char SHORT_POS[2][16]
cdef u64 SHORT_SINGLES[2]
for _four in range(2):
    SHORT_SINGLES[_four] = 0
    for _k in range(16):
        SHORT_POS[_four][_k] = 0
    for _k, _sub in enumerate(_lex_order(3 + _four)):
        for _m in _sub:
            SHORT_POS[_four][_k] |= 1 << _m
            SHORT_MUL[_four][_m][_k // 8] |= (<u64>1) << (8 * (_k % 8))
        if len(_sub) == 1:
            SHORT_SINGLES[_four] |= (<u64>1) << _k

for _m in range(LEX_MAX + 1):
    _subsets = _lex_order(_m)
    _index = {sub: _k for _k, sub in enumerate(_subsets)}
    for _k, _sub in enumerate(_subsets):
        # (no negative indices: this module is compiled with wraparound=False)
        LEX_PARENT[_m][_k] = _index[_sub[:len(_sub) - 1]] if len(_sub) > 1 else -1
        LEX_LAST[_m][_k] = _sub[len(_sub) - 1]
del _lex_order, _subsets, _index, _sub, _four


# --- the deal (section 3) ---
# (bit, popcount, lowest, the RNG and side_of are inline in _core.pxd)

cdef inline int next_seat(int seat, int n) noexcept nogil:
    """(seat + 1) % n, for seat >= 0, without a division or a branch in play."""
    seat += 1
    if seat >= 2 * n:                                   # never, for a seat
        return seat % n
    return seat - (n & -(seat >= n))

cdef int cards_in_round(const Rules* r, int rnd) noexcept nogil:
    if r.five_players:
        return 1 if rnd == 2 else 3                     # R-V5: 3, 3, then 1
    if r.cirullone and rnd == 0:
        return 6                                        # R-VC
    return 3                                            # R-DEAL

cdef void new_hand(State* s, const Rules* r, int dealer) noexcept nogil:
    """A hand about to be dealt; the stock holds the deck in order."""
    memset(s, 0, sizeof(State))
    memcpy(s.stock, INIT_STOCK, sizeof(INIT_STOCK))
    memcpy(s.cval, INIT_CVAL, sizeof(INIT_CVAL))       # R-VALUE
    s.dealer = dealer
    s.turn = next_seat(dealer, r.n_players)
    s.last_capturer = -1
    s.instant_winner = -1
    s.phase = PH_DEAL

cdef void shuffle_rest(State* s, Rng* rng) noexcept nogil:
    """Shuffle the undealt part of the stock (Fisher-Yates)."""
    cdef int i, j, n = N_CARDS - s.stock_pos
    cdef signed char t
    cdef signed char* a = &s.stock[s.stock_pos]
    for i in range(n - 1, 0, -1):
        j = rng_below(rng, i + 1)
        t = a[i]; a[i] = a[j]; a[j] = t

cdef int dealer_buona(u64 table, const Rules* r) noexcept nogil:
    """R-DEALER-BUONA: scope the dealer takes for these table cards (0, 1, 2)."""
    cdef int total = 0, c, v, other
    cdef u64 t = table
    while t:
        c = lowest(t); t &= t - 1
        total += c % 10 + 1
    if r.matta >= 0 and table & bit(r.matta):
        # R-MATTA: the matta on the table may take any value 1..10
        other = total - (r.matta % 10 + 1)
        v = r.buona_high - other
        if 1 <= v <= 10:
            return 2
        v = r.buona_low - other
        if 1 <= v <= 10:
            return 1
        return 0
    if total == r.buona_high:
        return 2
    if total == r.buona_low:
        return 1
    return 0

cdef int deal_round(State* s, const Rules* r) noexcept nogil:
    """Deal the next round from stock[stock_pos:]: hands in dealing order, then
    (first round only) the table. A void deal (R-MONTE) changes nothing."""
    cdef int n = cards_in_round(r, s.round), pos = s.stock_pos, k, _k, _j, seat, c
    cdef int dside = side_of(r, s.dealer)
    cdef u64 hands[MAX_SEATS]
    cdef u64 table = 0
    cdef int aces = 0, buona, np = r.n_players
    cdef u64 hd
    for k in range(MAX_SEATS):
        hands[k] = 0
    seat = next_seat(s.dealer, np)
    for _k in range(np):
        hd = 0
        for _j in range(n):
            hd |= bit(s.stock[pos]); pos += 1
        hands[seat] = hd
        seat = next_seat(seat, np)                      # (dealer + 1 + _k) % np
    if s.round == 0:
        for _j in range(r.table_cards):
            c = s.stock[pos]; pos += 1
            table |= bit(c)
            aces += c % 10 == 0
        if aces >= 2:
            return DEAL_VOID                            # R-MONTE
    # every seat, a fixed count (a loop over n_players compiles to memcpy and
    # memset calls); seats past n_players hold nothing either way
    for k in range(MAX_SEATS):
        s.hand[k] = hands[k]
        s.public[k] = 0
    s.stock_pos = pos
    s.round_cards = n
    s.declared = 0
    s.turn = next_seat(s.dealer, np)                    # R-DEALER: primo di mano
    s.phase = PH_PLAY
    if s.round > 0:
        return DEAL_OK
    s.table = table
    if r.capotun:
        for k in range(10):                             # R-CAPOTUN
            if popcount(table & ((<u64>1 | bit(10) | bit(20) | bit(30)) << k)) == 4:
                s.instant_winner = dside
                s.phase = PH_OVER
                return DEAL_CAPOTUN
    buona = dealer_buona(table, r)
    if buona:
        s.pile[dside] |= table
        s.table = 0
        s.scope[dside] += buona
        s.dealer_buona = buona
        s.last_capturer = dside                         # R-LEFTOVER
    return DEAL_OK


# --- moves (sections 4 and 5) ---

cdef struct Gen:
    Move* out
    int cap
    int n
    int card
    int ntab
    signed char tcard[N_CARDS]      # table cards sorted by value
    unsigned char tval[N_CARDS]

cdef inline void emit_play(Gen* g, u64 take) noexcept nogil:
    cdef Move* m
    if g.n < g.cap:
        m = &g.out[g.n]
        m.take = take; m.take2 = 0; m.card = g.card; m.matta_rank = -1; m.points = 0
    g.n += 1

cdef void subsets(Gen* g, int start, int remaining, u64 taken) noexcept nogil:
    """Every set of table cards from index start on adding up to remaining."""
    cdef int i, v
    for i in range(start, g.ntab):
        v = g.tval[i]
        if v > remaining:
            break
        if v == remaining:
            emit_play(g, taken | bit(g.tcard[i]))
        else:
            subsets(g, i + 1, remaining - v, taken | bit(g.tcard[i]))

cdef int triple_points(const Rules* r, u64 cards, int v0, int v1, int v2) noexcept nogil:
    """Points of a declared holding of three cards with these capture values."""
    cdef int pts = 0
    if r.grande_in_hand and cards == (bit(7) | bit(8) | bit(9)):
        return 30                                       # R-V30
    if v0 == v1 == v2:
        pts = 10                                        # R-DECINO
    if v0 + v1 + v2 <= 9:
        if pts and r.buona_stack:
            pts = 13                                    # R-V13
        elif not pts:
            pts = 3                                     # R-BUONA3
    return pts                                          # R-DECL-ONE

cdef int triple_namings(const Rules* r, u64 cards, int* names, int* points) noexcept nogil:
    """Every way this triple makes a declaration: (matta rank or -1, points)."""
    cdef int v[3]
    cdef int k = 0, c, n = 0, mi = -1, rank, pts
    cdef u64 t = cards
    while t:
        c = lowest(t); t &= t - 1
        if c == r.matta:
            mi = k
        v[k] = c % 10 + 1; k += 1
    pts = triple_points(r, cards, v[0], v[1], v[2])
    if pts:
        names[n] = -1; points[n] = pts; n += 1
    if mi >= 0:                                         # R-MATTA, R-MATTA-CHOICE
        for rank in range(10):
            if rank == r.matta % 10:
                continue                                # named as itself = not named
            v[mi] = rank + 1
            pts = triple_points(r, cards, v[0], v[1], v[2])
            if pts:
                names[n] = rank; points[n] = pts; n += 1
    return n

cdef inline void emit_decl(Gen* g, u64 a, u64 b, int rank, int pts) noexcept nogil:
    cdef Move* m
    if g.n < g.cap:
        m = &g.out[g.n]
        m.take = a; m.take2 = b; m.card = -1; m.matta_rank = rank; m.points = pts
    g.n += 1

cdef void gen_declarations(const State* s, const Rules* r, Gen* g) noexcept nogil:
    cdef u64 h = s.hand[s.turn], t, a
    cdef int cards[6]
    cdef int nc = 0, i, j, k, x, y, nt = 0, nn
    cdef u64 tmask[20]
    cdef int tname[20][11]
    cdef int tpts[20][11]
    cdef int tn[20]
    cdef int rank, pts
    cdef u64 t2
    if r.matta < 0 or not (h >> r.matta & 1):
        # the common case, three cards without the matta: the one triple as
        # it is (what the general code below finds for it, and nothing else)
        t = h & (h - 1)
        t2 = t & (t - 1)
        if t2 and not (t2 & (t2 - 1)):
            pts = triple_points(r, h, INIT_CVAL[lowest(h)], INIT_CVAL[lowest(t)],
                                INIT_CVAL[lowest(t2)])
            if pts:
                emit_decl(g, h, 0, -1, pts)
            return
    t = h
    while t:
        cards[nc] = lowest(t); nc += 1; t &= t - 1
    if nc == 1:
        # R-V5: in the 1-card round the matta may be named to qualify as lowest
        if r.five_players and cards[0] == r.matta:
            for rank in range(3):
                emit_decl(g, h, 0, rank, 0)
        return
    for i in range(nc):
        for j in range(i + 1, nc):
            for k in range(j + 1, nc):
                a = bit(cards[i]) | bit(cards[j]) | bit(cards[k])
                nn = triple_namings(r, a, tname[nt], tpts[nt])
                if nn:
                    tmask[nt] = a; tn[nt] = nn; nt += 1
    for i in range(nt):
        for x in range(tn[i]):
            emit_decl(g, tmask[i], 0, tname[i][x], tpts[i][x])
    # R-VC: two disjoint triples of the six; the matta is in one of them at most
    for i in range(nt):
        for j in range(i + 1, nt):
            if tmask[i] & tmask[j]:
                continue
            for x in range(tn[i]):
                for y in range(tn[j]):
                    if tname[i][x] >= 0 and tname[j][y] >= 0:
                        continue
                    emit_decl(g, tmask[i], tmask[j],
                              tname[i][x] if tname[i][x] >= 0 else tname[j][y],
                              tpts[i][x] + tpts[j][y])

cdef int sort_table(const State* s, u64 table, Gen* g) noexcept nogil:
    """g.tcard, g.tval, g.ntab: the table sorted by capture value, ties by card
    (a stable insertion sort: the table is short). Whether an ace is on it."""
    cdef int c, v, i, ace_on_table = 0
    g.ntab = 0
    while table:
        c = lowest(table); table &= table - 1
        v = s.cval[c]
        ace_on_table |= v == 1
        i = g.ntab
        while i > 0 and g.tval[i - 1] > v:
            g.tcard[i] = g.tcard[i - 1]; g.tval[i] = g.tval[i - 1]; i -= 1
        g.tcard[i] = c; g.tval[i] = v; g.ntab += 1
    return ace_on_table

cdef void play_card_dfs(Gen* g, const Rules* r, int c, int v, u64 table, int ace_on_table) noexcept nogil:
    """The plays of card c (capture value v) on the table sorted in g, appended
    to g: the rules as written first, with a depth-first search for the sets."""
    cdef int i, before = g.n, single
    g.card = c
    if table:
        if v == 1 and not ace_on_table:
            emit_play(g, table)                         # R-ACE
        elif v == 1:                                    # R-ACE-ACE
            if r.ace_on_ace == ACE_SWEEP:
                emit_play(g, table)
            else:
                for i in range(g.ntab):
                    if g.tval[i] == 1:
                        emit_play(g, bit(g.tcard[i]))
                if r.ace_on_ace == ACE_OR_FIFTEEN:
                    subsets(g, 0, 14, 0)
        else:
            single = 0
            if r.single_match_first:                    # R-CHOICE
                for i in range(g.ntab):
                    if g.tval[i] == v:
                        single = 1
                        emit_play(g, bit(g.tcard[i]))
            if not single:
                subsets(g, 0, v, 0)                     # R-SIMPLE
            subsets(g, 0, 15 - v, 0)                    # R-FIFTEEN
    if g.n == before or r.capture_optional:             # R-MUST
        emit_play(g, 0)

cdef int gen_plays_dfs(const State* s, const Rules* r, Gen* g) noexcept nogil:
    """The card plays of the seat to move, appended to g, card by card with
    play_card_dfs. The reference for the faster paths in gen_moves, which use
    it for tables of more than LEX_MAX cards (or capture values out of 1..10)."""
    cdef u64 h = s.hand[s.turn], table = s.table
    cdef int ace_on_table = sort_table(s, table, g), c
    while h:
        c = lowest(h); h &= h - 1
        play_card_dfs(g, r, c, s.cval[c], table, ace_on_table)
    return g.n

cdef inline int put(Move* out, int n, int cap, u64 take, int card) noexcept nogil:
    """Write the play (card, take) at out[n] if there is room; the new count."""
    cdef Move m
    if n < cap:
        m.take = take; m.take2 = 0; m.card = card; m.matta_rank = -1; m.points = 0
        out[n] = m
    return n + 1

cdef inline int put_sets(Move* out, int n, int cap, u64 sel, const u64* sets, int card) noexcept nogil:
    """A play taking each of the subsets selected by the bits of sel, in order."""
    while sel:
        n = put(out, n, cap, sets[lowest(sel)], card)
        sel &= sel - 1
    return n

cdef inline u64 byte_match(u64 sums, int target) noexcept nogil:
    """Bit k set if byte k of sums equals target (1..14), without branches."""
    cdef u64 y = sums ^ (<u64>target * <u64>0x0101010101010101)
    cdef u64 z = ((y & <u64>0x7F7F7F7F7F7F7F7F) + <u64>0x7F7F7F7F7F7F7F7F) | y
    z = ~z & <u64>0x8080808080808080                    # high bit of each zero byte
    return ((z >> 7) * <u64>0x0102040810204080) >> 56   # gathered to bits 0..7

cdef struct Short:
    u64 w0, w1                  # subset sums (SHORT_MUL)
    u64 b0, b1, b2, b3          # the cards of the sorted table, as bits

# gen_plays_short comes in two compiled versions, for 3 positions (Three) and
# for 4 (Four): the fused type only selects the version, at compile time.
cdef struct Three:
    char unused
cdef struct Four:
    char unused
ctypedef fused Positions:
    Three
    Four

cdef inline u64 short_match(const Short* t, int target, Positions* four) noexcept nogil:
    """Bit k set if subset k of the short table adds up to target."""
    cdef u64 sel = byte_match(t.w0, target)
    if Positions is Four:
        sel |= byte_match(t.w1, target) << 8
    return sel

cdef inline u64 short_set(const Short* t, int k, Positions* four) noexcept nogil:
    """The cards of subset k (none for k = 15)."""
    cdef u64 p = SHORT_POS[1 if Positions is Four else 0][k]
    cdef u64 x = (t.b0 & (<u64>0 - (p & 1))) | (t.b1 & (<u64>0 - (p >> 1 & 1))) | (t.b2 & (<u64>0 - (p >> 2 & 1)))
    if Positions is Four:
        x |= t.b3 & (<u64>0 - (p >> 3 & 1))
    return x

cdef inline int put_short(Move* out, int n, int cap, u64 sel, const Short* t, int card,
                          Positions* four) noexcept nogil:
    while sel:
        n = put(out, n, cap, short_set(t, lowest(sel), four), card)
        sel &= sel - 1
    return n

cdef inline int sort_key(const unsigned char* cval, u64 rest, int* bad) noexcept nogil:
    """capture value (cval, a State's) * 64 + card of the lowest card of rest,
    or 31 * 64 + 63 if rest is empty (sorts last, and adds 31 to every sum it
    is in). Sets bad if the card's capture value is out of 1..10 (in no legal
    position), or if there is no card and card 0's is."""
    cdef int c = lowest(rest | (<u64>1 << 63))
    cdef int ok = -(c < N_CARDS)                        # all ones, or 0 (no branches)
    cdef int v = cval[c & ok]
    bad[0] |= BAD_VALUE[v]                              # (for no card: card 0's, harmless)
    return ((v << 6 | c) & ok) | ((31 << 6 | 63) & ~ok)

cdef inline void add_key(Gen* g, int key) noexcept nogil:
    if (key & 63) < N_CARDS:
        g.tcard[g.ntab] = key & 63; g.tval[g.ntab] = key >> 6; g.ntab += 1

cdef int plays_general(const State* s, const Rules* r, Move* out, int cap, int n) noexcept nogil:
    """gen_plays_dfs appending to out[:n] (the faster paths' way out)."""
    cdef Gen g
    g.out = out; g.cap = cap; g.n = n
    return gen_plays_dfs(s, r, &g)

cdef int card_general(const Rules* r, Move* out, int cap, int n, int c, int v, u64 table,
                      int k0, int k1, int k2, int k3) noexcept nogil:
    """play_card_dfs for card c appending to out[:n], on the table sorted in
    the keys k0..k3 (sort_key's, in order)."""
    cdef Gen g
    g.out = out; g.cap = cap; g.n = n; g.ntab = 0
    add_key(&g, k0); add_key(&g, k1); add_key(&g, k2); add_key(&g, k3)
    play_card_dfs(&g, r, c, v, table, (k0 >> 6) == 1)
    return g.n

cdef inline void sort2(int* a, int* b) noexcept nogil:
    cdef int lo = min(a[0], b[0]), hi = max(a[0], b[0])
    a[0] = lo; b[0] = hi

cdef int gen_plays_short(const State* s, const Rules* r, Move* out, int cap, int n,
                         u64 h, u64 table, Positions* four) noexcept nogil:
    """gen_moves's card plays for a table of 1 to 3 cards (Three) or of 4
    (Four): the same moves in the same order as gen_plays_dfs, with the
    subset sums of the table a byte each in one or two words."""
    cdef int k0, k1, k2, k3, c, v, before, single, w, bad = 0
    cdef u64 sel, rest
    cdef Short t
    cdef Move mv
    # the table sorted by (value, card), with sorting networks
    k0 = sort_key(s.cval, table, &bad)
    rest = table & (table - 1)
    k1 = sort_key(s.cval, rest, &bad)
    rest &= rest - 1
    k2 = sort_key(s.cval, rest, &bad)
    if Positions is Four:
        k3 = sort_key(s.cval, rest & (rest - 1), &bad)
        sort2(&k0, &k1); sort2(&k2, &k3); sort2(&k0, &k2); sort2(&k1, &k3); sort2(&k1, &k2)
    else:
        k3 = 31 << 6 | 63
        sort2(&k0, &k1); sort2(&k1, &k2); sort2(&k0, &k1)
    # the byte sums hold only for capture values 1..10 (R-VALUE): anything
    # else (no legal position has it) takes the general way
    if bad:
        return plays_general(s, r, out, cap, n)
    w = 1 if Positions is Four else 0
    t.w0 = (<u64>(k0 >> 6) * SHORT_MUL[w][0][0] + <u64>(k1 >> 6) * SHORT_MUL[w][1][0]
            + <u64>(k2 >> 6) * SHORT_MUL[w][2][0])
    t.b0 = bit(k0 & 63); t.b1 = bit(k1 & 63); t.b2 = bit(k2 & 63)
    if Positions is Four:
        t.w0 += <u64>(k3 >> 6) * SHORT_MUL[1][3][0]
        t.w1 = (<u64>(k0 >> 6) * SHORT_MUL[1][0][1] + <u64>(k1 >> 6) * SHORT_MUL[1][1][1]
                + <u64>(k2 >> 6) * SHORT_MUL[1][2][1] + <u64>(k3 >> 6) * SHORT_MUL[1][3][1])
        t.b3 = bit(k3 & 63)
    mv.take2 = 0; mv.matta_rank = -1; mv.points = 0
    while h:
        c = lowest(h); h &= h - 1
        v = s.cval[c]
        before = n
        if <unsigned int>(v - 2) <= 8 and not r.single_match_first and cap - n >= 32:
            # the common case, without branches on what the table holds: the
            # captures (R-SIMPLE in bits 0..14 of sel, then R-FIFTEEN in bits
            # 16..30), then the drop (R-MUST), each written to out[n] and
            # counted only if it is a move (there is room for 31 moves)
            sel = short_match(&t, v, four) | short_match(&t, 15 - v, four) << 16
            mv.card = c
            mv.take = short_set(&t, lowest(sel | (<u64>1 << 31)) & 15, four)
            out[n] = mv
            n += sel != 0
            sel &= sel - 1
            while sel:
                mv.take = short_set(&t, lowest(sel) & 15, four)
                out[n] = mv
                n += 1
                sel &= sel - 1
            mv.take = 0
            out[n] = mv
            n += (n == before) | (r.capture_optional != 0)
            continue
        if <unsigned int>(v - 1) > 9:
            # a capture value out of 1..10 (no legal position has it): this
            # card the general way, on the same sorted table
            n = card_general(r, out, cap, n, c, v, table, k0, k1, k2, k3)
            continue
        if v == 1:
            if (k0 >> 6) != 1 or r.ace_on_ace == ACE_SWEEP:
                n = put(out, n, cap, table, c)          # R-ACE (R-ACE-ACE sweep)
            else:                                       # R-ACE-ACE: the aces, in order
                n = put_short(out, n, cap, short_match(&t, 1, four), &t, c, four)
                if r.ace_on_ace == ACE_OR_FIFTEEN:
                    n = put_short(out, n, cap, short_match(&t, 14, four), &t, c, four)
        else:
            single = 0
            if r.single_match_first:                    # R-CHOICE
                sel = short_match(&t, v, four) & SHORT_SINGLES[w]
                if sel:
                    single = 1
                    n = put_short(out, n, cap, sel, &t, c, four)
            if not single:
                n = put_short(out, n, cap, short_match(&t, v, four), &t, c, four)       # R-SIMPLE
            n = put_short(out, n, cap, short_match(&t, 15 - v, four), &t, c, four)      # R-FIFTEEN
        if n == before or r.capture_optional:           # R-MUST
            n = put(out, n, cap, 0, c)
    return n

cdef int gen_moves(const State* s, const Rules* r, Move* out, int cap) noexcept nogil:
    """Every legal move of the seat to move; writes at most cap, returns how many.

    The order is part of the contract (seeded playouts depend on it):
    declarations first (gen_declarations), then for each card in hand, lowest
    card first, its captures and then its drop. A card's captures are those of
    a depth-first search over the table sorted by capture value (play_card_dfs):
    the subsets adding up to a target in lexicographic order of their sorted
    positions. Faster paths give the same moves in the same order: tables of
    up to 4 cards with every subset sum a byte of a word (gen_plays_short),
    of 5 or 6 (LEX_MAX) with one pass over the LEX_* tables (every subset's
    sum, then for each sum 1..14 a bit per subset), longer ones the search.
    tests/test_core_golden.py holds them to the search."""
    cdef Gen g
    cdef int seat, c, v, i, j, n = 0, ntab, before, ace_on_table, single, sm, k, nsub, pa
    cdef int capture_optional, single_match_first, ace_on_ace
    cdef u64 h, t, b, table
    cdef int tval[LEX_MAX]
    cdef u64 tbit[LEX_MAX]
    cdef int sums[64]
    cdef u64 sets[64]
    cdef u64 match[15]                  # by sum: bit k set if subset k adds up to it
    cdef unsigned int touched           # bit per sum whose match[] entry is written
    cdef const signed char* parent
    cdef const signed char* last
    if s.phase != PH_PLAY:
        return 0
    seat = s.turn
    h = s.hand[seat]
    # R-DECL-WHEN: at the seat's first turn of the round, all cards in hand
    if not (s.declared >> seat & 1) and popcount(h) == s.round_cards:
        g.out = out; g.cap = cap; g.n = 0; g.ntab = 0
        gen_declarations(s, r, &g)
        if r.decl_mandatory:                            # R-DECL-CHOICE
            # a buona must be declared: then only the scoring declarations are legal
            j = 0
            for i in range(min(g.n, g.cap)):
                if g.out[i].points > 0:
                    g.out[j] = g.out[i]; j += 1
            if j:
                return j
        n = g.n
    table = s.table
    if not table:
        while h:                                        # nothing to capture: drops
            n = put(out, n, cap, 0, lowest(h))
            h &= h - 1
        return n
    t = table & (table - 1)
    t = t & (t - 1)
    if not (t & (t - 1)):                               # 1 to 3 cards
        return gen_plays_short(s, r, out, cap, n, h, table, <Three*>NULL)
    t &= t - 1
    if not (t & (t - 1)):                               # 4 cards
        return gen_plays_short(s, r, out, cap, n, h, table, <Four*>NULL)
    g.out = out; g.cap = cap; g.n = n
    t &= t - 1
    t &= t - 1
    t &= t - 1
    if t:                                               # a long table: the general way
        return gen_plays_dfs(s, r, &g)
    ace_on_table = sort_table(s, table, &g)
    ntab = g.ntab
    for i in range(ntab):
        v = g.tval[i]
        if <unsigned int>(v - 1) > 9:                   # (only in no legal position)
            return gen_plays_dfs(s, r, &g)
        tval[i] = v
        tbit[i] = bit(g.tcard[i])
    # every subset's sum and cards, in lexicographic order; match[sm] is
    # written only for sums seen (touched): cheaper than clearing it
    touched = 0
    parent = LEX_PARENT[ntab]
    last = LEX_LAST[ntab]
    nsub = (1 << ntab) - 1
    for k in range(nsub):
        pa = parent[k]
        j = last[k]
        if pa < 0:
            sm = tval[j]; b = tbit[j]
        else:
            sm = sums[pa] + tval[j]; b = sets[pa] | tbit[j]
        sums[k] = sm; sets[k] = b
        if sm < 15:
            if touched >> sm & 1:
                match[sm] |= (<u64>1) << k
            else:
                match[sm] = (<u64>1) << k
                touched |= (<unsigned int>1) << sm
    capture_optional = r.capture_optional
    single_match_first = r.single_match_first
    ace_on_ace = r.ace_on_ace
    while h:
        c = lowest(h); h &= h - 1
        v = s.cval[c]
        before = n
        if <unsigned int>(v - 1) > 9:                   # (only in no legal position)
            g.n = n
            play_card_dfs(&g, r, c, v, table, ace_on_table)
            n = g.n
            continue
        if v == 1:
            if not ace_on_table or ace_on_ace == ACE_SWEEP:
                n = put(out, n, cap, table, c)          # R-ACE (R-ACE-ACE sweep)
            else:                                       # R-ACE-ACE
                for i in range(ntab):
                    if tval[i] == 1:
                        n = put(out, n, cap, tbit[i], c)
                if ace_on_ace == ACE_OR_FIFTEEN and touched >> 14 & 1:
                    n = put_sets(out, n, cap, match[14], sets, c)
        else:
            single = 0
            if single_match_first:                      # R-CHOICE
                for i in range(ntab):
                    if tval[i] == v:
                        single = 1
                        n = put(out, n, cap, tbit[i], c)
            if not single and touched >> v & 1:
                n = put_sets(out, n, cap, match[v], sets, c)        # R-SIMPLE
            if touched >> (15 - v) & 1:
                n = put_sets(out, n, cap, match[15 - v], sets, c)   # R-FIFTEEN
        if n == before or capture_optional:             # R-MUST
            n = put(out, n, cap, 0, c)
    return n

cdef TableInfo* table_fill(const Rules* r, const unsigned char* cval, TableInfo* e, u64 key, u64 table) noexcept nogil:
    """table_of's entry e filled for key, a table of 1 to 4 cards, or NULL
    for a capture value out of 1..10 (in no legal position; e left empty)."""
    cdef int keys[4]
    cdef int bad = 0, k, i, n, sm, w, p
    cdef u64 rest
    # the table sorted as gen_plays_short sorts it, 4 positions (an empty one last)
    keys[0] = sort_key(cval, table, &bad)
    rest = table & (table - 1)
    keys[1] = sort_key(cval, rest, &bad)
    rest &= rest - 1
    keys[2] = sort_key(cval, rest, &bad)
    keys[3] = sort_key(cval, rest & (rest - 1), &bad)
    if bad:
        e.key = 0
        return NULL
    sort2(&keys[0], &keys[1]); sort2(&keys[2], &keys[3]); sort2(&keys[0], &keys[2])
    sort2(&keys[1], &keys[3]); sort2(&keys[1], &keys[2])
    n = popcount(table)
    e.n = n
    e.sum = 0
    for i in range(n):
        e.sum += keys[i] >> 6
    e.ace = (keys[0] >> 6) == 1
    e.lo[0] = 0
    e.lo[1] = bit(keys[0] & 63)
    e.lo[2] = bit(keys[1] & 63) if n > 1 else 0
    e.lo[3] = e.lo[1] | e.lo[2]
    e.hi[0] = 0
    e.hi[1] = bit(keys[2] & 63) if n > 2 else 0
    e.hi[2] = bit(keys[3] & 63) if n > 3 else 0
    e.hi[3] = e.hi[1] | e.hi[2]
    for k in range(15):
        e.match[k] = 0
    # every subset in lexicographic order (gen_plays_short's): its sum, its weight
    for k in range(15):
        p = SHORT_POS[1][k]
        sm = 0
        w = 0
        for i in range(4):
            if p >> i & 1:
                if i >= n:
                    sm = 99                             # (a position without a card)
                    break
                sm += keys[i] >> 6
                w += GREEDY_W[keys[i] & 63]
        e.weight[k] = w if sm < 99 else 0
        if sm <= 14:
            e.match[sm] |= 1 << k
    e.key = key
    return e

cdef const int* greedy_weights() noexcept nogil:
    return GREEDY_W

cdef int gen_plays_2p(const Rules* r, const unsigned char* cval, TableInfo* cache, u64 h, u64 other,
                      u64 table, int may_declare, int stock_empty, u64* out, int* greedy) noexcept nogil:
    """gen_moves and greedy_index where they come to card plays on a table of
    at most 4 cards, 2 players: the same moves in the same order, packed
    (card << 40 | take) in out (48 at most), the greedy move's index in
    *greedy; for a search on a compact state, from the fields that decide
    them: the mover's hand h, the other's, the table, whether the mover may
    declare (R-DECL-WHEN: its first play of the round, none declared yet),
    whether the stock is empty, the capture values (cval: a State's, of which
    play changes only the matta's) and a cache of tables (TableInfo, 1 <<
    TABLE_INFO_BITS of them, zeroed before first use; by cards and the
    matta's value, so for one cval but the matta's). The count, or -1 where
    it does not cover the position (a declaration to make, more than 3 cards
    in hand, a longer table, capture values out of 1..10, R-V5, other than 2
    players): gen_moves gives those. The plays are card_plays's (_core.pxd).
    tests/test_plays_2p.py holds it to gen_moves and greedy_index."""
    cdef int left
    cdef u64 t, t2
    if r.five_players or r.n_players != 2:
        return -1
    t = h & (h - 1)
    t2 = t & (t - 1)
    if t2 & (t2 - 1):                                   # more than 3 cards
        return -1
    if may_declare:
        # gen_declarations's cases: three cards without the matta, and none
        # of them a declaration; fewer cards (without R-V5) make none
        if r.matta >= 0 and h >> r.matta & 1:
            return -1
        if t2 and triple_points(r, h, INIT_CVAL[lowest(h)], INIT_CVAL[lowest(t)], INIT_CVAL[lowest(t2)]):
            return -1
    # greedy_context: whether this is the hand's last card, whether anyone could still sweep
    left = (h != 0) + (t != 0) + (other != 0) + ((other & (other - 1)) != 0)
    return hand_plays(r, cval, GREEDY_W, cache, h, table, (left == 1) & (stock_empty != 0), left > 1, out, greedy)

cdef void apply_move(State* s, const Rules* r, const Move* m) noexcept nogil:
    """Play a move; does not check that it is legal."""
    cdef int seat = s.turn, side = side_of(r, seat), k, best, who, np = r.n_players
    cdef u64 b, left = 0, take, took, table
    if m.card < 0:                                      # a declaration
        s.decl[side] += m.points
        s.public[seat] |= m.take | m.take2
        s.declared |= 1 << seat
        if m.matta_rank >= 0:
            s.cval[r.matta] = m.matta_rank + 1          # R-MATTA: plays as named
        return
    b = bit(m.card)
    s.hand[seat] &= ~b
    s.public[seat] &= ~b
    for k in range(np):
        left |= s.hand[k]
    if r.five_players and s.round == 2:
        s.low_card[seat] = s.cval[m.card]
    # a capture takes m.take and the card, else the card stays on the table
    # (without branches: whether a card captures is anybody's guess)
    take = m.take
    took = -(<u64>(take != 0))                          # all ones if it captures
    table = (s.table & ~take) | (b & ~took)
    s.table = table
    s.pile[side] |= (take | b) & took
    s.last_capturer = (side & <int>took) | (s.last_capturer & ~<int>took)
    # R-SCOPA, not on the last card of the hand
    s.scope[side] += (take != 0) & (table == 0) & ((left != 0) | (s.stock_pos != N_CARDS))
    s.turn = next_seat(seat, np)
    if left:
        return
    # the round is over
    if r.five_players and s.round == 2:
        # R-V5: the lowest card of 3 or less scores 1 scopa; ties to the earliest
        best = 4; who = -1
        for k in range(np):
            seat = (s.dealer + 1 + k) % np
            if s.low_card[seat] < best:
                best = s.low_card[seat]; who = seat
        if who >= 0:
            s.scope[side_of(r, who)] += 1
    s.round += 1
    if s.stock_pos < N_CARDS:
        s.phase = PH_DEAL
        return
    if s.table and s.last_capturer >= 0:                # R-LEFTOVER
        s.pile[s.last_capturer] |= s.table
        s.table = 0
    s.phase = PH_OVER


# --- scoring (section 6) ---

cdef inline void award_most(int* values, int n, int* out, int cat) noexcept nogil:
    """1 point to the side with strictly the most; a tie for most: nobody."""
    cdef int k, best = -1, who = -1, ties = 0
    for k in range(n):
        if values[k] > best:
            best = values[k]; who = k; ties = 0
        elif values[k] == best:
            ties = 1
    if not ties:
        out[who * N_CAT + cat] = 1

cdef void score_hand(const State* s, const Rules* r, int* out) noexcept nogil:
    cdef int k, suit, d, pts, n = r.n_sides
    cdef int cards[MAX_SEATS]
    cdef int diamonds[MAX_SEATS]
    cdef int prim[MAX_SEATS]
    cdef u64 p
    memset(out, 0, sizeof(int) * MAX_SEATS * N_CAT)
    for k in range(n):
        p = s.pile[k]
        out[k * N_CAT + CAT_SCOPE] = s.scope[k]         # R-SC-SCOPE
        out[k * N_CAT + CAT_DECL] = s.decl[k]           # R-SC-BUONE
        cards[k] = popcount(p)
        d = <int>(p & DIAMONDS)
        diamonds[k] = popcount(d)
        prim[k] = 0
        for suit in range(4):                           # R-SC-PRIMIERA
            prim[k] += PRIM_BEST[(p >> (10 * suit)) & 0x3FF]
        if d >> SETTEBELLO & 1:
            out[k * N_CAT + CAT_SETTEBELLO] = 1         # R-SC-SETTEBELLO
        if d & 0x380 == 0x380:                          # R-SC-GRANDE: J Q K
            pts = 5
            if r.grande_long and d >> 6 & 1:
                pts = 6
                if d >> 5 & 1:
                    pts = 7
            out[k * N_CAT + CAT_GRANDE] = pts
        if d & 0x7 == 0x7:                              # R-SC-PICCOLA: A 2 3
            pts = 3
            for suit in range(3, 7 if r.piccola_to_seven else 6):
                if not (d >> suit & 1):
                    break
                pts += 1
            out[k * N_CAT + CAT_PICCOLA] = pts
        if r.re_bello and d >> RE_BELLO & 1:
            out[k * N_CAT + CAT_REBELLO] = 1
    award_most(cards, n, out, CAT_CARDS)                # R-SC-CARTE
    award_most(diamonds, n, out, CAT_DIAMONDS)          # R-SC-DENARI
    award_most(prim, n, out, CAT_PRIMIERA)

cdef int cappotto_side(const State* s, const Rules* r) noexcept nogil:
    """R-CAPPOTTO: the side that took all ten diamonds, or -1."""
    cdef int k
    for k in range(r.n_sides):
        if s.pile[k] & DIAMONDS == DIAMONDS:
            return k
    return -1


# --- policies and playouts ---

cdef inline void greedy_context(const State* s, const Rules* r, int* table_sum, int* last,
                                int* risk) noexcept nogil:
    """What the greedy worth of every move at s shares: the table's sum, whether
    this is the hand's last card (no scopa), whether anyone could still sweep."""
    cdef int k, left = 0, c
    cdef u64 t = s.table, hk
    table_sum[0] = 0
    while t:
        c = lowest(t); t &= t - 1
        table_sum[0] += s.cval[c]
    # left: the cards in all hands, but only whether 0, 1 or more matters
    for k in range(r.n_players):
        hk = s.hand[k]
        left += (hk != 0) + ((hk & (hk - 1)) != 0)
    last[0] = (left == 1) & (s.stock_pos == N_CARDS)
    risk[0] = left > 1

cdef inline int greedy_worth(const State* s, const Move* m, int table_sum, int last,
                             int risk) noexcept nogil:
    """The greedy policy's immediate worth of a move (points x 100).

    A capture is worth what its cards are worth to the scoring (GREEDY_W) plus
    a scopa; a drop costs the card; leaving a table that one card can sweep
    (its sum 14 or less) costs about a scopa's risk."""
    if m.card < 0:
        return 10000 + m.points * 100
    return play_worth(s.cval, m.card, m.take, table_sum, last, risk)

cdef inline int play_worth(const unsigned char* cval, int c, u64 take, int table_sum, int last,
                           int risk) noexcept nogil:
    """greedy_worth of the play of card c taking take (cval: a State's)."""
    cdef int k, took, wsum, vsum
    cdef u64 t
    # no branches on capture or drop: this runs for every move of every playout
    wsum = GREEDY_W[c]
    vsum = 0
    t = take
    took = t != 0
    while t:
        k = lowest(t); t &= t - 1
        wsum += GREEDY_W[k]
        vsum += cval[k]
    return play_score(took, wsum, table_sum - vsum if took else table_sum + cval[c], last, risk)

cdef int greedy_index(const State* s, const Rules* r, const Move* moves, int n) noexcept nogil:
    """The move of best greedy worth; ties go to the first (lower cards first)."""
    cdef int i, best = -1 << 30, who = 0, score, better, table_sum, last, risk
    greedy_context(s, r, &table_sum, &last, &risk)
    for i in range(n):
        score = greedy_worth(s, &moves[i], table_sum, last, risk)
        better = score > best
        best = score if better else best
        who = i if better else who
    return who

cdef void greedy_scores(const State* s, const Rules* r, const Move* moves, int n,
                        int* out) noexcept nogil:
    """out[i] = the greedy worth of moves[i] (for inferring holdings from plays)."""
    cdef int i, table_sum, last, risk
    greedy_context(s, r, &table_sum, &last, &risk)
    for i in range(n):
        out[i] = greedy_worth(s, &moves[i], table_sum, last, risk)

# --- the learned rollout policy ---
# A linear score over features of a move, fit offline (bench/policy/fit.py) to
# the moves the search chose in self-play (bench/policy/make_data.py). The
# features are written once, here (move_features), and both the fitting data
# (CoreState.move_features) and the rollout (learned_index) read them. They
# read only what the seat to move knows: its own cards, the table, the piles,
# declared cards, and the counts of cards held.

cdef enum:
    N_PF = 22                   # features of a move (POLICY_FEATURES names them)
    RANK_CARDS = 0x40100401     # the four cards of rank A; << k: of rank k
    RUN_DIAMONDS = 0x387        # A 2 3 and J Q K of diamonds (R-SC-PICCOLA, R-SC-GRANDE)

POLICY_FEATURES = (
    "greedy",           # greedy_worth (points x 100): the learned score starts from it
    "took", "cards", "diamonds", "settebello", "sevens", "sixes", "aces",   # captured (the card played too)
    "prim_gain",        # primiera: the own pile's best four, gained
    "scopa",
    "drop", "drop_value", "drop_diamond", "drop_seven", "drop_matchable",  # a drop; unseen cards of its value
    "sweepers",         # unseen cards that would sweep the table left (if anyone can still play)
    "sweepable",        # sweepers > 0
    "table_cards", "table_settebello", "table_diamonds",     # the table left
    "last_round_took",  # a capture with the stock empty (R-LEFTOVER goes to the last capturer)
    "run_diamonds",     # A 2 3 J Q K of diamonds captured
)

# per card, packed 4-bit counts of what move_features adds up over the cards
# captured: cards, diamonds, sevens, sixes, aces, diamonds of the runs
cdef int CARD_PACK[40]
for _k in range(40):
    CARD_PACK[_k] = (1 | (_k < 10) << 4 | (_k % 10 == 6) << 8 | (_k % 10 == 5) << 12 | (_k % 10 == 0) << 16
                     | (_k in (0, 1, 2, 7, 8, 9)) << 20)

cdef struct PolicyCtx:
    int table_sum
    int table_cards
    int table_diamonds
    int last
    int risk
    int table_aces              # table cards of capture value 1
    int stock_empty
    u64 pile                    # the mover's side's pile
    # the unseen cards (to the mover) by rank, bit-sliced: the count of rank k
    # is bit k of u1, plus 2 x bit k of u2, plus 4 x bit k of u4 (unseen_count)
    u64 u1
    u64 u2
    u64 u4

cdef void policy_context(const State* s, const Rules* r, PolicyCtx* x) noexcept nogil:
    """What every move's features at s share (greedy_context, and more)."""
    cdef int k, c
    cdef u64 seen = s.table | s.hand[s.turn], t = s.table, unseen, a, b, cc, d, s0, c0, s1, c1
    greedy_context(s, r, &x.table_sum, &x.last, &x.risk)
    x.table_cards = popcount(s.table)
    x.table_diamonds = popcount(s.table & DIAMONDS)
    x.table_aces = 0
    while t:
        c = lowest(t); t &= t - 1
        x.table_aces += s.cval[c] == 1
    for k in range(r.n_sides):
        seen |= s.pile[k]
    for k in range(r.n_players):
        seen |= s.public[k]
    unseen = ~seen
    # the four suits added rank by rank, with bitwise adders; by rank, as a
    # matta named otherwise is declared (seen) or played
    a = unseen & 0x3FF; b = unseen >> 10 & 0x3FF; cc = unseen >> 20 & 0x3FF; d = unseen >> 30 & 0x3FF
    s0 = a ^ b; c0 = a & b; s1 = cc ^ d; c1 = cc & d
    x.u1 = s0 ^ s1
    x.u2 = c0 ^ c1 ^ (s0 & s1)
    x.u4 = (c0 & c1) | ((s0 & s1) & (c0 ^ c1))
    x.stock_empty = s.stock_pos == N_CARDS
    x.pile = s.pile[side_of(r, s.turn)]

cdef inline int unseen_count(const PolicyCtx* x, int v) noexcept nogil:
    """Unseen cards of capture value v (1..10)."""
    v -= 1
    return <int>((x.u1 >> v & 1) + 2 * (x.u2 >> v & 1) + 4 * (x.u4 >> v & 1))

cdef inline void move_features(const State* s, const PolicyCtx* x, const Move* m, int* f) noexcept nogil:
    """f[0:N_PF] = the features of a card play m at s (POLICY_FEATURES)."""
    cdef int c = m.card, k, took, drop, rest = x.table_sum, aces = x.table_aces, sweep, sw, v, suit, pg
    cdef int pack = 0, d = c < 10
    cdef u64 t = m.take, after, p2
    took = t != 0
    drop = took ^ 1
    after = (s.table & ~t) if took else (s.table | bit(c))
    while t:
        k = lowest(t); t &= t - 1
        rest -= s.cval[k]
        aces -= s.cval[k] == 1
        pack += CARD_PACK[k]
    v = s.cval[c]
    if drop:
        rest += v
        aces += v == 1
    else:
        pack += CARD_PACK[c]
    sweep = took & (rest == 0)
    f[0] = greedy_worth(s, m, x.table_sum, x.last, x.risk)
    f[1] = took
    f[2] = pack & 15                            # the cards captured, the card played with them
    f[3] = pack >> 4 & 15                       # diamonds
    f[4] = took & <int>((m.take | bit(c)) >> SETTEBELLO & 1)
    f[5] = pack >> 8 & 15                       # sevens
    f[6] = pack >> 12 & 15                      # sixes
    f[7] = pack >> 16 & 15                      # aces
    pg = 0
    if took:
        p2 = x.pile | m.take | bit(c)
        for suit in range(4):
            pg += PRIM_BEST[p2 >> (10 * suit) & 0x3FF] - PRIM_BEST[x.pile >> (10 * suit) & 0x3FF]
    f[8] = pg
    f[9] = sweep & (x.last ^ 1)
    f[10] = drop
    f[11] = v * drop
    f[12] = drop & d
    f[13] = drop & (c % 10 == 6)
    f[14] = unseen_count(x, v) * drop
    # who could sweep what is left: an ace on a table without one (R-ACE), the
    # value of its sum (R-SIMPLE) or what makes 15 with it (R-FIFTEEN)
    sw = 0
    if after and x.risk:
        if aces == 0 or rest == 1:
            sw += unseen_count(x, 1)
        if 2 <= rest <= 10:
            sw += unseen_count(x, rest)
        if 5 <= rest <= 13:
            sw += unseen_count(x, 15 - rest)
    f[15] = sw
    f[16] = sw > 0
    f[17] = x.table_cards + 1 - f[2] if took else x.table_cards + 1
    f[18] = <int>(after >> SETTEBELLO & 1)
    f[19] = x.table_diamonds + d - f[3] if took else x.table_diamonds + d
    f[20] = took & x.stock_empty
    f[21] = pack >> 20 & 15

cdef enum:
    LEARNED_UNIT = 10000        # a learned score / LEARNED_UNIT is 100 x the logit (learned_scores)

cdef inline long long learned_worth(const State* s, const PolicyCtx* x, const Move* m) noexcept nogil:
    """The learned policy's score of a move: a declaration as the greedy policy
    rates it (always made, the most points first), a card play by
    LEARNED_W . move_features."""
    cdef int f[N_PF]
    cdef int j
    cdef long long score = 0
    if m.card < 0:
        return (<long long>1 << 60) + m.points
    move_features(s, x, m, f)
    for j in range(N_PF):
        score += LEARNED_W[j] * f[j]
    return score

cdef int learned_index(const State* s, const Rules* r, const Move* moves, int n) noexcept nogil:
    """The move of best learned score; ties go to the first."""
    cdef PolicyCtx x
    cdef int i, who = 0
    cdef long long best = -(<long long>1 << 62), score
    policy_context(s, r, &x)
    for i in range(n):
        score = learned_worth(s, &x, &moves[i])
        if score > best:
            best = score; who = i
    return who

cdef enum:
    SAMPLE_MAX = 256            # learned_sample draws among this many moves at most (else the best)

cdef int learned_sample(const State* s, const Rules* r, Rng* rng, const Move* moves, int n) noexcept nogil:
    """A move drawn with the probabilities the fitted model gives the moves
    (the softmax of the learned scores: the logit is score / 1e6)."""
    cdef PolicyCtx x
    cdef long long sc[SAMPLE_MAX]
    cdef long long best = -(<long long>1 << 62)
    cdef double p[SAMPLE_MAX]
    cdef double total = 0.0, u
    cdef int i
    if n > SAMPLE_MAX:
        return learned_index(s, r, moves, n)
    policy_context(s, r, &x)
    for i in range(n):
        sc[i] = learned_worth(s, &x, &moves[i])
        if sc[i] > best:
            best = sc[i]
    for i in range(n):
        p[i] = exp((sc[i] - best) * 1e-6)
        total += p[i]
    u = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) * total
    for i in range(n - 1):
        u -= p[i]
        if u < 0:
            return i
    return n - 1

cdef void learned_scores(const State* s, const Rules* r, const Move* moves, int n,
                         int* out) noexcept nogil:
    """out[i] = the learned score of moves[i] as 100 x the fitted logit (so in
    units like the greedy worth's points x 100; a declaration 10000 + its
    points x 100, as there)."""
    cdef PolicyCtx x
    cdef int i
    policy_context(s, r, &x)
    for i in range(n):
        if moves[i].card < 0:
            out[i] = 10000 + moves[i].points * 100
        else:
            out[i] = <int>(learned_worth(s, &x, &moves[i]) // LEARNED_UNIT)


# play_out's loop comes in two compiled versions, for RANDOM_PLAY and for the
# greedy policy with eps_milli (the fused type only selects the version, as
# in gen_plays_short): one loop for both measured 3% fewer random playouts a
# second. A third, CountedRandomPlay, is RANDOM_PLAY counting the moves,
# declarations and void deals for random_hand_stats (the same hands; the
# other two compile as before: counts is NULL there and never read).
cdef struct RandomPlay:
    char unused
cdef struct PolicyPlay:
    char unused
cdef struct CountedRandomPlay:      # RandomPlay, counting (random_hand_stats)
    char unused
ctypedef fused Playout:
    RandomPlay
    PolicyPlay
    CountedRandomPlay

cdef enum:
    COUNT_MOVES = 0                 # play_out_as's counts[] (CountedRandomPlay only)
    COUNT_DECLARATIONS = 1
    COUNT_VOID_DEALS = 2

cdef inline void play_out_as(State* s, const Rules* r, Rng* rng, int eps_milli, Move* buf,
                             Playout* kind, int* counts) noexcept nogil:
    cdef int n, i
    while s.phase != PH_OVER:
        if s.phase == PH_DEAL:
            if Playout is CountedRandomPlay:
                while s.phase == PH_DEAL:               # deal_due, counting void deals
                    if deal_round(s, r) == DEAL_VOID:
                        shuffle_rest(s, rng)
                        counts[COUNT_VOID_DEALS] += 1
            else:
                deal_due(s, r, rng)
            continue
        n = gen_moves(s, r, buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        if Playout is PolicyPlay:
            i = choose_move(s, r, rng, buf, n, eps_milli)
        else:
            i = rng_below(rng, n)
        if Playout is CountedRandomPlay:
            counts[COUNT_MOVES] += 1
            counts[COUNT_DECLARATIONS] += buf[i].card < 0
        apply_move(s, r, &buf[i])

cdef void play_out(State* s, const Rules* r, Rng* rng, int eps_milli, Move* buf) noexcept nogil:
    """Play the hand to its end with choose_move's policy, dealing from the stock."""
    if eps_milli == RANDOM_PLAY:
        play_out_as(s, r, rng, eps_milli, buf, <RandomPlay*>NULL, NULL)
    else:
        play_out_as(s, r, rng, eps_milli, buf, <PolicyPlay*>NULL, NULL)

cdef void play_out_sides(State* s, const Rules* r, Rng* rng, int eps_milli, int own_milli, int own_side,
                         Move* buf) noexcept nogil:
    """play_out, the seats of own_side choosing by own_milli's policy and the
    others by eps_milli's (the same flags: play_out itself)."""
    play_out_marking(s, r, rng, eps_milli, own_milli, own_side, buf, NULL, 0, True)


# --- the learned value ---

# per layout, round, feature and then the playout's margin (at N_VF_MAX): the weights of each of
# VALUE_OUTS, side by side as they are summed together
cdef double VALUE_W[VALUE_LAYOUTS][VALUE_ROUNDS][N_VF_MAX + 1][VALUE_OUTS]
cdef bint VALUE_ON[VALUE_LAYOUTS][VALUE_ROUNDS]     # the rounds value_model.json has weights for

cdef inline void value_parts(const State* s, const Rules* r, u64* places, double* extras) noexcept nogil:
    """value_features in two parts: the cards of each place (value_places), and the extras."""
    cdef int n = r.n_players, i
    cdef u64 placed
    places[0] = s.pile[0]; places[1] = s.pile[1]
    for i in range(n):
        places[2 + i] = s.hand[i]
    places[2 + n] = s.table
    placed = 0
    for i in range(n + 3):
        placed |= places[i]
    places[3 + n] = (((<u64>1) << N_CARDS) - 1) & ~placed
    extras[0] = s.scope[0] - s.scope[1]
    extras[1] = s.decl[0] - s.decl[1]
    for i in range(n - 1):
        extras[2 + i] = s.turn == i
    extras[n + 1] = s.last_capturer == 0
    extras[n + 2] = s.last_capturer == 1
    extras[n + 3] = s.dealer_buona if side_of(r, s.dealer) == 0 else -s.dealer_buona
    extras[n + 4] = popcount(s.pile[0]) - popcount(s.pile[1])
    extras[n + 5] = 1.0

cdef void value_features(const State* s, const Rules* r, double* f) noexcept nogil:
    cdef u64 places[VALUE_PLACES_MAX]
    cdef u64 m
    cdef int p, n_places = value_places(r.n_players)
    memset(f, 0, n_value_features(r.n_players) * sizeof(double))
    value_parts(s, r, places, &f[N_CARDS * n_places])
    for p in range(n_places):
        m = places[p]
        while m:
            f[lowest(m) * n_places + p] = 1.0
            m &= m - 1

cdef double learned_value(const State* at, const Rules* r, double g0, const double* g_cat,
                          double* fix) noexcept nogil:
    # value_features' dot products, the one-hot places summed as they are met
    cdef u64 places[VALUE_PLACES_MAX]
    cdef double extras[VALUE_EXTRAS_MAX]
    cdef double v[VALUE_OUTS]
    cdef const double* w
    cdef double rest
    cdef u64 m
    cdef int p, k, n_places, layout = value_layout(r.n_players)
    if layout < 0 or at.round < 0 or at.round >= VALUE_ROUNDS or not VALUE_ON[layout][at.round]:
        memset(fix, 0, N_CAT * sizeof(double))
        return g0
    n_places = value_places(r.n_players)
    value_parts(at, r, places, extras)
    w = VALUE_W[layout][at.round][N_VF_MAX]
    for k in range(VALUE_OUTS):
        v[k] = w[k] * g0
    for p in range(n_places):
        m = places[p]
        while m:
            w = VALUE_W[layout][at.round][lowest(m) * n_places + p]
            for k in range(VALUE_OUTS):
                v[k] += w[k]
            m &= m - 1
    for p in range(value_extras(r.n_players)):
        w = VALUE_W[layout][at.round][N_CARDS * n_places + p]
        for k in range(VALUE_OUTS):
            v[k] += w[k] * extras[p]
    # the categories' fits add up to the margin's but for the weights' rounding: spread evenly
    rest = v[0] - g0
    for k in range(N_CAT):
        fix[k] = v[1 + k] - g_cat[k]
        rest -= fix[k]
    for k in range(N_CAT):
        fix[k] += rest / N_CAT
    return v[0]

cdef bint play_out_marking(State* s, const Rules* r, Rng* rng, int eps_milli, int own_milli, int own_side,
                           Move* buf, State* at, int root_round, bint got) noexcept nogil:
    cdef int n, i
    if got and own_milli == eps_milli:
        play_out(s, r, rng, eps_milli, buf)
        return got
    while s.phase != PH_OVER:
        if s.phase == PH_DEAL:
            deal_due(s, r, rng)
            got = mark_round(s, root_round, at, got)
            continue
        n = gen_moves(s, r, buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        i = choose_move(s, r, rng, buf, n, own_milli if side_of(r, s.turn) == own_side else eps_milli)
        apply_move(s, r, &buf[i])
    return got


def _load_value_model(model=None):
    """value_model.json's weights (bench/value_screen.py --write), or `model`'s, into VALUE_W in
    place of the ones before: by player count (2, or 4 in two sides) and round, every one checked
    before any is set."""
    import json
    from importlib.resources import files
    if model is None:
        model = json.loads(files("cirulla.solver").joinpath("value_model.json").read_text())
    weights = {}
    for players, section in model.get("players", {}).items():
        if players not in ("2", "4"):
            raise ValueError(f"value_model.json: players: {players!r} has no layout (2 or 4)")
        n = int(players)
        n_vf, rounds = n_value_features(n), (N_CARDS - 4) // (3 * n)     # 3 cards a seat a round
        for key, row in section.get("rounds", {}).items():
            rows = [row, *section.get("categories", {}).get(key, ())]
            if key not in [str(r) for r in range(rounds)]:
                raise ValueError(f"value_model.json: players {players}: rounds: {key!r} is not a round "
                                 f"(0 to {rounds - 1})")
            if len(rows) != VALUE_OUTS or any(len(r) != n_vf + 1 for r in rows):
                raise ValueError(f"value_model.json: players {players}: rounds and categories: round {key} "
                                 f"wants {n_vf + 1} weights for the margin and for each of {N_CAT} categories, "
                                 f"got {[len(r) for r in rows]}")
            weights[value_layout(n), int(key)] = n_vf, rows
    memset(VALUE_ON, 0, sizeof(VALUE_ON))
    for (layout, rnd), (n_vf, rows) in weights.items():
        for k in range(VALUE_OUTS):
            for j in range(n_vf):
                VALUE_W[layout][rnd][j][k] = rows[k][j]
            VALUE_W[layout][rnd][N_VF_MAX][k] = rows[k][n_vf]
        VALUE_ON[layout][rnd] = True
    return model


VALUE_MODEL = _load_value_model()       # the learned value's weights and how they were fitted

# --- the state as Python values ---

cdef State state_from_dict(dict fields) except *:
    """A State from state_to_dict's dict; the caller vouches for its consistency."""
    cdef State s
    cdef int i
    d = dict(fields)
    stock, cval = d.pop("stock"), d.pop("cval")
    d["stock"] = bytes(N_CARDS)
    d["cval"] = bytes(N_CARDS)
    s = d
    for i in range(N_CARDS):
        s.stock[i] = stock[i]
        s.cval[i] = cval[i]
    return s

cdef dict state_to_dict(const State* s):
    """Every field of the state as ints and lists of ints (see _core.pxd)."""
    d = <dict>s[0]
    for k, v in d.items():
        if isinstance(v, (list, tuple, bytes)):
            d[k] = list(v)
    d["stock"] = [s.stock[i] for i in range(N_CARDS)]
    d["cval"] = [s.cval[i] for i in range(N_CARDS)]
    return d


# --- the Python-facing wrappers ---

cdef class CoreRules:
    """The rule switches as the core sees them (built by solver.rules.Rules)."""

    def __init__(self, *, int n_players, int capture_optional, int ace_on_ace,
                 int single_match_first, int decl_mandatory, int matta,
                 int piccola_to_seven, int grande_long, int buona_stack,
                 int grande_in_hand, int capotun, int re_bello, int cirullone,
                 int five_players):
        memset(&self.r, 0, sizeof(Rules))
        self.r.n_players = n_players
        self.r.n_sides = 2 if n_players == 4 else n_players
        self.r.capture_optional = capture_optional
        self.r.ace_on_ace = ace_on_ace
        self.r.single_match_first = single_match_first
        self.r.decl_mandatory = decl_mandatory
        self.r.matta = matta
        self.r.piccola_to_seven = piccola_to_seven
        self.r.grande_long = grande_long
        self.r.buona_stack = buona_stack
        self.r.grande_in_hand = grande_in_hand
        self.r.capotun = capotun
        self.r.re_bello = re_bello
        self.r.cirullone = cirullone
        self.r.five_players = five_players
        self.r.table_cards = 5 if five_players else 4
        self.r.buona_low = 17 if five_players else 15
        self.r.buona_high = 34 if five_players else 30

    @property
    def n_sides(self):
        return self.r.n_sides

    def round_cards(self, int rnd):
        """Cards each player gets in round rnd of a hand."""
        return cards_in_round(&self.r, rnd)


cdef Move* move_buffer(moves) except NULL:
    """The core's Moves of legal_moves-style tuples (card, take, take2,
    matta_rank, points), in a buffer the caller frees (PyMem_Free)."""
    cdef int n = len(moves), i
    cdef Move* buf = <Move*>PyMem_Malloc(max(n, 1) * sizeof(Move))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            buf[i].card, buf[i].take, buf[i].take2, buf[i].matta_rank, buf[i].points = moves[i]
    except BaseException:
        PyMem_Free(buf)
        raise
    return buf


ctypedef void (*Scorer)(const State* s, const Rules* r, const Move* moves, int n, int* out) noexcept nogil

cdef list scores_of(const State* s, const Rules* r, moves, Scorer score):
    """A scorer's figure for each of these moves (core tuples), as a list."""
    cdef int n = len(moves), i
    cdef Move* buf = NULL
    cdef int* out = <int*>PyMem_Malloc(max(n, 1) * sizeof(int))
    if out == NULL:
        raise MemoryError()
    try:
        buf = move_buffer(moves)
        score(s, r, buf, n, out)
        return [out[i] for i in range(n)]
    finally:
        PyMem_Free(buf)
        PyMem_Free(out)


cdef class TableCache:
    """A gen_plays_2p cache of tables (for the tests)."""
    cdef TableInfo t[1 << TABLE_INFO_BITS]

    def __cinit__(self):
        memset(self.t, 0, sizeof(self.t))


cdef class CoreState:
    """One hand's state in the core. Moves are tuples
    (card, take, take2, matta_rank, points), card -1 for a declaration."""
    cdef State s
    cdef readonly CoreRules rules

    def __init__(self, CoreRules rules, int dealer):
        self.rules = rules
        new_hand(&self.s, &rules.r, dealer)

    def copy(self):
        cdef CoreState other = CoreState.__new__(CoreState)
        other.rules = self.rules
        other.s = self.s
        return other

    def set_stock(self, cards):
        """Lay these cards as the next ones of the stock (a given deal)."""
        cdef int k = self.s.stock_pos, c
        if k + len(cards) > N_CARDS:
            raise ValueError("more cards than the stock holds")
        for c in cards:
            self.s.stock[k] = c; k += 1

    def stock_order(self):
        return [self.s.stock[k] for k in range(self.s.stock_pos, N_CARDS)]

    def shuffle(self, unsigned long long seed):
        cdef Rng rng
        rng.s = seed
        shuffle_rest(&self.s, &rng)

    def deal(self):
        """Deal the next round from the stock: DEAL_OK, DEAL_VOID or DEAL_CAPOTUN."""
        if self.s.phase != PH_DEAL:
            raise ValueError("not waiting for a deal")
        return deal_round(&self.s, &self.rules.r)

    def legal_moves(self):
        cdef int cap = 256, n
        cdef Move* buf
        while True:
            buf = <Move*>PyMem_Malloc(cap * sizeof(Move))
            if buf == NULL:
                raise MemoryError()
            n = gen_moves(&self.s, &self.rules.r, buf, cap)
            if n <= cap:
                try:
                    return [(buf[i].card, buf[i].take, buf[i].take2,
                             buf[i].matta_rank, buf[i].points) for i in range(n)]
                finally:
                    PyMem_Free(buf)
            PyMem_Free(buf)
            cap = n

    def apply(self, int card, u64 take, u64 take2, int matta_rank, int points):
        cdef Move m
        m.card = card; m.take = take; m.take2 = take2
        m.matta_rank = matta_rank; m.points = points
        apply_move(&self.s, &self.rules.r, &m)

    def plays_2p(self, TableCache cache=None):
        """gen_plays_2p here (for the tests that hold it to legal_moves and
        greedy_choice), with this cache of tables (else a fresh one): (moves
        as legal_moves gives them, the greedy index), or None where it does
        not cover the position."""
        cdef u64 out[64]
        cdef int greedy = 0, n, seat = self.s.turn
        if cache is None:
            cache = TableCache()
        if self.s.phase != PH_PLAY or not 0 <= seat < 2:
            return None
        n = gen_plays_2p(&self.rules.r, self.s.cval, cache.t, self.s.hand[seat], self.s.hand[seat ^ 1],
                         self.s.table,
                         not (self.s.declared >> seat & 1) and popcount(self.s.hand[seat]) == self.s.round_cards,
                         self.s.stock_pos == N_CARDS, out, &greedy)
        if n < 0:
            return None
        return [(<int>(out[i] >> 40), out[i] & ((<u64>1 << 40) - 1), 0, -1, 0) for i in range(n)], greedy

    def greedy_choice(self, moves):
        """Index of the greedy policy's move among these (legal_moves order)."""
        cdef Move* buf = move_buffer(moves)
        try:
            return greedy_index(&self.s, &self.rules.r, buf, len(moves))
        finally:
            PyMem_Free(buf)

    def greedy_worths(self, moves):
        """The greedy policy's worth of each of these moves (points x 100)."""
        return scores_of(&self.s, &self.rules.r, moves, greedy_scores)

    def learned_worths(self, moves):
        """The learned policy's score of each of these moves, as 100 x its logit
        (the inference's units; learned_scores)."""
        return scores_of(&self.s, &self.rules.r, moves, learned_scores)

    def move_features(self, moves):
        """The learned policy's features of each of these moves (legal_moves
        order; POLICY_FEATURES names them), None for a declaration."""
        cdef Move m
        cdef PolicyCtx x
        cdef int f[N_PF]
        cdef int j
        policy_context(&self.s, &self.rules.r, &x)
        out = []
        for t in moves:
            m.card, m.take, m.take2, m.matta_rank, m.points = t
            if m.card < 0:
                out.append(None)
                continue
            move_features(&self.s, &x, &m, f)
            out.append([f[j] for j in range(N_PF)])
        return out

    def value_features(self):
        """The learned value's features of this state (value_features): 2 or 4 players."""
        cdef double f[N_VF_MAX]
        if value_layout(self.rules.r.n_players) < 0:
            raise ValueError(f"value_features: the learned value has 2- and 4-player layouts, "
                             f"not {self.rules.r.n_players} players")
        value_features(&self.s, &self.rules.r, f)
        return [f[j] for j in range(n_value_features(self.rules.r.n_players))]

    def learned_value(self, categories):
        """Side 0's margin by category (N_CAT numbers), reached by a playout from this state
        (the first of a round), corrected by the learned value (learned_value): the margin
        and the categories' corrected margins, which add up to it."""
        cdef double g_cat[N_CAT]
        cdef double fix[N_CAT]
        cdef double g0 = 0.0
        if len(categories) != N_CAT:
            raise ValueError(f"learned_value: {N_CAT} category margins wanted, got {len(categories)}")
        for k in range(N_CAT):
            g_cat[k] = categories[k]
            g0 += g_cat[k]
        v = learned_value(&self.s, &self.rules.r, g0, g_cat, fix)
        return v, [g_cat[k] + fix[k] for k in range(N_CAT)]

    def learned_choice(self, moves):
        """Index of the learned policy's move among these (legal_moves order)."""
        cdef Move* buf = move_buffer(moves)
        try:
            return learned_index(&self.s, &self.rules.r, buf, len(moves))
        finally:
            PyMem_Free(buf)

    def score(self):
        """Points by side and category (N_CAT per side)."""
        cdef int out[MAX_SEATS * N_CAT]
        score_hand(&self.s, &self.rules.r, out)
        return [[out[k * N_CAT + j] for j in range(N_CAT)] for k in range(self.rules.r.n_sides)]

    def cappotto(self):
        return cappotto_side(&self.s, &self.rules.r)

    def playout(self, unsigned long long seed, bint greedy):
        """Play the rest of the hand with the random or greedy policy."""
        cdef Rng rng
        cdef Move* buf
        rng.s = seed
        buf = <Move*>PyMem_Malloc(MAX_MOVES * sizeof(Move))
        if buf == NULL:
            raise MemoryError()
        with nogil:
            play_out(&self.s, &self.rules.r, &rng, 0 if greedy else RANDOM_PLAY, buf)
        PyMem_Free(buf)

    def export(self):
        """Every field of the state as a dict of ints and lists (see _core.pxd)."""
        return state_to_dict(&self.s)

    @staticmethod
    def field_shapes():
        """export()'s keys, each with its list's length (0: a number)."""
        cdef State s
        memset(&s, 0, sizeof(State))
        return {k: len(v) if isinstance(v, list) else 0 for k, v in state_to_dict(&s).items()}

    @staticmethod
    def restore(CoreRules rules, dict fields):
        """A state from export()'s dict; the caller vouches for its consistency."""
        cdef CoreState st = CoreState.__new__(CoreState)
        st.rules = rules
        st.s = state_from_dict(fields)
        return st

    def hand(self, int seat): return self.s.hand[seat]
    def public(self, int seat): return self.s.public[seat]
    def pile(self, int side): return self.s.pile[side]
    def scope(self, int side): return self.s.scope[side]
    def decl(self, int side): return self.s.decl[side]
    def cval(self, int card): return self.s.cval[card]
    @property
    def table(self): return self.s.table
    @property
    def phase(self): return self.s.phase
    @property
    def turn(self): return self.s.turn
    @property
    def dealer(self): return self.s.dealer
    @property
    def round(self): return self.s.round
    @property
    def round_cards(self): return self.s.round_cards
    @property
    def stock_pos(self): return self.s.stock_pos
    @property
    def last_capturer(self): return self.s.last_capturer
    @property
    def dealer_buona(self): return self.s.dealer_buona
    @property
    def instant_winner(self): return self.s.instant_winner
    @property
    def declared(self): return self.s.declared


cdef int policy_flags(int policy) except -1:
    if policy == GREEDY:
        return 0
    if policy == LEARNED:
        return POLICY_LEARNED
    if policy == SAMPLE:
        return POLICY_LEARNED | POLICY_SAMPLE
    raise ValueError(f"policy must be a Policy: GREEDY (0), LEARNED (1) or SAMPLE (2), got {policy}")


def bench_playouts(CoreRules rules, long n, unsigned long long seed, bint greedy, int policy=GREEDY):
    """Play n whole hands from fresh shuffles; returns the sum of side 0's points
    (so the work cannot be optimised away). With greedy, every move by the
    Policy `policy`; without, at random."""
    cdef State s
    cdef Rng rng
    cdef long i
    cdef int out[MAX_SEATS * N_CAT]
    cdef long total = 0
    cdef int j
    cdef int eps_milli = policy_flags(policy) if greedy else RANDOM_PLAY
    cdef Move* buf = <Move*>PyMem_Malloc(MAX_MOVES * sizeof(Move))
    if buf == NULL:
        raise MemoryError()
    rng.s = seed
    with nogil:
        for i in range(n):
            new_hand(&s, &rules.r, <int>(i % rules.r.n_players))
            shuffle_rest(&s, &rng)
            play_out(&s, &rules.r, &rng, eps_milli, buf)
            score_hand(&s, &rules.r, out)
            for j in range(N_CAT):
                total += out[j]
    PyMem_Free(buf)
    return total


# random_hand_stats's statistics: by role (the dealer's side, then the side of
# the seat after the dealer) the points of each scoring category, the
# dealer's bonus (R-DEALER-BUONA, part of the scope) and the total; then per hand.
_STAT_NAMES = tuple(f"{role}.{name}" for role in ("dealer", "other")
                    for name in CATEGORIES + ("dealer_bonus", "total")) + (
    "moves", "declarations_made", "sweeps", "void_deals")

cdef enum:
    STAT_PER_ROLE = N_CAT + 2
    STAT_MOVES = 2 * STAT_PER_ROLE
    N_STAT = STAT_MOVES + 4

cdef inline void add_stat(long long* sums, long long* squares, int k, long long x) noexcept nogil:
    sums[k] += x
    squares[k] += x * x


def random_hand_stats(CoreRules rules, long n, unsigned long long seed):
    """bench_playouts(rules, n, seed, False)'s hands, the same ones, with
    statistics to compare another implementation of the game with
    (bench/yardstick/): (bench_playouts's total, {name: (sum over the hands,
    sum of squares)}), the names in _STAT_NAMES (a "sweep" is a scopa made
    in play, the dealer's bonus not counted)."""
    cdef State s
    cdef Rng rng
    cdef long i
    cdef int out[MAX_SEATS * N_CAT]
    cdef int counts[3]
    cdef long long sums[N_STAT]
    cdef long long squares[N_STAT]
    cdef long long total = 0
    cdef int j, role, side, points, scope
    cdef Move* buf = <Move*>PyMem_Malloc(MAX_MOVES * sizeof(Move))
    if buf == NULL:
        raise MemoryError()
    memset(sums, 0, sizeof(sums))
    memset(squares, 0, sizeof(squares))
    rng.s = seed
    with nogil:
        for i in range(n):
            new_hand(&s, &rules.r, <int>(i % rules.r.n_players))
            shuffle_rest(&s, &rng)
            counts[0] = 0; counts[1] = 0; counts[2] = 0
            play_out_as(&s, &rules.r, &rng, RANDOM_PLAY, buf, <CountedRandomPlay*>NULL, counts)
            score_hand(&s, &rules.r, out)
            for j in range(N_CAT):
                total += out[j]
            for role in range(2):
                side = side_of(&rules.r, s.dealer if role == 0 else next_seat(s.dealer, rules.r.n_players))
                points = 0
                for j in range(N_CAT):
                    add_stat(sums, squares, role * STAT_PER_ROLE + j, out[side * N_CAT + j])
                    points += out[side * N_CAT + j]
                add_stat(sums, squares, role * STAT_PER_ROLE + N_CAT, s.dealer_buona if role == 0 else 0)
                add_stat(sums, squares, role * STAT_PER_ROLE + N_CAT + 1, points)
            scope = 0
            for j in range(rules.r.n_sides):
                scope += s.scope[j]
            add_stat(sums, squares, STAT_MOVES, counts[COUNT_MOVES])
            add_stat(sums, squares, STAT_MOVES + 1, counts[COUNT_DECLARATIONS])
            add_stat(sums, squares, STAT_MOVES + 2, scope - s.dealer_buona)
            add_stat(sums, squares, STAT_MOVES + 3, counts[COUNT_VOID_DEALS])
    PyMem_Free(buf)
    stats = {}
    for j in range(N_STAT):
        stats[_STAT_NAMES[j]] = (sums[j], squares[j])
    return total, stats


PHASE_DEAL = PH_DEAL
PHASE_PLAY = PH_PLAY
PHASE_OVER = PH_OVER
DEAL_RESULT_OK = DEAL_OK
DEAL_RESULT_VOID = DEAL_VOID
DEAL_RESULT_CAPOTUN = DEAL_CAPOTUN
N_CATEGORIES = N_CAT
N_POLICY_FEATURES = N_PF
