# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact endgames (2 players): the worlds of the last round (one, perfect
information) or of the last two (every opponent holding x every split of the
last deal), every root move solved by alpha-beta in each and the values
averaged like the paired phase's. The types are in _exact.pxd.

The search visits about 1.5 million positions for the last two rounds, and
meets the same (hand, table) pairs and the same finished piles again and
again (9 times in 10): so the legal moves with their greedy order and the
leaves' values come from memos (moves_of, leaf_memo) that keep what the
core's gen_moves, greedy_index and evaluate gave, keyed by everything those
read; a position with one move hands its window on to the next without a
call. The hand's last two plays (one card in each hand), 60% of the
positions with the leaves after them, come from a third memo (tail_of): the
lines the core's moves make, by what they add to the piles, scope and
declarations, which no play reads, so the same lines serve whatever the
piles hold; tail_replay runs alphabeta's loop over them. The search itself
(its order, cut-offs, tables and positions) is what it was without the
memos, and so are its figures, to the last bit: `_reference` turns them off
for the tests that check it. One world (the last round, or the true one) is
solved without them: faster than they would fill."""
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from cirulla.solver._core cimport (
    N_CARDS, N_CAT, PH_DEAL, PH_OVER, PH_PLAY, Rng, Rules, State, apply_move, bit, deal_due, gen_moves,
    greedy_index, mix64, popcount, rng_below, side_of, u64)
from cirulla.solver._equity cimport Eval, evaluate, win_of
from cirulla.solver._paired cimport add_world, can_sweep_next
from cirulla.solver._search cimport RootMove, load_flag, now_s
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
    MOVES_BITS = 13             # 8192 move lists of 48 bytes and 8192 leaves of 48: about a core's
    LEAVES_BITS = 13            # L2 cache with the rest (12 or 14 bits: measured slower)
    TAILS_BITS = 12             # 4096 tails of 128 bytes (one line, 4 lines at most)
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3

cdef struct Solve:
    # one call's search and the tables, what alphabeta threads through its
    # recursion (in one argument: all of alphabeta's go in registers)
    Search* S
    TTEntry* tt
    Hint* hints
    MoveList* moves
    LeafEntry* leaves
    Tail* tails
    int memo                    # 0: without the memos (see _reference)
    int matta                   # the matta (card 0 without one) and a mask of its capture
    unsigned char matta_mask    # value (0 without one) for the memos' keys

cdef int REFERENCE = 0


def _reference(bint on):
    """Solve without the memos (on: every position's moves from gen_moves and
    greedy_index, every move played by apply_move, every leaf from evaluate):
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
    x.tt = <TTEntry*>calloc(1 << TT_BITS, sizeof(TTEntry))
    x.hints = <Hint*>calloc(1 << TT_BITS, sizeof(Hint))
    if x.tt == NULL or x.hints == NULL:
        tables_free(x)
        return -1
    return 0

cdef int memos_init(Tables* x) noexcept nogil:
    """Allocate the empty memos once (1.3 MB, its pages as they are used):
    0, or -1 out of memory (none kept: the solver goes on without)."""
    if x.moves != NULL:
        return 0
    x.moves = <MoveList*>calloc(1 << MOVES_BITS, sizeof(MoveList))
    x.leaves = <LeafEntry*>calloc(1 << LEAVES_BITS, sizeof(LeafEntry))
    # the tails on cache lines: one line each for most
    x.tails_mem = calloc(((<size_t>1) << TAILS_BITS) * sizeof(Tail) + 64, 1)
    if x.moves == NULL or x.leaves == NULL or x.tails_mem == NULL:
        memos_free(x)
        return -1
    x.tails = <Tail*>((<size_t>x.tails_mem + 63) & ~(<size_t>63))
    return 0

cdef void memos_free(Tables* x) noexcept nogil:
    free(x.moves)
    free(x.leaves)
    free(x.tails_mem)
    x.moves = NULL
    x.leaves = NULL
    x.tails_mem = NULL
    x.tails = NULL

