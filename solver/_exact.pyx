# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact endgames (2 players): the worlds of the last round (one, perfect
information) or of the last two (every opponent holding x every split of the
last deal), every root move solved by alpha-beta in each and the values
averaged like the paired phase's. The types are in _exact.pxd.

The search visits about 1.5 million positions for the last two rounds, and
meets the same (hand, table) pairs and the same finished piles again and
again (9 times in 10): so the legal moves with their greedy order and the
leaves' values come from memos (xmoves_of, xleaf) that keep what the core's
gen_moves, greedy_index and evaluate gave, keyed by everything those read; a
position with one move hands its window on to the next without a call. The
hand's last two plays (one card in each hand), 60% of the positions with the
leaves after them, come from a third memo (xtail_of): the lines the core's
moves make, by what they add to the piles, scope and declarations, which no
play reads, so the same lines serve whatever the piles hold; tail_replay runs
alphabeta's loop over them, called from the parent's loop directly. The
play before them (two cards in the mover's hand, one in the other's) comes
with them from a fourth memo (xtri_of, the tails of the mover's moves in the
search's order, 12% of the positions and more than a third of the time
before it): tri_replay runs the three plies' loops over its lines, counting
the positions alphabeta visits, and a flat tri (each tail one line, 80%)
takes the lines' values straight from the leaf memo (tri_flat).

The memos together stay about a core's L2 cache (1 MB): beyond it a miss
costs about as much as 300 instructions on a machine shared with other work
(callgrind's cache simulation against the measured times), so the tris take
the room that the moves' and the tails' memos, which they spare most of their
lookups, give up; and an entry is laid out for the cache lines it is read
from (a Tri's counts and first two lines on its first line, the table's
entries 32 bytes on cache lines): a bigger memo has cost more in misses
than it saved in instructions, every time it was measured.

A tri is played out (tri_direct) from the core's card_plays (_core.pxd: the
plays of a card on a table of at most 4 cards, with the table's subsets and
sums from a cache of tables, TableInfo), without the memo of tails (the
mover's moves from the move memo, the last two plies after each from a
memo of their own, duo_of: 9 in 10 of them met before), where no
declaration can come (the seats' first plays of a round: tri_build
then); the move memo's misses come from gen_plays_2p (the same
card plays for a hand), else from gen_moves through a memo of the lists
with declarations (moves_general). The last round's positions with 6, 5
and 4 cards in the hands are searched by xab (the last's children are
tris): xalphabeta's steps written for them (no hint, no deal: the stock is
dealt; a card played leaves cards in the hands, xplay_on), one source
compiled for each count (a fused type, Cards). The
first round's positions (the stock not dealt) are the same in the 20
worlds of an opponent holding, which differ in the last deal alone: its
skeleton (Skel, skel_ab) keeps each position's moves, greedy move, hash
before the stock and children for them, so that the worlds after the
first search each of them with its hint, its table (the stock's part of
the key) and its deal only.