cdef void tables_free(Tables* x) noexcept nogil:
    free(x.tt)
    free(x.hints)
    x.tt = NULL
    x.hints = NULL
    memos_free(x)


cdef u64 state_key(const State* s, const Rules* r, int with_stock) noexcept nogil:
    """A hash of everything in a 2-player state that the rest of the hand can
    depend on: holdings, table, piles, scope, declarations, the matta's value,
    whose turn, the last capturer, and the undealt stock in order."""
    cdef u64 h = (s.hand[0] ^ <u64>0x9E3779B97F4A7C15) * <u64>0xBF58476D1CE4E5B9
    cdef int i
    h = (h ^ (h >> 29) ^ s.hand[1]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.table) * <u64>0xBF58476D1CE4E5B9
    h = (h ^ (h >> 29) ^ s.pile[0]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.pile[1]) * <u64>0xBF58476D1CE4E5B9
    h = mix64(h ^ (<u64>s.turn | <u64>(s.last_capturer + 1) << 4 | <u64>s.declared << 8
                   | <u64>s.round << 16 | <u64>(s.scope[0] & 0xFF) << 24 | <u64>(s.scope[1] & 0xFF) << 32
                   | <u64>(s.decl[0] & 0xFF) << 40 | <u64>(s.decl[1] & 0xFF) << 48
                   | <u64>(s.cval[r.matta] if r.matta >= 0 else 0) << 56))
    if with_stock:
        for i in range(s.stock_pos, N_CARDS):
            h = (h ^ (<u64>s.stock[i] + (<u64>i << 8))) * <u64>0x9E3779B97F4A7C15
        h = mix64(h)
    return h if h else 1


cdef inline void leaf_of(const Search* S, const State* s, Leaf* lf) noexcept nogil:
    cdef Eval ev
    cdef int j, me = S.me, w
    evaluate(s, &S.r, &S.eq, &ev)
    lf.margin = <int>ev.margin[me]
    for j in range(N_CAT):
        lf.cats[j] = ev.cats[me * N_CAT + j] - ev.cats[(1 - me) * N_CAT + j]
    lf.win = win_of(&ev, me) if ev.win0 >= 0 else 0.0
    if S.match_mode:
        # lexicographic: the chance of winning the match first, then the margin
        w = <int>(lf.win * 10000.0 + 0.5)
        lf.obj = w * 512 + lf.margin + 256
    else:
        lf.obj = lf.margin

cdef inline int leaf_memo(const Solve* X, const State* s, Leaf* out) noexcept nogil:
    """leaf_of through the leaf memo (a finished hand's leaf depends on the
    piles, scope and declaration points alone: score_hand, cappotto_side;
    the equity's scores, the asking side and the mode are the search's).
    Returns the objective."""
    cdef u64 p0 = s.pile[0] | (<u64>1 << 63), p1 = s.pile[1], marks
    cdef LeafEntry* e
    if not X.memo or (<unsigned int>s.scope[0] | <unsigned int>s.scope[1] | <unsigned int>s.decl[0]
                      | <unsigned int>s.decl[1]) > 0xFFFF:
        leaf_of(X.S, s, out)
        return out.obj
    marks = <u64>s.scope[0] | <u64>s.scope[1] << 16 | <u64>s.decl[0] << 32 | <u64>s.decl[1] << 48
    e = &X.leaves[((p0 * <u64>0x9E3779B97F4A7C15) ^ (p1 * <u64>0xC2B2AE3D27D4EB4F) ^ marks)
                  * <u64>0xBF58476D1CE4E5B9 >> (64 - LEAVES_BITS)]
    if e.pile0 != p0 or e.pile1 != p1 or e.marks != marks:
        leaf_of(X.S, s, &e.leaf)
        e.pile0 = p0; e.pile1 = p1; e.marks = marks
    out[0] = e.leaf
    return e.leaf.obj

cdef int leaf_after(const Solve* X, const State* s, u64 p0, u64 p1, unsigned int marks,
                    Leaf* out) noexcept nogil:
    """leaf_memo of where a tail's line ends: s with the cards p0, p1 added to
    the piles and the points in marks (TailLine's) to the scope and
    declarations."""
    cdef u64 q0 = s.pile[0] | p0 | (<u64>1 << 63), q1 = s.pile[1] | p1, key
    cdef int sc0 = s.scope[0] + <int>(marks & 0xFF), sc1 = s.scope[1] + <int>(marks >> 8 & 0xFF)
    cdef int d0 = s.decl[0] + <int>(marks >> 16 & 0xFF), d1 = s.decl[1] + <int>(marks >> 24)
    cdef LeafEntry* e = NULL
    cdef State t
    if (<unsigned int>sc0 | <unsigned int>sc1 | <unsigned int>d0 | <unsigned int>d1) <= 0xFFFF:
        key = <u64>sc0 | <u64>sc1 << 16 | <u64>d0 << 32 | <u64>d1 << 48
        e = &X.leaves[((q0 * <u64>0x9E3779B97F4A7C15) ^ (q1 * <u64>0xC2B2AE3D27D4EB4F) ^ key)
                      * <u64>0xBF58476D1CE4E5B9 >> (64 - LEAVES_BITS)]
        if e.pile0 == q0 and e.pile1 == q1 and e.marks == key:
            out[0] = e.leaf
            return e.leaf.obj
    copy_state(&t, s, sizeof(State))
    t.pile[0] |= p0; t.pile[1] |= p1
    t.scope[0] = sc0; t.scope[1] = sc1; t.decl[0] = d0; t.decl[1] = d1
    leaf_of(X.S, &t, out)
    if e != NULL:
        e.pile0 = q0; e.pile1 = q1; e.marks = key
        e.leaf = out[0]
    return out.obj

cdef inline int moves_of(const Solve* X, const State* s, Move* buf, int* greedy) noexcept nogil:
    """gen_moves into buf (the count, at most XCAP) and greedy_index among them
    (when more than one), through the move memo. Both depend on the mover's
    hand, the table, whether the mover may declare, the cards left in hand
    (none, 1 or more per seat, summed: greedy_context), whether the stock is
    empty, and the capture values, of which only the matta's changes in a
    search (R-MATTA). The memo holds lists of card plays, MEMO_MOVES at most."""
    cdef const Rules* r = &X.S.r
    cdef int seat = s.turn, n, i, left
    cdef u64 h = s.hand[seat], h0 = s.hand[0], h1 = s.hand[1], k1 = 0, k2 = s.table, mv
    cdef MoveList* e = NULL
    if X.memo:
        left = (h0 != 0) + ((h0 & (h0 - 1)) != 0) + (h1 != 0) + ((h1 & (h1 - 1)) != 0)
        k1 = h | <u64>(left if left < 2 else 2) << 41 | <u64>(s.stock_pos == N_CARDS) << 43 | (<u64>1 << 63)
        if not (s.declared >> seat & 1) and popcount(h) == s.round_cards:
            k1 |= <u64>1 << 40
        k1 |= <u64>(s.cval[X.matta] & X.matta_mask) << 44
        e = &X.moves[((k1 * <u64>0x9E3779B97F4A7C15) ^ k2) * <u64>0xBF58476D1CE4E5B9 >> (64 - MOVES_BITS)]
        if e.hand == k1 and e.table == k2:
            n = e.n
            for i in range(n):
                mv = e.moves[i]
                buf[i].take = mv & ((<u64>1 << 40) - 1)
                buf[i].take2 = 0
                buf[i].card = <signed char>(mv >> 40)
                buf[i].matta_rank = -1
                buf[i].points = 0
            greedy[0] = e.greedy
            return n
    n = gen_moves(s, r, buf, XCAP)
    if n > XCAP:
        n = XCAP
    greedy[0] = greedy_index(s, r, buf, n) if n > 1 else 0
    if e == NULL or n > MEMO_MOVES:                     # (declarations: never kept)
        return n
    for i in range(n):
        if buf[i].card < 0 or buf[i].take2 or buf[i].matta_rank != -1 or buf[i].points:
            return n
        e.moves[i] = <u64>buf[i].card << 40 | buf[i].take
    e.hand = k1; e.table = k2; e.n = n; e.greedy = greedy[0]
    return n