The memoized search (xalphabeta) plays on a compact state (XState, 64 bytes
copied per node against the State's ~300: hands, piles, table, scope,
declarations and the few small fields play changes) with the core's
apply_move written out for 2 players (xplay, xapply) and the last deal's
(xdeal); the world's State (Solve.full) holds the rest (dealer, stock,
capture values) and is set to the compact state where a memo misses, for
the core's gen_moves, greedy_index and evaluate: the rules and the scoring
stay the core's. Moves from the memo stay packed (card << 40 | take) in
their row of Search.buf. The search itself (its order, cut-offs, tables,
hash keys and positions) is alphabeta's on the core's State without the
memos, and so are its figures, to the last bit: `_reference` switches to
that for the tests that check it. One world (the last round, or the true
one) is solved by alphabeta: faster than the memos would fill. With 4
players in two sides only the last round's best response to the program is
solved (seat_worlds: every way the unseen cards lie in the other three
hands, by alphabeta, the other side's moves greedy's)."""
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memset

from cirulla.solver._core cimport (
    EPS_MILLI_DEFAULT, MAX_SEATS, N_CARDS, N_CAT, PH_DEAL, PH_OVER, PH_PLAY, Move, Rng, Rules, State, apply_move, bit,
    cards_in_round, deal_due, TABLE_INFO_BITS, TableInfo, gen_moves, gen_plays_2p, hand_plays, greedy_index,
    greedy_weights, lowest, mix64, popcount, rng_below, side_of, u64)
from cirulla.solver._equity cimport Eval, evaluate, win_of
from cirulla.solver._paired cimport add_world, can_sweep_next
from cirulla.solver._search cimport RootMove, halted, load_flag
from cirulla.solver._worlds cimport Know, has_buona, play_likelihood

cdef extern from *:
    """
    /* A State copied in 16-byte pieces, unrolled: gcc makes a plain memcpy
       of it a `rep movsq`, slow to start for some 300 bytes (a few per cent
       of an exact solve). */
    typedef unsigned long long cirulla_v2 __attribute__((vector_size(16), aligned(8), may_alias));
    static inline void cirulla_copy_state(void* dst, const void* src, unsigned long size) {
        char* d = (char*)dst; const char* s = (const char*)src;
        unsigned long i = 0;
        #pragma GCC unroll 32
        for (; i + 16 <= size; i += 16)
            *(cirulla_v2*)(d + i) = *(const cirulla_v2*)(s + i);
        for (; i < size; i += 4)
            __builtin_memcpy(d + i, s + i, 4);
    }
    """
    void copy_state "cirulla_copy_state"(void* dst, const void* src, unsigned long size) noexcept nogil

cdef enum:
    TT_BITS = 12
    MOVES_BITS = 12             # 4096 move lists of 48 bytes (192 KB), 8192 leaves of 32 (256 KB),
    LEAVES_BITS = 13            # 256 tails of 128 bytes (32 KB: the tris no longer use them), 2048
    TAILS_BITS = 8              # tris of 128 bytes (256 KB) and the core's 1024 tables (128 KB):
    TRIS_BITS = 11              # 256 lists with declarations of 256 bytes (64 KB), 2048 duos of 64
    DECLS_BITS = 8              # (128 KB): with the table and the hints, about a core's L2 cache
    DUOS_BITS = 11
    PACKED = XCAP // 2          # where a row of Search.buf holds its packed moves (at most 64)
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3

cdef extern from *:
    """
    #define CIRULLA_TAKE_MASK ((1ULL << 40) - 1)
    """
    const u64 TAKE_MASK "CIRULLA_TAKE_MASK"
cdef const int* GREEDY_W = greedy_weights()     # the greedy policy's card weights (the core's)
cdef extern from *:
    """
    #define CIRULLA_CARDS_MASK ((1ULL << 40) - 1)
    """
    const u64 CARDS_MASK "CIRULLA_CARDS_MASK"       # the cards (of a pile, of a TriLine's word)

cdef struct Dealt:
    # the last deal xdeal made from the world's stock: the position and round
    # it dealt from (pos -1: none yet), the cards each, the hands by seat
    int pos
    int round
    int n
    u64 hand[2]

cdef struct Solve:
    # one call's search and the tables, what alphabeta threads through its
    # recursion (in one argument: all of alphabeta's go in registers)
    Search* S
    TTEntry* tt
    Hint* hints
    MoveList* moves
    LeafEntry* leaves
    Tail* tails
    Tri* tris
    Duo* duos
    TableInfo* tables
    DeclList* decls
    Skel* skel                  # the first round's skeleton (NULL: none)
    int memo                    # 0: without the memos (see _reference): alphabeta, else xalphabeta
    int respond                 # 1: the other seat plays greedy's move (a best response to the program)
    State* full                 # the world's State, which xalphabeta's compact state goes with
    Dealt* dealt                # xdeal's last deal in this world (the same for all its positions)
    int matta                   # the matta (card 0 without one) and a mask of its capture
    unsigned char matta_mask    # value (0 without one): XState.mval, which the memos' keys hold

cdef int REFERENCE = 0


def _reference(bint on):
    """Solve without the memos (on: alphabeta on the core's State, every
    position's moves from gen_moves and greedy_index, every move played by
    apply_move, every leaf from evaluate):
    the slow path the tests compare the memos with, figure for figure. For
    tests only: it switches every searcher of the process, at its next
    exact()."""
    global REFERENCE
    REFERENCE = on


cdef int tables_init(Tables* x) noexcept nogil:
    """Allocate the empty tables once: 0, or -1 out of memory (none kept).
    The memos come later, with the first solve that has use for them
    (memos_init)."""
    if x.tt != NULL:
        return 0
    x.tt = <TTEntry*>lines_calloc((1 << TT_BITS) * sizeof(TTEntry), &x.tt_mem)
    x.hints = <Hint*>calloc(1 << TT_BITS, sizeof(Hint))
    if x.tt == NULL or x.hints == NULL:
        tables_free(x)
        return -1
    return 0

cdef void* lines_calloc(size_t size, void** mem) noexcept nogil:
    """size bytes zeroed, on cache lines: the block to free in *mem; NULL out of memory."""
    mem[0] = calloc(size + 64, 1)
    if mem[0] == NULL:
        return NULL
    return <void*>((<size_t>mem[0] + 63) & ~(<size_t>63))

cdef int memos_init(Tables* x) noexcept nogil:
    """Allocate the empty memos once (1.4 MB, and the skeleton's 0.35 MB of
    which a holding's worlds touch a few dozen KB; the pages as they are used):
    0, or -1 out of memory (none kept: the solver goes on without)."""
    if x.moves != NULL:
        return 0
    x.moves = <MoveList*>calloc(1 << MOVES_BITS, sizeof(MoveList))
    # the leaves, tails, tris, tables and lists with declarations on cache lines: a pair of
    # leaves a line, the others one or two lines each
    x.leaves = <LeafEntry*>lines_calloc(((<size_t>1) << LEAVES_BITS) * sizeof(LeafEntry), &x.leaves_mem)
    x.tails = <Tail*>lines_calloc(((<size_t>1) << TAILS_BITS) * sizeof(Tail), &x.tails_mem)
    x.tris = <Tri*>lines_calloc(((<size_t>1) << TRIS_BITS) * sizeof(Tri), &x.tris_mem)
    x.duos = <Duo*>lines_calloc(((<size_t>1) << DUOS_BITS) * sizeof(Duo), &x.duos_mem)
    x.tables = <TableInfo*>lines_calloc(((<size_t>1) << TABLE_INFO_BITS) * sizeof(TableInfo), &x.tables_mem)
    x.decls = <DeclList*>lines_calloc(((<size_t>1) << DECLS_BITS) * sizeof(DeclList), &x.decls_mem)
    x.skel.nodes = <SkelNode*>lines_calloc(SKEL_NODES * sizeof(SkelNode), &x.skel_mem)
    if (x.moves == NULL or x.leaves == NULL or x.tails == NULL or x.tris == NULL or x.duos == NULL
            or x.tables == NULL or x.decls == NULL or x.skel.nodes == NULL):
        memos_free(x)
        return -1
    return 0

cdef void memos_free(Tables* x) noexcept nogil:
    free(x.moves)
    free(x.leaves_mem)
    x.leaves_mem = NULL
    free(x.tails_mem)
    free(x.tris_mem)
    free(x.duos_mem)
    x.duos_mem = NULL
    x.duos = NULL
    free(x.tables_mem)
    x.tables_mem = NULL
    free(x.decls_mem)
    x.decls_mem = NULL
    free(x.skel_mem)
    x.skel_mem = NULL
    x.skel.nodes = NULL
    x.decls = NULL
    x.tables = NULL
    x.moves = NULL
    x.leaves = NULL
    x.tails_mem = NULL
    x.tails = NULL
    x.tris_mem = NULL
    x.tris = NULL

cdef void tables_free(Tables* x) noexcept nogil:
    free(x.tt_mem)
    x.tt_mem = NULL
    free(x.hints)
    x.tt = NULL
    x.hints = NULL
    memos_free(x)


cdef u64 state_key(const State* s, const Rules* r, int with_stock) noexcept nogil:
    """A hash of everything in a state of two sides that the rest of the hand
    can depend on: holdings, table, piles, scope, declarations, the matta's
    value, whose turn, the last capturer, and the undealt stock in order."""
    cdef u64 h = (s.hand[0] ^ <u64>0x9E3779B97F4A7C15) * <u64>0xBF58476D1CE4E5B9
    cdef int i
    h = (h ^ (h >> 29) ^ s.hand[1]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.table) * <u64>0xBF58476D1CE4E5B9
    h = (h ^ (h >> 29) ^ s.pile[0]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.pile[1]) * <u64>0xBF58476D1CE4E5B9
    for i in range(2, r.n_players):                     # (4 players: the partners' hands)
        h = (h ^ (h >> 29) ^ s.hand[i]) * <u64>0x94D049BB133111EB
    h = mix64(h ^ (<u64>s.turn | <u64>(s.last_capturer + 1) << 4 | <u64>s.declared << 8
                   | <u64>s.round << 16 | <u64>(s.scope[0] & 0xFF) << 24 | <u64>(s.scope[1] & 0xFF) << 32
                   | <u64>(s.decl[0] & 0xFF) << 40 | <u64>(s.decl[1] & 0xFF) << 48
                   | <u64>(s.cval[r.matta] if r.matta >= 0 else 0) << 56))
    if with_stock:
        for i in range(s.stock_pos, N_CARDS):
            h = (h ^ (<u64>s.stock[i] + (<u64>i << 8))) * <u64>0x9E3779B97F4A7C15
        h = mix64(h)
    return h if h else 1


cdef inline int in_hands(const State* s, const Rules* r) noexcept nogil:
    """The cards in the players' hands."""
    cdef u64 held = 0
    cdef int i
    for i in range(r.n_players):
        held |= s.hand[i]
    return popcount(held)


cdef inline void leaf_of(const Search* S, const State* s, Leaf* lf) noexcept nogil:
    cdef Eval ev
    cdef int j, me = S.me, w
    cdef const int* mine = &ev.cats[me * N_CAT]
    cdef const int* theirs = &ev.cats[(1 - me) * N_CAT]
    evaluate(s, &S.r, &S.eq, &ev)
    lf.margin = <int>ev.margin[me]
    for j in range(N_CAT):
        lf.cats[j] = <signed char>(mine[j] - theirs[j])
    lf.win = win_of(&ev, me) if ev.win0 >= 0 else 0.0
    if S.match_mode:
        # lexicographic: the chance of winning the match first, then the margin
        w = <int>(lf.win * 10000.0 + 0.5)
        lf.obj = w * 512 + lf.margin + 256
    else:
        lf.obj = lf.margin

cdef inline int order_of(int i, int first) noexcept nogil:
    """The move searched i-th (the one at first goes first, in place of the one at 0)."""
    return first if i == 0 else (0 if i == first else i)

cdef inline bint improves(int v, bint maxing, int* best, int* alpha, int* beta) noexcept nogil:
    """A child's value v against the best so far: True if it is the new best
    for the side to move; the window narrowed as alpha-beta narrows it."""
    cdef bint better = v > best[0] if maxing else v < best[0]
    if better:
        best[0] = v
    if maxing:
        if best[0] > alpha[0]:
            alpha[0] = best[0]
    elif best[0] < beta[0]:
        beta[0] = best[0]
    return better


cdef inline bint tt_hit(const TTEntry* e, u64 key, int alpha, int beta, Leaf* out) noexcept nogil:
    """The table's entry e settles the position of this key in the window
    (alpha, beta): its leaf into out (out.obj the value or bound)."""
    if e.key == key and (e.leaf.tt == TT_EXACT or (e.leaf.tt == TT_LOWER and e.leaf.obj >= beta)
                         or (e.leaf.tt == TT_UPPER and e.leaf.obj <= alpha)):
        out[0] = e.leaf
        return True
    return False

cdef inline void tt_store(TTEntry* e, u64 key, const Leaf* lf, int best, int alpha0, int beta0) noexcept nogil:
    """The position of this key searched in the window (alpha0, beta0): its
    value best (a bound where it fell outside) and line's leaf into e."""
    e.key = key
    e.leaf = lf[0]
    e.leaf.tt = TT_UPPER if best <= alpha0 else (TT_LOWER if best >= beta0 else TT_EXACT)

cdef inline bint take_child(int v, int i, bint maxing, int* best, int* alpha, int* beta, int* j, Leaf* out,
                            const Leaf* lf) noexcept nogil:
    """The i-th child searched, of value v (its line in lf, the first's
    straight in out), against the best so far (improves): the new best's
    index into j and line into out. True where the window closes (a cut-off)."""
    if improves(v, maxing, best, alpha, beta):
        j[0] = i
        if i:
            out[0] = lf[0]
    return alpha[0] >= beta[0]

# --- the reference search: the core's State, moves, play and scoring ---

cdef int alphabeta(const Solve* X, State* s, int left, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """Minimax with alpha-beta (fail-soft) on the objective of the asking side,
    in a world where every card is known, with a transposition table; out gets
    the leaf of the line found. left: the cards in the players' hands, depth
    the plies from the root (the scratch moves' row). Clobbers *s (the moves
    are played on it where there is one: no copy). The core's functions at
    every position, no memo: the reference xalphabeta is held to, and the
    solver of one world."""
    cdef State c
    cdef State* child
    cdef Leaf lf
    cdef Leaf* lp
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta, g, cleft
    cdef Move* buf
    cdef Move* m
    cdef int first = 0
    cdef u64 key = 0, hkey = 0
    cdef TTEntry* e = NULL
    cdef Hint* h = NULL
    cdef Search* S = X.S
    while True:
        S.solved += 1
        if s.phase == PH_OVER:
            leaf_of(S, s, out)
            return out.obj
        # the table only where lines meet again and a subtree is worth storing:
        # with 4 or 6 cards left in the players' hands (plays of one round commute)
        if left == 4 or left == 6:
            key = state_key(s, &S.r, 1)
            e = &X.tt[key & ((1 << TT_BITS) - 1)]
            if tt_hit(e, key, alpha, beta, out):
                return out.obj
        buf = &S.buf[depth * XCAP]
        n = gen_moves(s, &S.r, buf, XCAP)
        if n > XCAP:
            n = XCAP
        g = greedy_index(s, &S.r, buf, n) if n > 1 else 0
        if X.respond and n > 1 and side_of(&S.r, s.turn) != S.me:
            buf[0] = buf[g]                             # the program's move, the only one it makes
            n = 1; g = 0
        if n == 0:                                      # (cannot happen in play)
            leaf_of(S, s, out)
            return out.obj
        if n > 1 or e != NULL:
            break
        # one move, nothing to store: this position's value and line are the
        # next one's, in the same window; on to it without a call
        apply_move(s, &S.r, &buf[0])
        left -= buf[0].card >= 0
        if s.phase == PH_DEAL:                          # the next round's deal
            deal_due(s, &S.r, &S.rng)
            left = in_hands(s, &S.r)
        depth += 1
    if n > 1:
        # the move first that was best here in the previous world (worlds that
        # differ only in the last deal share everything before it), else the
        # greedy move: more cut-offs
        j = -1
        if s.stock_pos < N_CARDS:
            hkey = state_key(s, &S.r, 0)
            h = &X.hints[hkey & ((1 << TT_BITS) - 1)]
            if h.key == hkey:
                for i in range(n):
                    if (buf[i].card == h.best.card and buf[i].take == h.best.take
                            and buf[i].take2 == h.best.take2 and buf[i].matta_rank == h.best.matta_rank):
                        j = i
                        break
        if j < 0:
            j = g
        first = j                                       # played first, then the others in
    j = 0                                               # order (move `first` in its place)
    maxing = side_of(&S.r, s.turn) == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        child = s
        if i + 1 < n:
            copy_state(&c, s, sizeof(State))
            child = &c
        m = &buf[order_of(i, first)]
        apply_move(child, &S.r, m)
        # the first move's line is the best so far whatever it is: straight into out
        lp = out if i == 0 else &lf
        if child.phase == PH_OVER:                      # a leaf: without a call
            S.solved += 1
            leaf_of(S, child, lp)
            v = lp.obj
        else:
            cleft = left - (m.card >= 0)
            if child.phase != PH_PLAY:                  # the next round's deal
                deal_due(child, &S.r, &S.rng)
                cleft = in_hands(child, &S.r)
            v = alphabeta(X, child, cleft, depth + 1, alpha, beta, lp)
        if take_child(v, i, maxing, &best, &alpha, &beta, &j, out, &lf):
            break
    if e != NULL:
        tt_store(e, key, out, best, alpha0, beta0)
    if h != NULL:
        h.key = hkey
        h.best = buf[order_of(j, first)]
    return best


# --- the memoized search: a compact state, the core's rules through memos ---

cdef inline void x_of(const State* s, XState* x) noexcept nogil:
    """The compact state of a 2-player State (the matta's value: Solve's)."""
    x.hand[0] = s.hand[0]; x.hand[1] = s.hand[1]
    x.pile[0] = s.pile[0]; x.pile[1] = s.pile[1]
    x.table = s.table
    x.scope[0] = s.scope[0]; x.scope[1] = s.scope[1]
    x.decl[0] = s.decl[0]; x.decl[1] = s.decl[1]
    x.turn = <signed char>s.turn
    x.last_capturer = <signed char>s.last_capturer
    x.round = <signed char>s.round
    x.round_cards = <signed char>s.round_cards
    x.declared = <signed char>s.declared
    x.phase = <signed char>s.phase
    x.stock_pos = <signed char>s.stock_pos
    x.fresh = ((popcount(s.hand[0]) == s.round_cards) | (popcount(s.hand[1]) == s.round_cards) << 1)

cdef inline State* full_of(const Solve* X, const XState* x) noexcept nogil:
    """The world's State (Solve.full) set to x, for the core's functions where
    a memo misses: its other fields (dealer, stock, capture values) are the
    world's, which no play changes but the matta's value."""
    cdef State* s = X.full
    s.hand[0] = x.hand[0]; s.hand[1] = x.hand[1]
    s.pile[0] = x.pile[0]; s.pile[1] = x.pile[1]
    s.table = x.table
    s.scope[0] = x.scope[0]; s.scope[1] = x.scope[1]
    s.decl[0] = x.decl[0]; s.decl[1] = x.decl[1]
    s.turn = x.turn
    s.last_capturer = x.last_capturer
    s.round = x.round
    s.round_cards = x.round_cards
    s.declared = x.declared
    s.phase = x.phase
    s.stock_pos = x.stock_pos
    if X.S.r.matta >= 0:
        s.cval[X.S.r.matta] = x.mval
    return s

cdef inline void xplay(XState* s, int card, u64 take) noexcept nogil:
    """apply_move of a card play on the compact state, 2 players (2 sides, seat
    = side), line for line (R-SCOPA, R-LEFTOVER); the round's end leaves the
    phase at PH_DEAL while the stock lasts (xdeal deals it). `public` is left
    out: no rule reads it."""
    cdef int seat = s.turn & 1, cap = take != 0
    cdef u64 b = bit(card), left, took = <u64>0 - <u64>cap, table
    s.hand[seat] &= ~b
    s.fresh &= 2 - seat
    left = s.hand[0] | s.hand[1]
    table = (s.table & ~take) | (b & ~took)
    s.table = table
    s.pile[seat] |= (take | b) & took
    s.last_capturer = <signed char>seat if cap else s.last_capturer
    s.scope[seat] += cap & (table == 0) & ((left != 0) | (s.stock_pos != N_CARDS))
    s.turn = <signed char>(seat ^ 1)
    if left:
        return
    s.round += 1
    if s.stock_pos < N_CARDS:
        s.phase = PH_DEAL
        return
    if s.table and s.last_capturer >= 0:                # R-LEFTOVER
        s.pile[s.last_capturer] |= s.table
        s.table = 0
    s.phase = PH_OVER

cdef inline void xplay_on(XState* s, int card, u64 take) noexcept nogil:
    """xplay where cards are left in the hands after the play (xab's nodes):
    the round goes on."""
    cdef int seat = s.turn & 1, cap = take != 0
    cdef u64 b = bit(card), took = <u64>0 - <u64>cap, table
    s.hand[seat] &= ~b
    s.fresh &= 2 - seat
    table = (s.table & ~take) | (b & ~took)
    s.table = table
    s.pile[seat] |= (take | b) & took
    s.last_capturer = <signed char>seat if cap else s.last_capturer
    s.scope[seat] += cap & (table == 0)
    s.turn = <signed char>(seat ^ 1)

cdef inline void xapply(XState* s, const Move* m) noexcept nogil:
    """apply_move on the compact state: a declaration, or xplay."""
    cdef int seat = s.turn
    if m.card >= 0:
        xplay(s, m.card, m.take)
        return
    s.decl[seat] += m.points
    s.declared |= 1 << seat
    if m.matta_rank >= 0:
        s.mval = m.matta_rank + 1                       # R-MATTA: plays as named

cdef inline void xmove(XState* s, const u64* pk, const Move* buf, int i) noexcept nogil:
    """Play move i of a list from xmoves_of: packed (pk) or not (buf)."""
    if pk != NULL:
        xplay(s, <int>(pk[i] >> 40), pk[i] & TAKE_MASK)
    else:
        xapply(s, &buf[i])

cdef inline int xdeal(const Solve* X, XState* s) noexcept nogil:
    """deal_due on the compact state: a round after the first (no table dealt,
    no void deal) dealt as deal_round deals it, from the world's stock;
    the first round through the core. The cards in the hands after."""
    cdef const State* w = X.full
    cdef int pos = s.stock_pos, seat = w.dealer ^ 1, k, _j  # R-DEALER: primo di mano
    cdef Dealt* d = X.dealt
    cdef State* f
    if s.round == 0:                                    # (not in an endgame)
        f = full_of(X, s)
        deal_due(f, &X.S.r, &X.S.rng)
        x_of(f, s)
        return popcount(s.hand[0] | s.hand[1])
    if d.pos != pos or d.round != s.round:              # (the world's stock: dealt once)
        d.pos = pos
        d.round = s.round
        d.n = cards_in_round(&X.S.r, s.round)
        for k in range(2):
            d.hand[seat ^ k] = 0
            for _j in range(d.n):
                d.hand[seat ^ k] |= bit(w.stock[pos]); pos += 1
    s.hand[0] = d.hand[0]
    s.hand[1] = d.hand[1]
    s.stock_pos = <signed char>(d.pos + 2 * d.n)
    s.round_cards = <signed char>d.n
    s.declared = 0
    s.fresh = 3
    s.turn = <signed char>seat
    s.phase = PH_PLAY
    return 2 * d.n

cdef inline u64 xstate_pre(const XState* s) noexcept nogil:
    """state_key's hash of the compact state before the stock (xstate_key)."""
    cdef u64 h = (s.hand[0] ^ <u64>0x9E3779B97F4A7C15) * <u64>0xBF58476D1CE4E5B9, w, u
    h = (h ^ (h >> 29) ^ s.hand[1]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.table) * <u64>0xBF58476D1CE4E5B9
    h = (h ^ (h >> 29) ^ s.pile[0]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.pile[1]) * <u64>0xBF58476D1CE4E5B9
    # state_key's word of the small fields (the turn, the last capturer + 1,
    # the declarations made, the round, the scope and declaration points' low
    # bytes, the matta's value) from XState's bytes 40..55 (scope, decl: shorts;
    # then turn, last_capturer, round, round_cards, declared, phase,
    # stock_pos, mval: a byte each) in two words
    memcpy(&w, &s.scope[0], 8)
    memcpy(&u, &s.turn, 8)
    w &= <u64>0x00FF00FF00FF00FF
    w = (w | (w >> 8)) & <u64>0x0000FFFF0000FFFF
    w = (w | (w >> 16)) & <u64>0xFFFFFFFF
    return mix64(h ^ ((u & 0xFF) | (((u >> 8) + 1) & 0xFF) << 4 | ((u >> 32) & 0xFF) << 8 | (u & 0xFF0000)
                      | w << 24 | (u & <u64>0xFF00000000000000)))

cdef inline u64 stock_key(const Solve* X, u64 h, int pos) noexcept nogil:
    """xstate_key of a state whose hash before the stock (xstate_pre) is h,
    with the world's stock from pos (its stock_pos) if pos >= 0, else without."""
    cdef int i
    cdef const signed char* stock = X.full.stock
    if pos >= 0:
        for i in range(pos, N_CARDS):
            h = (h ^ (<u64>stock[i] + (<u64>i << 8))) * <u64>0x9E3779B97F4A7C15
        h = mix64(h)
    return h if h else 1

cdef inline u64 xstate_key(const Solve* X, const XState* s, int with_stock) noexcept nogil:
    """state_key of the compact state: the same hash of the same fields."""
    return stock_key(X, xstate_pre(s), s.stock_pos if with_stock else -1)

cdef inline u64 leaf_key(u64 p0, u64 p1, int sc0, int sc1, int d0, int d1) noexcept nogil:
    """The leaf memo's key of a finished hand with the piles p0, p1 and these
    scope and declaration points: side 0's pile (side 1's the other cards),
    the four counts 5 bits each from bit 40, bit 63; 0 where it has none
    (cards out of the piles, a count over 31)."""
    if (p0 | p1) != CARDS_MASK or (<unsigned int>sc0 | <unsigned int>sc1 | <unsigned int>d0 | <unsigned int>d1) > 31:
        return 0
    return p0 | <u64>sc0 << 40 | <u64>sc1 << 45 | <u64>d0 << 50 | <u64>d1 << 55 | (<u64>1 << 63)

cdef inline LeafEntry* leaf_find(const Solve* X, u64 key, LeafEntry** pair) noexcept nogil:
    """The leaf memo's entry of a leaf by its key (leaf_key's), or NULL; the
    pair of entries (two ways, a cache line) it goes to in *pair."""
    cdef LeafEntry* e = &X.leaves[key * <u64>0x9E3779B97F4A7C15 >> (64 - LEAVES_BITS) & ~<u64>1]
    pair[0] = e
    if e.key == key:
        return e
    e += 1
    if e.key == key:
        return e
    return NULL

cdef int xleaf(const Solve* X, const XState* s, u64 p0, u64 p1, unsigned int marks,
               Leaf* out) noexcept nogil:
    """leaf_of, through the leaf memo, of s finished with the cards p0, p1 added
    to the piles and the points in marks (TailLine's) to the scope and
    declarations (a finished hand's leaf depends on the piles, scope and
    declaration points alone: score_hand, cappotto_side; the equity's scores,
    the asking side and the mode are the search's). Returns the objective."""
    cdef int sc0 = s.scope[0] + <int>(marks & 0xFF), sc1 = s.scope[1] + <int>(marks >> 8 & 0xFF)
    cdef int d0 = s.decl[0] + <int>(marks >> 16 & 0xFF), d1 = s.decl[1] + <int>(marks >> 24)
    cdef u64 key = leaf_key(s.pile[0] | p0, s.pile[1] | p1, sc0, sc1, d0, d1)
    cdef LeafEntry* e
    cdef LeafEntry* pair = NULL
    cdef State* t
    if key:
        e = leaf_find(X, key, &pair)
        if e != NULL:
            out[0] = e.leaf
            return e.leaf.obj
    t = full_of(X, s)
    t.pile[0] |= p0; t.pile[1] |= p1
    t.scope[0] = sc0; t.scope[1] = sc1; t.decl[0] = d0; t.decl[1] = d1
    leaf_of(X.S, t, out)
    if pair != NULL:                                    # first in its pair, the one there before second
        pair[1] = pair[0]
        pair.key = key
        pair.leaf = out[0]
    return out.obj

cdef int moves_general(const Solve* X, const XState* s, Move* buf, u64** pk, int* greedy, MoveList* e,
                       u64 k1) noexcept nogil:
    """xmoves_of where gen_plays_2p does not cover the position (declarations
    to make, a long table): gen_moves's moves, through the memo of the
    lists with declarations; kept in the move memo's entry e if they fit."""
    cdef const Rules* r = &X.S.r
    cdef int n, i
    cdef u64 k2 = s.table
    cdef u64* p = pk[0]
    cdef DeclList* d
    cdef State* f
    # gen_moves's, through the memo of the lists with declarations
    d = &X.decls[((k1 * <u64>0xC2B2AE3D27D4EB4F) ^ k2) * <u64>0x9E3779B97F4A7C15 >> (64 - DECLS_BITS)]
    if d.hand == k1 and d.table == k2:
        n = d.n
        memcpy(buf, d.moves, n * sizeof(Move))
        greedy[0] = d.greedy
    else:
        f = full_of(X, s)
        n = gen_moves(f, r, buf, XCAP)
        if n > XCAP:
            n = XCAP
        greedy[0] = greedy_index(f, r, buf, n) if n > 1 else 0
        if n <= DECL_MOVES:
            memcpy(d.moves, buf, n * sizeof(Move))
            d.hand = k1; d.table = k2; d.n = n; d.greedy = greedy[0]
    if n > 64:
        pk[0] = NULL
        return n
    for i in range(n):
        if buf[i].card < 0 or buf[i].take2 or buf[i].matta_rank != -1 or buf[i].points:
            pk[0] = NULL                                # (declarations: never kept)
            return n
        p[i] = <u64>buf[i].card << 40 | buf[i].take
    if n <= MEMO_MOVES:
        for i in range(n):
            e.moves[i] = p[i]
        e.hand = k1; e.table = k2; e.n = n; e.greedy = greedy[0]
    return n

cdef inline int xmoves_of(const Solve* X, const XState* s, Move* buf, u64** pk, int* greedy) noexcept nogil:
    """gen_moves (the count, at most XCAP) and greedy_index among them (when
    more than one), through the move memo: card plays packed (card << 40 |
    take) in the row's packed part (*pk), where they are all card plays (the
    memo's, always), else in buf (*pk NULL): the moves as they come, packed
    rather than Move structs. Both depend on the mover's hand, the table,
    whether the mover may declare, the cards left in hand (none, 1 or more
    per seat, summed: greedy_context), whether the stock is empty, and the
    capture values, of which only the matta's changes in a search (R-MATTA).
    The memo holds lists of card plays, MEMO_MOVES at most."""
    cdef const Rules* r = &X.S.r
    cdef int seat = s.turn, n, i
    cdef u64 h = s.hand[seat], k1, k2 = s.table
    cdef u64* p = <u64*>&buf[PACKED]
    cdef MoveList* e
    # the key from the compact state's own fields: whether the mover may
    # declare (its first play of the round, none declared: fresh), whether
    # more than its one card is left (greedy_context's left, of which only 1
    # or more matters: the mover has one), the stock's end, the matta's value
    k1 = (h | <u64>((s.fresh & ~s.declared) >> seat & 1) << 40
          | <u64>((s.hand[seat ^ 1] | (h & (h - 1))) != 0) << 41
          | <u64>(s.stock_pos == N_CARDS) << 43 | <u64>s.mval << 44 | (<u64>1 << 63))
    e = &X.moves[((k1 * <u64>0x9E3779B97F4A7C15) ^ k2) * <u64>0xBF58476D1CE4E5B9 >> (64 - MOVES_BITS)]
    pk[0] = p
    if e.hand == k1 and e.table == k2:
        n = e.n
        for i in range(MEMO_MOVES):                     # (a fixed count: unrolled)
            p[i] = e.moves[i]
        greedy[0] = e.greedy
        return n
    # the card plays of a short table from the core's 2-player generator, else gen_moves
    if r.matta >= 0:
        X.full.cval[r.matta] = s.mval
    n = gen_plays_2p(r, X.full.cval, X.tables, h, s.hand[seat ^ 1], k2, (s.fresh & ~s.declared) >> seat & 1,
                     s.stock_pos == N_CARDS, p, greedy)
    if n >= 0:
        if n <= MEMO_MOVES:
            for i in range(n):
                e.moves[i] = p[i]
            e.hand = k1; e.table = k2; e.n = n; e.greedy = greedy[0]
        return n
    return moves_general(X, s, buf, pk, greedy, e, k1)

cdef Tail* xtail_of(const Solve* X, const XState* s, int depth) noexcept nogil:
    """The tail of s (stock dealt, one card in each hand) from the memo, or
    played out into it (the core's moves in the search's order, each line to
    the hand's end, with Search.buf's rows depth and depth + 1); NULL if it
    does not fit one. Its key holds all that gen_moves, greedy_index and
    apply_move read there but the piles, scope and declarations (which they
    only add to): the hands, table, turn, last capturer, declarations made,
    the round's cards and the matta's value; the stock is dealt."""
    cdef u64 k0, line0, line1
    cdef unsigned int marks
    cdef int n1, n2, i, k, g1, g2, lines = 0, d0, d1, d2, d3
    cdef XState c1, c2
    cdef Move* buf1 = &X.S.buf[depth * XCAP]
    cdef Move* buf2 = &X.S.buf[(depth + 1) * XCAP]
    cdef Tail* t
    cdef u64* pk1
    cdef u64* pk2
    if <unsigned int>s.declared > 3 or <unsigned int>s.round_cards > 15 or <unsigned int>s.turn > 1:
        return NULL
    k0 = (s.hand[0] | <u64>s.turn << 40 | <u64>(s.last_capturer + 1) << 41 | <u64>s.declared << 43
          | <u64>s.mval << 45 | <u64>s.round_cards << 49 | (<u64>1 << 63))
    t = &X.tails[((k0 * <u64>0x9E3779B97F4A7C15) ^ (s.hand[1] * <u64>0xC2B2AE3D27D4EB4F) ^ s.table)
                 * <u64>0xBF58476D1CE4E5B9 >> (64 - TAILS_BITS)]
    if t.hand0 == k0 and t.hand1 == s.hand[1] and t.table == s.table:
        return t
    n1 = xmoves_of(X, s, buf1, &pk1, &g1)
    if n1 < 1 or n1 > TAIL_LINES:
        return NULL
    t.hand0 = 0                                         # (invalid until complete)
    for i in range(n1):
        c1 = s[0]
        xmove(&c1, pk1, buf1, order_of(i, g1))
        if c1.phase != PH_PLAY:
            return NULL
        n2 = xmoves_of(X, &c1, buf2, &pk2, &g2)
        if n2 < 1 or lines + n2 > TAIL_LINES:
            return NULL
        t.n2[i] = n2
        t.turn2 = c1.turn
        for k in range(n2):
            c2 = c1
            xmove(&c2, pk2, buf2, order_of(k, g2))
            if c2.phase != PH_OVER:
                return NULL
            line0 = c2.pile[0] & ~s.pile[0]
            line1 = c2.pile[1] & ~s.pile[1]
            d0 = c2.scope[0] - s.scope[0]; d1 = c2.scope[1] - s.scope[1]
            d2 = c2.decl[0] - s.decl[0]; d3 = c2.decl[1] - s.decl[1]
            if (<unsigned int>d0 | <unsigned int>d1 | <unsigned int>d2 | <unsigned int>d3) > 0xFF:
                return NULL
            marks = <unsigned int>d0 | <unsigned int>d1 << 8 | <unsigned int>d2 << 16 | <unsigned int>d3 << 24
            t.lines[lines].pile0 = line0
            t.lines[lines].pile1 = line1
            t.lines[lines].marks = marks
            lines += 1
    t.n1 = n1
    t.hand1 = s.hand[1]; t.table = s.table; t.hand0 = k0
    return t

cdef inline int tail_second(const Solve* X, const XState* s, const Tail* t, int line, int n2, int alpha,
                            int beta, Leaf* out) noexcept nogil:
    """alphabeta at the second player's last card (lines line.. of t), as it
    would play them: the position and the leaves it visits counted."""
    cdef Search* S = X.S
    cdef Leaf lf
    cdef int k, v, best, maxing
    S.solved += 1
    if n2 == 1:                                         # (alphabeta's chain of one move)
        S.solved += 1
        return xleaf(X, s, t.lines[line].pile0, t.lines[line].pile1, t.lines[line].marks, out)
    maxing = t.turn2 == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for k in range(n2):
        S.solved += 1
        v = xleaf(X, s, t.lines[line + k].pile0, t.lines[line + k].pile1, t.lines[line + k].marks,
                  out if k == 0 else &lf)
        if improves(v, maxing, &best, &alpha, &beta) and k:
            out[0] = lf
        if alpha >= beta:
            break
    return best

cdef int tail_replay(const Solve* X, const XState* s, const Tail* t, int alpha, int beta,
                     Leaf* out) noexcept nogil:
    """alphabeta's value and line at s (counted already) from its tail: the
    same moves in the same order, windows and cut-offs, no move played."""
    cdef Search* S = X.S
    cdef Leaf lf
    cdef int i, v, best, maxing, line = 0
    if t.n1 == 1:
        return tail_second(X, s, t, 0, t.n2[0], alpha, beta, out)
    maxing = s.turn == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(t.n1):
        v = tail_second(X, s, t, line, t.n2[i], alpha, beta, out if i == 0 else &lf)
        line += t.n2[i]
        if improves(v, maxing, &best, &alpha, &beta) and i:
            out[0] = lf
        if alpha >= beta:
            break
    return best

cdef int tri_build(const Solve* X, const XState* s, Tri* r, int depth) noexcept nogil:
    """Fill r with the last three plays from s (two cards in the mover's hand,
    one in the other's, the stock dealt): the mover's moves in the search's
    order through the memos (Search.buf's row depth), each with its tail
    (rows depth + 1 and + 2), as xalphabeta would search them. 1, or 0 where
    that does not fit a Tri or the search would go otherwise."""
    cdef XState c2
    cdef Move* buf = &X.S.buf[depth * XCAP]
    cdef u64* pk
    cdef Tail* t
    cdef const TailLine* tl
    cdef int n3, g, k, j, _m, mk, line, np = 0, nl = 0, first
    cdef int d0, d1, d2, d3, e0, e1, e2, e3
    n3 = xmoves_of(X, s, buf, &pk, &g)
    if n3 < 1 or n3 > TRI_KIDS:
        return 0
    first = g if n3 > 1 else 0
    for k in range(n3):
        mk = order_of(k, first)
        if pk == NULL and buf[mk].card < 0:
            return 0
        c2 = s[0]
        xmove(&c2, pk, buf, mk)
        if (c2.phase != PH_PLAY or c2.stock_pos != N_CARDS or c2.hand[0] == 0 or c2.hand[1] == 0
                or c2.turn != (s.turn ^ 1)):
            return 0
        t = xtail_of(X, &c2, depth + 1)
        if t == NULL or t.turn2 != s.turn or np + t.n1 > TRI_NODES:
            return 0
        r.n1[k] = t.n1
        r.ls[k] = nl
        d0 = c2.scope[0] - s.scope[0]; d1 = c2.scope[1] - s.scope[1]
        d2 = c2.decl[0] - s.decl[0]; d3 = c2.decl[1] - s.decl[1]
        line = 0
        for j in range(t.n1):
            r.n2[np] = t.n2[j]
            np += 1
            if nl + t.n2[j] > TRI_LINES:
                return 0
            for _m in range(t.n2[j]):
                tl = &t.lines[line]
                line += 1
                e0 = d0 + <int>(tl.marks & 0xFF); e1 = d1 + <int>(tl.marks >> 8 & 0xFF)
                e2 = d2 + <int>(tl.marks >> 16 & 0xFF); e3 = d3 + <int>(tl.marks >> 24)
                if (<unsigned int>e0 | <unsigned int>e1) > 1 or e2 or e3:    # (a sweep each at most)
                    return 0
                r.lines[nl].a = (c2.pile[0] & ~s.pile[0]) | tl.pile0 | <u64>e0 << 40 | <u64>e1 << 48
                r.lines[nl].b = (c2.pile[1] & ~s.pile[1]) | tl.pile1
                nl += 1
    r.n3 = n3
    r.flat = nl == n3
    return 1

cdef inline u64 table_after(u64 pm, u64 table, u64* gain) noexcept nogil:
    """The table a packed card play leaves (xplay's); the cards it takes, with
    the card, into gain (0: a drop)."""
    cdef u64 b = bit(<int>(pm >> 40)), take = pm & TAKE_MASK
    if take:
        gain[0] = take | b
        return table & ~take
    gain[0] = 0
    return table | b

cdef inline int tri_ply(const Solve* X, u64 h, u64 table, int last, int risk, int room, u64* out,
                        int* greedy) noexcept nogil:
    """hand_plays for tri_direct (the matta's value set): the count; -1 where
    card_plays does not cover the ply, 0 where it has no move or more than
    room (no Tri then)."""
    cdef int n = hand_plays(&X.S.r, X.full.cval, GREEDY_W, X.tables, h, table, last, risk, out, greedy)
    return 0 if n > room else n

cdef int duo_play(const Solve* X, u64 ho, u64 hm1, u64 t1, unsigned char* n2s, DuoLine* lines,
                  int* nl) noexcept nogil:
    """A tri's last two plies (tri_direct's, the matta's value set): the
    other's one card ho, then the mover's last hm1 (the hand's last: no
    scopa, R-LEFTOVER after), on the table t1, as if no one had captured
    before them: the other's moves' count, the mover's last moves' after
    each into n2s, the lines in the search's order into lines (their count
    in *nl). 0 where they are more than a Tri holds, -1 where card_plays
    does not cover them."""
    cdef int n1, n2, g2, g3, j, q, so2
    cdef u64 t2, t3, go2, gm3, go3
    cdef u64 mv2[48]
    cdef u64 mv3[48]
    nl[0] = 0
    n1 = tri_ply(X, ho, t1, 0, 1, TRI_NODES, mv2, &g2)
    if n1 <= 0:
        return n1
    for j in range(n1):
        t2 = table_after(mv2[order_of(j, g2)], t1, &go2)
        so2 = (go2 != 0) & (t2 == 0)
        n2 = tri_ply(X, hm1, t2, 1, 0, TRI_LINES - nl[0], mv3, &g3)
        if n2 <= 0:
            return n2
        n2s[j] = n2
        for q in range(n2):
            t3 = table_after(mv3[order_of(q, g3)], t2, &gm3)
            go3 = go2
            if t3:                                      # R-LEFTOVER: to the last to capture
                if gm3:
                    gm3 |= t3
                elif go2:
                    go3 |= t3
            lines[nl[0]].m = gm3 | <u64>so2 << 40
            lines[nl[0]].o = go3
            nl[0] += 1
    return n1

cdef inline int duo_of(const Solve* X, int mval, u64 ho, u64 hm1, u64 t1, unsigned char* n2s, DuoLine* lines,
                       const unsigned char** pn2, const DuoLine** plines) noexcept nogil:
    """duo_play's count through the duos' memo (by the table, the two cards
    and the matta's value, all that the plies read; in pairs of entries,
    two ways: a new duo first, the one there before second); its counts and
    lines from the memo's entry, or played out into n2s and lines (kept
    where they fit a Duo): in *pn2, *plines."""
    cdef u64 key = t1 | <u64>lowest(ho) << 40 | <u64>lowest(hm1) << 46 | <u64>mval << 52 | (<u64>1 << 63)
    cdef Duo* pair = &X.duos[key * <u64>0x9E3779B97F4A7C15 >> (64 - DUOS_BITS) & ~<u64>1]
    cdef int j, n1, nl
    for j in range(2):
        if pair[j].key == key:
            pn2[0] = pair[j].n2
            plines[0] = pair[j].lines
            return pair[j].n1
    n1 = duo_play(X, ho, hm1, t1, n2s, lines, &nl)
    pn2[0] = n2s
    plines[0] = lines
    if 0 < n1 <= DUO_NODES and nl <= DUO_LINES:
        pair[1] = pair[0]
        pair.key = key
        pair.n1 = <unsigned char>n1
        for j in range(DUO_NODES):                      # (fixed counts: unrolled)
            pair.n2[j] = n2s[j]
        for j in range(DUO_LINES):
            pair.lines[j] = lines[j]
    return n1

cdef int tri_direct(const Solve* X, const XState* s, Tri* r, int depth) noexcept nogil:
    """tri_build without the memo of tails, where card_plays
    covers the three plies (2 players, no declaration to make: no seat's
    first play of the round; tables of at most 4 cards): the same moves in
    the same order (hand_plays), played as xplay plays them, into the same
    lines: the mover's moves from the move memo (xmoves_of, with Search.buf's
    row depth: hand_plays's there, met more often than the tris), the last
    two plies after each from the duos' memo (duo_of). 1, 0 where the search
    would not fit a Tri (tri_build would not either), -1 where card_plays
    does not cover it (tri_build then)."""
    cdef const Rules* r0 = &X.S.r
    cdef int m = s.turn, n3, n1, n2, g1, k, j, q, _q, np = 0, nl = 0, first, sm1
    cdef u64 hm = s.hand[m & 1], ho, t1, hm1, gm1, gm3, go3, so2, pm
    cdef u64* mv1
    cdef unsigned char n2s[TRI_NODES]
    cdef DuoLine duo_lines[TRI_LINES]
    cdef const unsigned char* pn2
    cdef const DuoLine* pl
    if (s.fresh & 3 or <unsigned int>m > 1 or r0.five_players or r0.n_players != 2
            or s.stock_pos != N_CARDS):
        return -1
    ho = s.hand[m ^ 1]
    t1 = hm & (hm - 1)
    if not t1 or t1 & (t1 - 1) or not ho or ho & (ho - 1):     # (two cards and one: the core's popcount is
        return -1                                               # a dozen instructions)
    if r0.matta >= 0:
        X.full.cval[r0.matta] = s.mval
    # the mover's two cards (3 cards left: not the last, a sweep possible);
    # the piles' gains and the scope by mover (m) and other (o), xplay's
    # capture or drop written out
    n3 = xmoves_of(X, s, &X.S.buf[depth * XCAP], &mv1, &g1)
    if mv1 == NULL:
        return -1
    if n3 == 0 or n3 > TRI_KIDS:
        return 0
    first = g1 if n3 > 1 else 0
    for k in range(n3):
        pm = mv1[order_of(k, first)]
        t1 = table_after(pm, s.table, &gm1)
        sm1 = (gm1 != 0) & (t1 == 0)
        hm1 = hm & ~bit(<int>(pm >> 40))
        n1 = duo_of(X, s.mval, ho, hm1, t1, n2s, duo_lines, &pn2, &pl)
        if n1 <= 0:
            return n1
        if np + n1 > TRI_NODES:
            return 0
        r.n1[k] = n1
        r.ls[k] = nl
        q = 0
        for j in range(n1):
            n2 = pn2[j]
            if nl + n2 > TRI_LINES:
                return 0
            r.n2[np] = n2
            np += 1
            for _q in range(n2):
                gm3 = pl[q].m & CARDS_MASK
                so2 = pl[q].m >> 40
                go3 = pl[q].o
                q += 1
                if not (gm3 | go3) and gm1:
                    gm3 = t1 | ho | hm1                 # no capture after the mover's: its leftover (R-LEFTOVER)
                gm3 |= gm1
                if m == 0:
                    r.lines[nl].a = gm3 | <u64>sm1 << 40 | so2 << 48
                    r.lines[nl].b = go3
                else:
                    r.lines[nl].a = go3 | so2 << 40 | <u64>sm1 << 48
                    r.lines[nl].b = gm3
                nl += 1
    r.n3 = n3
    r.flat = nl == n3
    return 1

cdef Tri* tri_fill(const Solve* X, const XState* s, Tri* r, u64 k0, int depth) noexcept nogil:
    """xtri_of's entry r filled for s (key k0): NULL if the search does not fit a Tri."""
    cdef int k
    cdef XState c
    r.hand0 = 0                                         # (invalid until complete)
    k = tri_direct(X, s, r, depth)
    if k < 0:
        c = s[0]
        c.last_capturer = -1                            # (the lines without it: tri_gains)
        k = tri_build(X, &c, r, depth)
    if not k:
        r.n3 = 0                                        # (kept: searched as it comes)
    r.hand1 = s.hand[1]; r.table = s.table; r.hand0 = k0
    return r if r.n3 else NULL

cdef inline Tri* xtri_of(const Solve* X, const XState* s, int depth) noexcept nogil:
    """The tri of s (the stock dealt, two cards in the mover's hand and one in
    the other's) from the memo, or played out into it (tri_fill: tri_direct,
    else tri_build); NULL if it does not fit one. Its key is a tail's
    (xtail_of) with the seats' fresh marks and without the last capturer:
    all that the moves and plays of the three plies read but the piles,
    scope and declarations, and the last capturer, which only a line
    without a capture reads (tri_gains). The memo holds its tris in pairs (two ways): a tri goes to its pair's
    entry used less recently (the pair's first entry's `lru` holds which
    served last), so that two tris met in turn keep each other."""
    return tri_at_key(X, s, tri_flags(s), depth)

cdef inline u64 tri_flags(const XState* s) noexcept nogil:
    """A tri's key (xtri_of) but the first hand: 0 where it has no room for the fields."""
    if <unsigned int>s.declared > 3 or <unsigned int>s.round_cards > 15 or <unsigned int>s.turn > 1:
        return 0
    return (<u64>s.turn << 40 | <u64>s.declared << 43 | <u64>s.mval << 45 | <u64>s.round_cards << 49
            | <u64>(s.fresh & 3) << 53 | (<u64>1 << 63))

cdef inline Tri* tri_at_key(const Solve* X, const XState* s, u64 flags, int depth) noexcept nogil:
    """xtri_of with its key's flags (tri_flags's, 0: none)."""
    cdef u64 k0 = s.hand[0] | flags
    cdef Tri* pair
    cdef Tri* r
    cdef int j
    if not flags:
        return NULL
    pair = &X.tris[((k0 * <u64>0x9E3779B97F4A7C15) ^ (s.hand[1] * <u64>0xC2B2AE3D27D4EB4F) ^ s.table)
                   * <u64>0xBF58476D1CE4E5B9 >> (64 - TRIS_BITS) & ~<u64>1]
    for j in range(2):
        r = &pair[j]
        if r.hand0 == k0 and r.hand1 == s.hand[1] and r.table == s.table:
            pair.lru = j
            return r if r.n3 else NULL
    j = 1 - <int>pair.lru
    pair.lru = j
    return tri_fill(X, s, &pair[j], k0, depth)

cdef struct TriAt:
    # a tri's node as its lines' leaves read it: side 0's pile (q0), the
    # leaf memo's key of the scope and declarations (kb: leaf_key's; fast:
    # the scope 30 at most, room for a line's sweep, R-SCOPA, the
    # declarations 31, and a last capturer: every line ends with all the
    # cards in the piles), and the node (s), whose leftover a line without a
    # capture adds to the piles, for the lines are played out as if no one
    # had captured before the tri (tri_fill)
    u64 q0
    u64 kb
    const XState* s
    bint fast

cdef inline void tri_at(const XState* s, TriAt* at) noexcept nogil:
    at.q0 = s.pile[0]
    at.fast = ((<unsigned int>s.scope[0] | <unsigned int>s.scope[1]) <= 30
               and (<unsigned int>s.decl[0] | <unsigned int>s.decl[1]) <= 31 and s.last_capturer >= 0)
    at.kb = (<u64>s.scope[0] << 40 | <u64>s.scope[1] << 45 | <u64>s.decl[0] << 50 | <u64>s.decl[1] << 55
             | (<u64>1 << 63))                          # (leaf_key's, where fast)
    at.s = s

cdef inline void tri_gains(const TriAt* at, const TriLine* ln, u64* g0, u64* g1) noexcept nogil:
    """The cards a line adds to side 0's and 1's piles: its own, else (none:
    no capture on it) the node's table and hands, to its last capturer
    (R-LEFTOVER; nothing without one)."""
    cdef u64 left
    g0[0] = ln.a & CARDS_MASK
    g1[0] = ln.b
    if not (g0[0] | g1[0]):
        left = at.s.table | at.s.hand[0] | at.s.hand[1]
        g0[0] = left if at.s.last_capturer == 0 else 0
        g1[0] = left if at.s.last_capturer == 1 else 0

cdef inline unsigned int tri_marks(const TriLine* ln) noexcept nogil:
    """A TriLine's scope as TailLine's marks."""
    return <unsigned int>(ln.a >> 40 & 0xFF) | <unsigned int>(ln.a >> 48 & 0xFF) << 8

cdef inline int tri_leaf(const Solve* X, const XState* s, const TriAt* at, const TriLine* ln,
                         Leaf* out) noexcept nogil:
    """A line's leaf into out (xleaf's), its objective returned."""
    cdef u64 g0, g1
    tri_gains(at, ln, &g0, &g1)
    return xleaf(X, s, g0, g1, tri_marks(ln), out)

cdef inline LeafEntry* tri_entry(const Solve* X, const TriAt* at, const TriLine* ln) noexcept nogil:
    """The leaf memo's entry of a line (at.fast: all the cards in the piles
    at its end, side 1's the others), or NULL if it holds another leaf."""
    cdef u64 g0, g1
    cdef LeafEntry* pair
    tri_gains(at, ln, &g0, &g1)
    return leaf_find(X, at.q0 | g0 | (at.kb + (ln.a & (<u64>0xFF << 40)) + (ln.a >> 3 & (<u64>0xFF << 45))), &pair)

cdef inline int tri_obj(const Solve* X, const XState* s, const TriAt* at, const TriLine* ln) noexcept nogil:
    """A line's objective: xleaf's, straight from the leaf memo where it can."""
    cdef Leaf lf
    cdef LeafEntry* e
    if at.fast:
        e = tri_entry(X, at, ln)
        if e != NULL:
            return e.leaf.obj
    return tri_leaf(X, s, at, ln, &lf)

cdef inline int tri_second(const Solve* X, const XState* s, const TriAt* at, const Tri* r, int line, int n2,
                           bint maxing, int alpha, int beta, int* best_line, long* count) noexcept nogil:
    """tail_second on a tri's lines line.. (maxing: for the last player); the
    line of the value in best_line, the positions added to count."""
    cdef int k, v, best
    cdef const TriLine* ln
    count[0] += 1
    if n2 == 1:
        count[0] += 1
        best_line[0] = line
        return tri_obj(X, s, at, &r.lines[line])
    best = -(1 << 30) if maxing else (1 << 30)
    for k in range(n2):
        count[0] += 1
        ln = &r.lines[line + k]
        if k and ln.a == ln[-1].a and ln.b == ln[-1].b:
            continue                                    # (the line before again, the last card's captures: no news)
        v = tri_obj(X, s, at, ln)
        if improves(v, maxing, &best, &alpha, &beta):
            best_line[0] = line + k
        if alpha >= beta:
            break
    return best

cdef inline int tri_tail(const Solve* X, const XState* s, const TriAt* at, const Tri* r, int node, int line,
                         int n1, bint maxing, int alpha, int beta, int* best_line, long* count) noexcept nogil:
    """tail_replay of a tri's tail (its nodes node.., lines line..; maxing: for its mover)."""
    cdef int i, v, best, bl = 0
    if n1 == 1:
        return tri_second(X, s, at, r, line, r.n2[node], not maxing, alpha, beta, best_line, count)
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n1):
        v = tri_second(X, s, at, r, line, r.n2[node + i], not maxing, alpha, beta, &bl, count)
        line += r.n2[node + i]
        if improves(v, maxing, &best, &alpha, &beta):
            best_line[0] = bl
        if alpha >= beta:
            break
    return best

cdef inline int tri_flat(const Solve* X, const XState* s, const TriAt* at, const Tri* r, int alpha, int beta,
                         Leaf* out) noexcept nogil:
    """tri_replay of a flat tri (each tail one line: the mover's move k, then
    the other's one and the mover's last, three positions) where the scope
    and the declarations leave room for the leaf memo's key (at.fast): the
    values straight from the memo, the best line's leaf into out as it is
    found."""
    cdef int k, v, best, n = r.n3
    cdef bint mx = s.turn == X.S.me, better
    cdef const TriLine* ln
    cdef LeafEntry* e
    cdef Leaf lf
    best = -(1 << 30) if mx else (1 << 30)
    k = 0
    while k < n:
        ln = &r.lines[k]
        k += 1
        e = tri_entry(X, at, ln)
        if e != NULL:
            v = e.leaf.obj
            better = v > best if mx else v < best
            if better:
                best = v
                out[0] = e.leaf
        else:
            v = tri_leaf(X, s, at, ln, &lf)
            better = v > best if mx else v < best
            if better:
                best = v
                out[0] = lf
        if mx:
            if best > alpha:
                alpha = best
        elif best < beta:
            beta = best
        if alpha >= beta:
            break
    X.S.solved += 3 * k
    return best

cdef inline int tri_replay(const Solve* X, const XState* s, const Tri* r, int alpha, int beta,
                           Leaf* out) noexcept nogil:
    """xalphabeta's value and line at s (counted already) from its tri: the
    same moves in the same order, windows, cut-offs and counts (a chain of
    one move, the tails as xalphabeta takes them), no move played. The lines'
    objectives come straight from the leaf memo (where the scope and the
    declarations leave room for its key), the line found's leaf at the end:
    tri_flat, else tri_lines."""
    cdef TriAt at
    tri_at(s, &at)
    return tri_replay_at(X, s, &at, r, alpha, beta, out)

cdef inline int tri_replay_at(const Solve* X, const XState* s, const TriAt* at, const Tri* r, int alpha, int beta,
                              Leaf* out) noexcept nogil:
    """tri_replay with s's TriAt (tri_at's, or one that goes to the same leaves)."""
    if r.flat and at.fast:
        return tri_flat(X, s, at, r, alpha, beta, out)
    return tri_lines(X, s, at, r, alpha, beta, out)

cdef int tri_lines(const Solve* X, const XState* s, const TriAt* at, const Tri* r, int alpha, int beta,
                   Leaf* out) noexcept nogil:
    """tri_replay of a tri that is not flat (or whose node's scope and
    declarations leave no room for the leaf memo's key)."""
    cdef int k, v, best, node = 0, bl = 0, best_line = 0
    cdef long count = 0
    cdef bint maxing = s.turn == X.S.me
    cdef LeafEntry* e
    cdef const TriLine* ln
    if r.n3 == 1:                                       # (alphabeta's chain of one move)
        count = 1
        best = tri_tail(X, s, at, r, 0, 0, r.n1[0], not maxing, alpha, beta, &best_line, &count)
    else:
        best = -(1 << 30) if maxing else (1 << 30)
        for k in range(r.n3):
            count += 1
            v = tri_tail(X, s, at, r, node, r.ls[k], r.n1[k], not maxing, alpha, beta, &bl, &count)
            node += r.n1[k]
            if improves(v, maxing, &best, &alpha, &beta):
                best_line = bl
            if alpha >= beta:
                break
    X.S.solved += count
    ln = &r.lines[best_line]
    e = tri_entry(X, at, ln) if at.fast else NULL
    if e != NULL:
        out[0] = e.leaf
    else:
        tri_leaf(X, s, at, ln, out)
    return best


cdef inline int hint_first(const Hint* h, u64 hkey, const u64* pk, const Move* buf, int n, int g) noexcept nogil:
    """The move alphabeta searches first among n (packed in pk, else in buf):
    the one the hint h holds for this position (hkey) if it is among them,
    else the greedy one (g)."""
    cdef int i
    if h.key != hkey:
        return g
    if pk != NULL:
        if h.best.card >= 0 and h.best.take2 == 0 and h.best.matta_rank == -1:
            for i in range(n):
                if pk[i] == (<u64>h.best.card << 40 | h.best.take):
                    return i
        return g
    for i in range(n):
        if (buf[i].card == h.best.card and buf[i].take == h.best.take
                and buf[i].take2 == h.best.take2 and buf[i].matta_rank == h.best.matta_rank):
            return i
    return g

cdef inline void hint_store(Hint* h, u64 hkey, const u64* pk, const Move* buf, int mi) noexcept nogil:
    """The position of hkey's best move (mi among pk's, else buf's) into h."""
    h.key = hkey
    if pk == NULL:
        h.best = buf[mi]
        return
    h.best.take = pk[mi] & TAKE_MASK
    h.best.take2 = 0
    h.best.card = <signed char>(pk[mi] >> 40)
    h.best.matta_rank = -1
    h.best.points = 0

cdef struct Six:                # the cards in the hands that xab is specialized for
    char _
cdef struct Five:
    char _
cdef struct Four:
    char _
ctypedef fused Cards:
    Six
    Five
    Four

cdef int xab(Cards* cards, const Solve* X, XState* s, int depth, int alpha, int beta,
             Leaf* out) noexcept nogil:
    """xalphabeta at a position of the last round (the stock dealt) with 6, 5
    or 4 cards in the hands (the type of `cards`, NULL; counted already): its
    steps in its order, written for these nodes alone (no hint, no deal: the
    stock is dealt) and compiled for each count. The table with 6 and 4
    cards (alphabeta's), a chain of one move without it; the children with
    one card fewer by xab's next count, with 3 by their tris (xtri_of,
    tri_replay), else by xalphabeta (a declaration: as many cards left).
    Clobbers *s."""
    cdef XState c
    cdef XState* child
    cdef Leaf lf
    cdef Leaf* lp
    cdef int n, i, v, best, maxing, alpha0 = alpha, beta0 = beta, g, first, mi, cleft, left
    cdef Move* buf = &X.S.buf[depth * XCAP]
    cdef u64* pk
    cdef Tri* tr
    cdef Search* S = X.S
    cdef u64 key = 0, tflags = 0, kb = 0
    cdef TTEntry* e = NULL
    cdef TriAt at
    cdef int seat = 0, sc = 0
    cdef bint fast = 0
    if Cards is Six:
        left = 6
    elif Cards is Five:
        left = 5
    else:
        left = 4
    if Cards is not Five:                               # (alphabeta's table)
        key = xstate_key(X, s, 1)
        e = &X.tt[key & ((1 << TT_BITS) - 1)]
        if tt_hit(e, key, alpha, beta, out):
            return out.obj
    n = xmoves_of(X, s, buf, &pk, &g)
    if n == 0:                                          # (cannot happen in play)
        leaf_of(S, full_of(X, s), out)
        return out.obj
    if Cards is Five:
        if n == 1:                                      # (alphabeta's chain of one move)
            xmove(s, pk, buf, 0)
            return xalphabeta(X, s, left - (pk != NULL or buf[0].card >= 0), depth + 1, alpha, beta, out)
    first = g if n > 1 else 0
    maxing = s.turn == S.me
    if Cards is Four:
        # what the children's tris' keys and TriAts share (tri_flags, tri_at)
        # for a card play, taken from s once: the mover's sweep alone changes
        seat = s.turn & 1
        tflags = tri_flags(s)
        if tflags:
            tflags ^= <u64>1 << 40
            tflags &= ~(<u64>(seat + 1) << 53)          # (fresh: xplay's)
        sc = s.scope[seat]
        at.kb = (<u64>s.scope[0] << 40 | <u64>s.scope[1] << 45 | <u64>s.decl[0] << 50 | <u64>s.decl[1] << 55
                 | (<u64>1 << 63))
        fast = ((<unsigned int>s.scope[0] | <unsigned int>s.scope[1]) <= 29
                and (<unsigned int>s.decl[0] | <unsigned int>s.decl[1]) <= 31)
        kb = at.kb
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        child = s
        if i + 1 < n:
            c = s[0]
            child = &c
        mi = order_of(i, first)
        if pk != NULL:                                  # (cards are left after it)
            xplay_on(child, <int>(pk[mi] >> 40), pk[mi] & TAKE_MASK)
        else:
            xapply(child, &buf[mi])
        lp = out if i == 0 else &lf
        cleft = left - (pk != NULL or buf[mi].card >= 0)
        if cleft == left or child.phase != PH_PLAY:     # (a declaration; none over with cards left)
            v = xalphabeta(X, child, cleft, depth + 1, alpha, beta, lp)
        elif Cards is Six:
            S.solved += 1
            v = xab(<Five*>NULL, X, child, depth + 1, alpha, beta, lp)
        elif Cards is Five:
            S.solved += 1
            v = xab(<Four*>NULL, X, child, depth + 1, alpha, beta, lp)
        else:
            tr = tri_at_key(X, child, tflags, depth + 1)
            if tr != NULL:
                S.solved += 1
                at.q0 = child.pile[0]
                at.s = child
                at.kb = kb + (<u64>(child.scope[seat] - sc) << (40 + 5 * seat))
                at.fast = fast and child.last_capturer >= 0
                v = tri_replay_at(X, child, &at, tr, alpha, beta, lp)
            else:
                v = xalphabeta(X, child, cleft, depth + 1, alpha, beta, lp)
        if improves(v, maxing, &best, &alpha, &beta) and i:
            out[0] = lf
        if alpha >= beta:
            break
    if e != NULL:
        tt_store(e, key, out, best, alpha0, beta0)
    return best

cdef int xalphabeta(const Solve* X, XState* s, int left, int depth, int alpha, int beta,
                    Leaf* out) noexcept nogil:
    """alphabeta on the compact state through the memos: the same positions in
    the same order, the same windows, tables and counts (2 players: a seat is
    its side). Clobbers *s."""
    cdef XState c
    cdef XState* child
    cdef Leaf lf
    cdef Leaf* lp
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta, g, cleft
    cdef Move* buf
    cdef u64* pk
    cdef int first = 0, mi
    cdef Tail* tl
    cdef Tri* tr
    cdef u64 key = 0, hkey = 0
    cdef TTEntry* e = NULL
    cdef Hint* h = NULL
    cdef Search* S = X.S
    while True:
        S.solved += 1
        if s.phase == PH_OVER:
            return xleaf(X, s, 0, 0, 0, out)
        if left == 4 and s.stock_pos == N_CARDS:
            return xab(<Four*>NULL, X, s, depth, alpha, beta, out)
        if left == 5 and s.stock_pos == N_CARDS:
            return xab(<Five*>NULL, X, s, depth, alpha, beta, out)
        if left == 6 and s.stock_pos == N_CARDS:
            return xab(<Six*>NULL, X, s, depth, alpha, beta, out)
        if left == 4 or left == 6:                      # (alphabeta's table)
            key = xstate_key(X, s, 1)
            e = &X.tt[key & ((1 << TT_BITS) - 1)]
            if tt_hit(e, key, alpha, beta, out):
                return out.obj
        if left == 3 and s.stock_pos == N_CARDS:
            # three cards left: the rest from the tris' memo
            tr = xtri_of(X, s, depth)
            if tr != NULL:
                return tri_replay(X, s, tr, alpha, beta, out)
        if left == 2 and s.stock_pos == N_CARDS and s.hand[0] and s.hand[1]:
            # one card in each hand: the rest from the tails' memo
            tl = xtail_of(X, s, depth)
            if tl != NULL:
                return tail_replay(X, s, tl, alpha, beta, out)
        buf = &S.buf[depth * XCAP]
        n = xmoves_of(X, s, buf, &pk, &g)
        if n == 0:                                      # (cannot happen in play)
            leaf_of(S, full_of(X, s), out)
            return out.obj
        if n > 1 or e != NULL:
            break
        xmove(s, pk, buf, 0)                            # (alphabeta's chain of one move)
        left -= pk != NULL or buf[0].card >= 0
        if s.phase == PH_DEAL:
            left = xdeal(X, s)
        depth += 1
    if n > 1:
        first = g                                       # (alphabeta's order)
        if s.stock_pos < N_CARDS:
            hkey = xstate_key(X, s, 0)
            h = &X.hints[hkey & ((1 << TT_BITS) - 1)]
            first = hint_first(h, hkey, pk, buf, n, g)
    j = 0
    maxing = s.turn == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        child = s
        if i + 1 < n:
            c = s[0]                                    # 64 bytes: four vector moves
            child = &c
        mi = order_of(i, first)
        xmove(child, pk, buf, mi)
        lp = out if i == 0 else &lf
        if child.phase == PH_OVER:
            S.solved += 1
            v = xleaf(X, child, 0, 0, 0, lp)
        else:
            cleft = left - (pk != NULL or buf[mi].card >= 0)
            if child.phase != PH_PLAY:
                cleft = xdeal(X, child)
            tl = NULL
            tr = NULL
            if cleft == 3 and child.stock_pos == N_CARDS:
                # the child's tri without the call (xalphabeta's first steps there)
                tr = xtri_of(X, child, depth + 1)
            elif cleft == 2 and child.stock_pos == N_CARDS and child.hand[0] and child.hand[1]:
                # the child's tail without the call (xalphabeta's first steps there)
                tl = xtail_of(X, child, depth + 1)
            if cleft == 4 and child.stock_pos == N_CARDS:
                S.solved += 1
                v = xab(<Four*>NULL, X, child, depth + 1, alpha, beta, lp)
            elif tr != NULL:
                S.solved += 1
                v = tri_replay(X, child, tr, alpha, beta, lp)
            elif tl != NULL:
                S.solved += 1
                v = tail_replay(X, child, tl, alpha, beta, lp)
            else:
                v = xalphabeta(X, child, cleft, depth + 1, alpha, beta, lp)
        if take_child(v, i, maxing, &best, &alpha, &beta, &j, out, &lf):
            break
    if e != NULL:
        tt_store(e, key, out, best, alpha0, beta0)
    if h != NULL:
        hint_store(h, hkey, pk, buf, order_of(j, first))
    return best

cdef void skel_reset(Skel* K) noexcept nogil:
    """The skeleton emptied (another holding, another call)."""
    cdef int m
    K.used = 0
    for m in range(SKEL_ROOTS):
        K.roots[m] = -1

cdef int skel_node(const Solve* X, const XState* s, int left, int depth) noexcept nogil:
    """A new node for s (left cards in the hands; its moves from xmoves_of,
    with Search.buf's row depth): its index, or -1 where the skeleton is full."""
    cdef Skel* K = X.skel
    cdef SkelNode* nd
    cdef Move* buf = &X.S.buf[depth * XCAP]
    cdef u64* pk
    cdef int n, g, i
    if K.used >= SKEL_NODES:
        return -1
    nd = &K.nodes[K.used]
    nd.s = s[0]
    nd.left = <signed char>left
    nd.n = 0
    nd.deal = s.phase != PH_PLAY
    if not nd.deal:
        n = xmoves_of(X, s, buf, &pk, &g)
        if 0 < n <= SKEL_MOVES:
            nd.n = <signed char>n
            nd.g = <signed char>g
            nd.packed = pk != NULL
            for i in range(n):
                if pk != NULL:
                    nd.moves[i] = pk[i]
                else:
                    nd.mv[i] = buf[i]
                nd.kids[i] = -1
            nd.pre = xstate_pre(s)
    K.used += 1
    return K.used - 1

cdef int skel_root(const Solve* X, int m, const XState* x, int left) noexcept nogil:
    """Root move m's node for its position x (the skeleton emptied where it
    holds another), or -1 where the skeleton does not serve it (the stock
    dealt, no room)."""
    cdef Skel* K = X.skel
    cdef int k
    if K == NULL or m >= SKEL_ROOTS or x.stock_pos >= N_CARDS or x.phase != PH_PLAY:
        return -1
    k = K.roots[m]
    if k >= 0:
        if memcmp(&K.nodes[k].s, x, sizeof(XState)) == 0:
            return k
        skel_reset(K)
    K.roots[m] = skel_node(X, x, left, 0)
    K.risk[m] = -1
    return K.roots[m]

cdef int skel_child(const Solve* X, int idx, int mi, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """xalphabeta's child after move mi of node idx (depth: the child's):
    the node's skel_ab, the round's end dealt and searched by xalphabeta
    (or the child played out there where the skeleton is full)."""
    cdef SkelNode* nd = &X.skel.nodes[idx]
    cdef XState c
    cdef int k = nd.kids[mi], cleft = nd.left - (nd.packed != 0 or nd.mv[mi].card >= 0)
    if k < 0:
        c = nd.s
        xmove(&c, (<u64*>nd.moves if nd.packed else NULL), nd.mv, mi)
        k = skel_node(X, &c, cleft, depth)
        X.skel.nodes[idx].kids[mi] = <short>k
        if k < 0:
            if c.phase != PH_PLAY:
                cleft = xdeal(X, &c)
            return xalphabeta(X, &c, cleft, depth, alpha, beta, out)
    return skel_ab(X, k, depth, alpha, beta, out)

cdef int skel_ab(const Solve* X, int idx, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """xalphabeta at the skeleton's node idx: the same steps, counts, tables
    and order (xalphabeta's chains of one move, its table with 4 or 6 cards
    left, its hints), from the node's moves, hashes and children, which the
    worlds of the holding share; the deal and the last round as xalphabeta
    searches them, and so the nodes without moves kept."""
    cdef SkelNode* nd
    cdef XState c
    cdef Leaf lf
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta, first = 0, k
    cdef u64 key = 0, hkey = 0
    cdef TTEntry* e = NULL
    cdef Hint* h = NULL
    cdef Search* S = X.S
    while True:
        nd = &X.skel.nodes[idx]
        if nd.deal or nd.n == 0:
            c = nd.s
            return xalphabeta(X, &c, xdeal(X, &c) if nd.deal else nd.left, depth, alpha, beta, out)
        S.solved += 1
        if nd.left == 4 or nd.left == 6:                # (alphabeta's table)
            key = stock_key(X, nd.pre, nd.s.stock_pos)
            e = &X.tt[key & ((1 << TT_BITS) - 1)]
            if tt_hit(e, key, alpha, beta, out):
                return out.obj
        n = nd.n
        if n > 1 or e != NULL:
            break
        k = nd.kids[0]                                  # (alphabeta's chain of one move)
        if k < 0:
            return skel_child(X, idx, 0, depth + 1, alpha, beta, out)
        idx = k
        depth += 1
    if n > 1:
        hkey = nd.pre if nd.pre else 1                 # (alphabeta's order)
        h = &X.hints[hkey & ((1 << TT_BITS) - 1)]
        first = hint_first(h, hkey, (<u64*>nd.moves if nd.packed else NULL), nd.mv, n, nd.g)
    j = 0
    maxing = nd.s.turn == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        v = skel_child(X, idx, order_of(i, first), depth + 1, alpha, beta, out if i == 0 else &lf)
        if take_child(v, i, maxing, &best, &alpha, &beta, &j, out, &lf):
            break
    if e != NULL:
        tt_store(e, key, out, best, alpha0, beta0)
    if h != NULL:
        nd = &X.skel.nodes[idx]
        hint_store(h, hkey, (<u64*>nd.moves if nd.packed else NULL), nd.mv, order_of(j, first))
    return best

cdef void exact_world(const Solve* X, const State* w, double weight) noexcept nogil:
    """Every root move solved exactly in one world; accumulated like a paired
    world, with the weight the world's likelihood gives it."""
    cdef State s
    cdef XState x
    cdef Leaf lf
    cdef int m, j, k
    cdef RootMove* rm
    cdef Search* S = X.S
    X.dealt.pos = -1                                    # (another world: another stock)
    for m in range(S.n_root):
        rm = &S.roots[m]
        memcpy(&s, w, sizeof(State))
        apply_move(&s, &S.r, &rm.move)
        deal_due(&s, &S.r, &S.rng)
        if X.memo:
            memcpy(X.full, &s, sizeof(State))
            memset(&x, 0, sizeof(XState))               # (skel_root compares it whole)
            x_of(&s, &x)
            x.mval = s.cval[X.matta] & X.matta_mask
            k = skel_root(X, m, &x, popcount(s.hand[0] | s.hand[1]))
            if k >= 0:
                # the root's position is the holding's: so is whether the next can sweep
                if X.skel.risk[m] < 0:
                    X.skel.risk[m] = can_sweep_next(&s, &S.r, S.buf)
                rm.p_risk += weight * X.skel.risk[m]
                skel_ab(X, k, 0, -(1 << 30), 1 << 30, &lf)
            else:
                rm.p_risk += weight * can_sweep_next(&s, &S.r, S.buf)
                xalphabeta(X, &x, popcount(s.hand[0] | s.hand[1]), 0, -(1 << 30), 1 << 30, &lf)
        else:
            rm.p_risk += weight * can_sweep_next(&s, &S.r, S.buf)
            alphabeta(X, &s, in_hands(&s, &S.r), 0, -(1 << 30), 1 << 30, &lf)
        rm.p_val = lf.margin
        rm.p_wval = lf.win
        for j in range(N_CAT):
            rm.p_cat[j] += weight * lf.cats[j]
    add_world(S, weight)

# --- the last round against flat Monte Carlo's way of playing it ---
#
# A player searching by rollouts alone (flat Monte Carlo: every move played out
# on random worlds by the rollout policy) plays the last round of 2 players,
# where it sees every card, as the best of its moves by the rollout policy's
# expectation of the rest: its 10,000 rollouts estimate that figure closely
# (docs/strength.md, "The last round against a player who plays it by
# rollouts"). Minimax rates alike moves that a perfect opponent answers alike;
# among them, the one this player answers worst is the better.

# the positions a walk of the last round may visit (a few ms; with optional
# captures and a large table it could take 100 ms): beyond, the rollouts
cdef enum:
    WALK_NODES = 20000

cdef double rollout_expectation(Search* S, const State* s, int depth, long* left) noexcept nogil:
    """The asking side's margin from s to the hand's end, expected over every
    line of the rollout policy (greedy's move, or one of all at random
    EPS_MILLI_DEFAULT times in 1000, the Searcher's and flat Monte
    Carlo's rate) on both sides; no deal is due. Each position visited counts
    down `left` (below 0: the figure is void)."""
    cdef State c
    cdef Leaf lf
    cdef Move* buf = &S.buf[depth * XCAP]
    cdef int n, i, g
    cdef double v = 0.0, p, eps = EPS_MILLI_DEFAULT / 1000.0
    left[0] -= 1
    if left[0] < 0:
        return 0.0
    if s.phase != PH_PLAY:
        leaf_of(S, s, &lf)
        return lf.margin
    n = gen_moves(s, &S.r, buf, XCAP)
    if n > XCAP:
        n = XCAP
    g = greedy_index(s, &S.r, buf, n) if n > 1 else 0
    for i in range(n):
        copy_state(&c, s, sizeof(State))
        apply_move(&c, &S.r, &buf[i])
        p = eps / n + (1.0 - eps if i == g else 0.0) if n > 1 else 1.0
        v += p * rollout_expectation(S, &c, depth + 1, left)
    return v


cdef void against_rollout_player(Search* S, const State* s, int depth, double program, int* obj,
                                 double* vs, long* left) noexcept nogil:
    """From s: `obj`, the minimax objective of the asking side, and `vs`, its
    margin against the other seat read as the greedy program with weight
    `program` (its move greedy's) and else as the rollout player (its every
    move the best by rollout_expectation), the asking side's moves the best by
    minimax first, then against that seat. Counts down `left` as
    rollout_expectation does."""
    cdef State c
    cdef Leaf lf
    cdef Move* buf = &S.buf[depth * XCAP]
    cdef int n, i, o, pick = -1, mine, g = -1
    cdef double v, best_v = 0.0, theirs = 0.0
    cdef int best_o = 0
    left[0] -= 1
    if left[0] < 0:
        obj[0] = 0
        vs[0] = 0.0
        return
    if s.phase != PH_PLAY:
        leaf_of(S, s, &lf)
        obj[0] = lf.obj
        vs[0] = lf.margin
        return
    n = gen_moves(s, &S.r, buf, XCAP)
    if n > XCAP:
        n = XCAP
    mine = side_of(&S.r, s.turn) == S.me
    if not mine and n > 1:                              # the program's move, and the rollout player's
        g = greedy_index(s, &S.r, buf, n)
        for i in range(n):
            copy_state(&c, s, sizeof(State))
            apply_move(&c, &S.r, &buf[i])
            v = rollout_expectation(S, &c, depth + 1, left)
            if pick < 0 or v < best_v:                  # its best, the asking side's worst
                pick, best_v = i, v
    for i in range(n):
        copy_state(&c, s, sizeof(State))
        apply_move(&c, &S.r, &buf[i])
        against_rollout_player(S, &c, depth + 1, program, &o, &v, left)
        if i == 0 or (o > best_o if mine else o < best_o) or (mine and o == best_o and v > best_v):
            best_o = o
            if mine or n == 1:
                best_v = v
        if not mine and n > 1:
            theirs += ((program if i == g else 0.0) + (1.0 - program if i == pick else 0.0)) * v
    obj[0] = best_o
    vs[0] = best_v if mine or n == 1 else theirs


cdef int last_round_vs_rollout_player(Search* S, double program, double* out) noexcept nogil:
    """Each root move's margin against the other seat, the greedy program with
    weight `program` and else the rollout player (against_rollout_player), in
    the last round of 2 players, the one world there is: out[m] by root move.
    -1 where that is not the position (a stock, more players), or where the
    walk would visit more than WALK_NODES positions."""
    cdef Know* k = &S.k
    cdef State w, c
    cdef int m, i, o, opp = 1 - k.observer
    cdef long left = WALK_NODES
    if S.r.n_players != 2 or k.base.stock_pos != N_CARDS:
        return -1
    memcpy(&w, &k.base, sizeof(State))
    for i in range(k.n_unseen):                         # every card unseen is the other seat's
        w.hand[opp] |= bit(k.unseen[i])
    for m in range(S.n_root):
        copy_state(&c, &w, sizeof(State))
        apply_move(&c, &S.r, &S.roots[m].move)
        against_rollout_player(S, &c, 0, program, &o, &out[m], &left)
    return 0 if left >= 0 else -1


cdef void shuffle_worlds(const Know* k, u64* ways, int count) noexcept nogil:
    """The worlds' keys in a shuffled order seeded by the position (the same
    for every part of a split solve, so the parts split them; shuffled, those
    solved before a cut-off are a fair sample of them all)."""
    cdef Rng order
    cdef int i, j
    cdef u64 t
    order.s = mix64(k.base.table ^ (k.base.hand[k.observer] << 20) ^ <u64>k.n_unseen)
    for i in range(count - 1, 0, -1):                   # Fisher-Yates
        j = rng_below(&order, i + 1)
        t = ways[i]; ways[i] = ways[j]; ways[j] = t


cdef inline int next_share(const Search* S, int index, int parts, int count, double deadline) noexcept nogil:
    """The next world of a part's share of count shuffled worlds (index + parts):
    count where the share is done, -1 where the search is halted."""
    index += parts
    if index >= count:
        return count
    return -1 if halted(S.stop, deadline) else index


cdef long seat_worlds(const Solve* X, int part, int parts, double deadline) noexcept nogil:
    """exact_worlds with more than 2 players, two sides, in the last round
    (the stock dealt): every way the unseen cards lie in the other seats'
    hands, shuffled and split by parts as exact_worlds splits the holdings.
    For the best response to the program (the other side's every move
    greedy's, X.respond): with two others to search against, minimax would
    be too big a tree. Returns the worlds solved, or -1 if cut short."""
    cdef Search* S = X.S
    cdef Know* k = &S.k
    cdef const Rules* r = &S.r
    cdef State w
    cdef int n = k.n_unseen, m = 0, i, c, count = 0, index
    cdef int seats[MAX_SEATS]
    cdef u64 full = ((<u64>1) << n) - 1, a, b, cap = 1
    cdef u64* ways
    cdef long done = 0
    if r.n_sides != 2 or k.base.stock_pos != N_CARDS or n > 9:
        return 0
    for i in range(r.n_players):
        if i != k.observer and k.hidden[i] > 0:
            seats[m] = i
            m += 1
    c = 0
    for i in range(m):
        c += k.hidden[seats[i]]
    if m > 3 or c != n:
        return 0
    for _ in range(n):
        cap *= m                                        # the ways the cards can lie, at most
    ways = <u64*>malloc(cap * sizeof(u64))              # the first two seats' cards: a | b << 32
    if ways == NULL:
        return -1
    if m == 0:                                          # every card seen: the one world
        ways[0] = 0
        count = 1
    for a in range(full + 1 if m else 0):
        if popcount(a) != k.hidden[seats[0]]:
            continue
        if m == 1:
            ways[count] = a
            count += 1
            continue
        for b in range(full + 1):
            if b & a or popcount(b) != k.hidden[seats[1]]:
                continue
            if m == 2 and (a | b) != full:
                continue
            ways[count] = a | b << 32
            count += 1
    shuffle_worlds(k, ways, count)
    index = part - parts
    while True:
        index = next_share(S, index, parts, count, deadline)
        if index == count:
            break
        if index < 0:
            free(ways)
            return -1
        a = ways[index] & ((<u64>1 << 32) - 1)
        b = ways[index] >> 32
        memcpy(&w, &k.base, sizeof(State))
        for i in range(n):
            c = 0 if a >> i & 1 else (1 if b >> i & 1 else 2)
            w.hand[seats[c]] |= bit(k.unseen[i])
        c = 0
        for i in range(m):
            if k.nobuona[seats[i]] and has_buona(k, r, seats[i], w.hand[seats[i]] | k.played[seats[i]]):
                c = 1
        if c:
            continue
        exact_world(X, &w, play_likelihood(k, r, &w, NULL))
        done += 1
    free(ways)
    return done


cdef long exact_worlds(Search* S, Tables* x, int part, int parts, double deadline, int respond) noexcept nogil:
    """Enumerate the worlds of a 2-player endgame (the opponent's hidden cards x
    the split of the stock between the two seats of the last deal; the order
    within a seat's 3 cards does not matter) and solve the opponent holdings
    numbered part, part + parts, ... of a shuffled order, each with every
    split (consecutive worlds that share a holding share the move-ordering
    hints). The order is the same for every part (seeded by the position), so
    the parts split the holdings; shuffled, the holdings solved when the
    `deadline` (monotonic seconds, 0: none) or the stop flag cuts the solve
    short are a fair sample of them all. Worlds breaking the R-DECL-CHOICE
    inference are skipped. `respond` 1: the other seat plays the greedy
    program's move at each of its turns (the best response to a program, by
    the reference search: its tree is small). Returns the worlds solved (this
    part's share), or -1 if cut short."""
    cdef Know* k = &S.k
    cdef const Rules* r = &S.r
    cdef State w, held
    cdef int opp = 1 - k.observer, n = k.n_unseen, h
    cdef int ns = N_CARDS - k.base.stock_pos, first, i, pos, count = 0, index
    cdef double likelihood
    cdef u64 hm, sm
    cdef u64* holdings
    cdef long done = 0
    cdef signed char cards[N_CARDS]
    cdef Solve X
    cdef State full
    cdef Dealt dealt
    # the memos for the many worlds of the last two rounds; one world (the
    # last round, or the true one) is solved faster than they fill
    X.respond = respond
    X.memo = (not REFERENCE and not respond and not k.fixed and ns > 0 and r.n_players == 2 and r.n_sides == 2
              and not r.five_players and memos_init(x) == 0)
    X.full = &full
    X.dealt = &dealt
    X.S = S; X.tt = x.tt; X.hints = x.hints; X.moves = x.moves; X.leaves = x.leaves
    X.tails = x.tails
    X.tris = x.tris
    X.duos = x.duos
    X.tables = x.tables
    X.decls = x.decls
    X.skel = &x.skel if X.memo else NULL
    if X.skel != NULL:
        skel_reset(X.skel)
    X.matta = r.matta if r.matta >= 0 else 0
    X.matta_mask = 0xF if r.matta >= 0 else 0
    if k.fixed:                                         # the true world: nothing to enumerate
        if part == 0 and not load_flag(S.stop):
            exact_world(&X, &k.base, 1.0)
            return 1
        return 0
    if r.n_players > 2:
        return seat_worlds(&X, part, parts, deadline)
    h = k.hidden[opp]
    if n != h + ns or ns > 12:
        return 0
    holdings = <u64*>malloc(((<u64>1) << n) * sizeof(u64))
    if holdings == NULL:
        return -1
    for hm in range((<u64>1) << n):
        if popcount(hm) == h:
            holdings[count] = hm
            count += 1
    shuffle_worlds(k, holdings, count)
    index = part - parts
    while True:
        index = next_share(S, index, parts, count, deadline)
        if index == count:
            break
        if index < 0:
            free(holdings)
            return -1
        hm = holdings[index]
        # the holding's world but for the stock, and its likelihood (which reads no stock)
        memcpy(&held, &k.base, sizeof(State))
        pos = 0
        for i in range(n):
            if hm >> i & 1:
                held.hand[opp] |= bit(k.unseen[i])
            else:
                cards[pos] = k.unseen[i]; pos += 1
        if k.nobuona[opp] and has_buona(k, r, opp, held.hand[opp] | k.played[opp]):
            continue
        likelihood = play_likelihood(k, r, &held, NULL)
        if X.skel != NULL:
            skel_reset(X.skel)                          # (the worlds of this holding share it)
        for sm in range((<u64>1) << ns):
            # with a stock, the first receiver (after the dealer) gets the first half
            if ns and popcount(sm) * 2 != ns:
                continue
            if ns == 0 and sm:
                break
            if load_flag(S.stop):
                free(holdings)
                return -1
            memcpy(&w, &held, sizeof(State))
            first = w.stock_pos
            for i in range(ns):                         # the first receiver's cards
                if sm >> i & 1:
                    w.stock[first] = cards[i]; first += 1
            for i in range(ns):
                if not (sm >> i & 1):
                    w.stock[first] = cards[i]; first += 1
            exact_world(&X, &w, likelihood)
            done += 1
    free(holdings)
    return done