cdef inline int order_of(int i, int first) noexcept nogil:
    """The move searched i-th (the one at first goes first, in place of the one at 0)."""
    return first if i == 0 else (0 if i == first else i)

cdef Tail* tail_of(const Solve* X, const State* s, int depth) noexcept nogil:
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
    cdef State c1, c2
    cdef Move* buf1 = &X.S.buf[depth * XCAP]
    cdef Move* buf2 = &X.S.buf[(depth + 1) * XCAP]
    cdef Tail* t
    if <unsigned int>s.declared > 3 or <unsigned int>s.round_cards > 15 or <unsigned int>s.turn > 1:
        return NULL
    k0 = (s.hand[0] | <u64>s.turn << 40 | <u64>(s.last_capturer + 1) << 41 | <u64>s.declared << 43
          | <u64>(s.cval[X.matta] & X.matta_mask) << 45 | <u64>s.round_cards << 49 | (<u64>1 << 63))
    t = &X.tails[((k0 * <u64>0x9E3779B97F4A7C15) ^ (s.hand[1] * <u64>0xC2B2AE3D27D4EB4F) ^ s.table)
                 * <u64>0xBF58476D1CE4E5B9 >> (64 - TAILS_BITS)]
    if t.hand0 == k0 and t.hand1 == s.hand[1] and t.table == s.table:
        return t
    n1 = moves_of(X, s, buf1, &g1)
    if n1 < 1 or n1 > TAIL_LINES:
        return NULL
    t.hand0 = 0                                         # (invalid until complete)
    for i in range(n1):
        copy_state(&c1, s, sizeof(State))
        apply_move(&c1, &X.S.r, &buf1[order_of(i, g1)])
        if c1.phase != PH_PLAY:
            return NULL
        n2 = moves_of(X, &c1, buf2, &g2)
        if n2 < 1 or lines + n2 > TAIL_LINES:
            return NULL
        t.n2[i] = n2
        t.turn2 = c1.turn
        for k in range(n2):
            copy_state(&c2, &c1, sizeof(State))
            apply_move(&c2, &X.S.r, &buf2[order_of(k, g2)])
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


cdef inline int tail_second(const Solve* X, const State* s, const Tail* t, int line, int n2, int alpha,
                            int beta, Leaf* out) noexcept nogil:
    """alphabeta at the second player's last card (lines line.. of t), as it
    would play them: the position and the leaves it visits counted."""
    cdef Search* S = X.S
    cdef Leaf lf
    cdef int k, v, best, maxing
    S.solved += 1
    if n2 == 1:                                         # (alphabeta's chain of one move)
        S.solved += 1
        return leaf_after(X, s, t.lines[line].pile0, t.lines[line].pile1, t.lines[line].marks, out)
    maxing = side_of(&S.r, t.turn2) == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for k in range(n2):
        S.solved += 1
        v = leaf_after(X, s, t.lines[line + k].pile0, t.lines[line + k].pile1, t.lines[line + k].marks,
                       out if k == 0 else &lf)
        if improves(v, maxing, &best, &alpha, &beta) and k:
            out[0] = lf
        if alpha >= beta:
            break
    return best

cdef int tail_replay(const Solve* X, const State* s, const Tail* t, int alpha, int beta,
                     Leaf* out) noexcept nogil:
    """alphabeta's value and line at s (counted already) from its tail: the
    same moves in the same order, windows and cut-offs, no move played."""
    cdef Search* S = X.S
    cdef Leaf lf
    cdef int i, v, best, maxing, line = 0
    if t.n1 == 1:
        return tail_second(X, s, t, 0, t.n2[0], alpha, beta, out)
    maxing = side_of(&S.r, s.turn) == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(t.n1):
        v = tail_second(X, s, t, line, t.n2[i], alpha, beta, out if i == 0 else &lf)
        line += t.n2[i]
        if improves(v, maxing, &best, &alpha, &beta) and i:
            out[0] = lf
        if alpha >= beta:
            break
    return best

cdef int alphabeta(const Solve* X, State* s, int left, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """Minimax with alpha-beta (fail-soft) on the objective of the asking side,
    in a world where every card is known, with a transposition table; out gets
    the leaf of the line found. left: the cards in the players' hands, depth
    the plies from the root (the scratch moves' row). Clobbers *s (the moves
    are played on it where there is one: no copy)."""
    cdef State c
    cdef State* child
    cdef Leaf lf
    cdef Leaf* lp
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta, g, cleft
    cdef Move* buf
    cdef Move* m
    cdef int first = 0
    cdef Tail* tl
    cdef u64 key = 0, hkey = 0
    cdef TTEntry* e = NULL
    cdef Hint* h = NULL
    cdef Search* S = X.S
    while True:
        S.solved += 1
        if s.phase == PH_OVER:
            return leaf_memo(X, s, out)
        # the table only where lines meet again and a subtree is worth storing:
        # with 4 or 6 cards left in the players' hands (plays of one round commute)
        if left == 4 or left == 6:
            key = state_key(s, &S.r, 1)
            e = &X.tt[key & ((1 << TT_BITS) - 1)]
            if e.key == key:
                v = e.leaf.obj
                if (e.flag == TT_EXACT or (e.flag == TT_LOWER and v >= beta)
                        or (e.flag == TT_UPPER and v <= alpha)):
                    out[0] = e.leaf
                    return v
        if left == 2 and X.memo and s.stock_pos == N_CARDS and s.hand[0] and s.hand[1]:
            # one card in each hand: the rest from the tails' memo
            tl = tail_of(X, s, depth)
            if tl != NULL:
                return tail_replay(X, s, tl, alpha, beta, out)
        buf = &S.buf[depth * XCAP]
        n = moves_of(X, s, buf, &g)
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
            left = popcount(s.hand[0] | s.hand[1])
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
            v = leaf_memo(X, child, lp)
        else:
            cleft = left - (m.card >= 0)
            if child.phase != PH_PLAY:                  # the next round's deal
                deal_due(child, &S.r, &S.rng)
                cleft = popcount(child.hand[0] | child.hand[1])
            v = alphabeta(X, child, cleft, depth + 1, alpha, beta, lp)
        if improves(v, maxing, &best, &alpha, &beta):
            j = i
            if i:
                out[0] = lf
        if alpha >= beta:
            break
    if e != NULL:
        e.key = key
        e.leaf = out[0]
        e.flag = TT_UPPER if best <= alpha0 else (TT_LOWER if best >= beta0 else TT_EXACT)
    if h != NULL:
        h.key = hkey
        h.best = buf[order_of(j, first)]
    return best

cdef void exact_world(const Solve* X, const State* w, double weight) noexcept nogil:
    """Every root move solved exactly in one world; accumulated like a paired
    world, with the weight the world's likelihood gives it."""
    cdef State s
    cdef Leaf lf
    cdef int m, j
    cdef RootMove* rm
    cdef Search* S = X.S
    for m in range(S.n_root):
        rm = &S.roots[m]
        memcpy(&s, w, sizeof(State))
        apply_move(&s, &S.r, &rm.move)
        deal_due(&s, &S.r, &S.rng)
        rm.p_risk += weight * can_sweep_next(&s, &S.r, S.buf)
        alphabeta(X, &s, popcount(s.hand[0] | s.hand[1]), 0, -(1 << 30), 1 << 30, &lf)
        rm.p_val = lf.margin
        rm.p_wval = lf.win
        for j in range(N_CAT):
            rm.p_cat[j] += weight * lf.cats[j]
    add_world(S, weight)

cdef long exact_worlds(Search* S, Tables* x, int part, int parts, double deadline) noexcept nogil:
    """Enumerate the worlds of a 2-player endgame (the opponent's hidden cards x
    the split of the stock between the two seats of the last deal; the order
    within a seat's 3 cards does not matter) and solve the opponent holdings
    numbered part, part + parts, ... of a shuffled order, each with every
    split (consecutive worlds that share a holding share the move-ordering
    hints). The order is the same for every part (seeded by the position), so
    the parts split the holdings; shuffled, the holdings solved when the
    `deadline` (monotonic seconds, 0: none) or the stop flag cuts the solve
    short are a fair sample of them all. Worlds breaking the R-DECL-CHOICE
    inference are skipped. Returns the worlds solved (this part's share), or
    -1 if cut short."""
    cdef Know* k = &S.k
    cdef const Rules* r = &S.r
    cdef State w
    cdef int opp = 1 - k.observer, n = k.n_unseen, h = k.hidden[opp]
    cdef int ns = N_CARDS - k.base.stock_pos, first, i, pos, count = 0, j, index
    cdef u64 hm, sm, t
    cdef u64* holdings
    cdef long done = 0
    cdef signed char cards[N_CARDS]
    cdef Rng order
    cdef Solve X
    # the memos for the many worlds of the last two rounds; one world (the
    # last round, or the true one) is solved faster than they fill
    X.memo = not REFERENCE and not k.fixed and ns > 0 and memos_init(x) == 0
    X.S = S; X.tt = x.tt; X.hints = x.hints; X.moves = x.moves; X.leaves = x.leaves
    X.tails = x.tails
    X.matta = r.matta if r.matta >= 0 else 0
    X.matta_mask = 0xF if r.matta >= 0 else 0
    if k.fixed:                                         # the true world: nothing to enumerate
        if part == 0 and not load_flag(S.stop):
            exact_world(&X, &k.base, 1.0)
            return 1
        return 0
    if n != h + ns or ns > 12:
        return 0
    holdings = <u64*>malloc(((<u64>1) << n) * sizeof(u64))
    if holdings == NULL:
        return -1
    for hm in range((<u64>1) << n):
        if popcount(hm) == h:
            holdings[count] = hm
            count += 1
    order.s = mix64(k.base.table ^ (k.base.hand[k.observer] << 20) ^ <u64>n)
    for i in range(count - 1, 0, -1):                   # Fisher-Yates
        j = rng_below(&order, i + 1)
        t = holdings[i]; holdings[i] = holdings[j]; holdings[j] = t
    index = part - parts
    while True:
        index += parts                                  # this part's holdings
        if index >= count:
            break
        if load_flag(S.stop) or (deadline > 0 and now_s() >= deadline):
            free(holdings)
            return -1
        hm = holdings[index]
        for sm in range((<u64>1) << ns):
            # with a stock, the first receiver (after the dealer) gets the first half
            if ns and popcount(sm) * 2 != ns:
                continue
            if ns == 0 and sm:
                break
            if load_flag(S.stop):
                free(holdings)
                return -1
            memcpy(&w, &k.base, sizeof(State))
            w.hand[opp] = k.base.hand[opp]
            pos = 0
            for i in range(n):
                if hm >> i & 1:
                    w.hand[opp] |= bit(k.unseen[i])
                else:
                    cards[pos] = k.unseen[i]; pos += 1
            if k.nobuona[opp] and has_buona(k, r, opp, w.hand[opp] | k.played[opp]):
                continue
            first = w.stock_pos
            for i in range(ns):                         # the first receiver's cards
                if sm >> i & 1:
                    w.stock[first] = cards[i]; first += 1
            for i in range(ns):
                if not (sm >> i & 1):
                    w.stock[first] = cards[i]; first += 1
            exact_world(&X, &w, play_likelihood(k, r, &w))
            done += 1
    free(holdings)
    return done
