# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Exact endgames (2 players): the worlds of the last round (one, perfect
information) or of the last two (every opponent holding x every split of the
last deal), every root move solved by alpha-beta in each and the values
averaged like the paired phase's. The types are in _exact.pxd."""
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from cirulla.solver._core cimport (
    N_CARDS, N_CAT, PH_OVER, Rng, Rules, State, apply_move, bit, deal_due, gen_moves, greedy_index, mix64,
    popcount, rng_below, side_of, u64)
from cirulla.solver._equity cimport Eval, evaluate, win_of
from cirulla.solver._paired cimport add_world, can_sweep_next
from cirulla.solver._search cimport RootMove, load_flag, now_s
from cirulla.solver._worlds cimport Know, has_buona, play_likelihood

cdef enum:
    TT_BITS = 12
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3

cdef struct Solve:
    # one call's search and the tables, what alphabeta threads through its
    # recursion (in one argument: all six of alphabeta's go in registers)
    Search* S
    TTEntry* tt
    Hint* hints


cdef int tables_init(Tables* x) noexcept nogil:
    """Allocate the empty tables once: 0, or -1 out of memory (none kept)."""
    if x.tt != NULL:
        return 0
    x.tt = <TTEntry*>calloc(1 << TT_BITS, sizeof(TTEntry))
    x.hints = <Hint*>calloc(1 << TT_BITS, sizeof(Hint))
    if x.tt == NULL or x.hints == NULL:
        tables_free(x)
        return -1
    return 0

cdef void tables_free(Tables* x) noexcept nogil:
    free(x.tt)
    free(x.hints)
    x.tt = NULL
    x.hints = NULL


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

cdef int alphabeta(const Solve* X, State* s, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """Minimax with alpha-beta (fail-soft) on the objective of the asking side,
    in a world where every card is known, with a transposition table; out gets
    the leaf of the line found. Clobbers *s (the last move is played on it:
    no copy for the many nodes with one move)."""
    cdef State c
    cdef State* child
    cdef Leaf lf
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta
    cdef Move* buf
    cdef Move t
    cdef u64 key, hkey = 0
    cdef TTEntry* e
    cdef Hint* h = NULL
    cdef Search* S = X.S
    S.solved += 1
    if s.phase == PH_OVER:
        leaf_of(S, s, out)
        return out.obj
    # the table only where lines meet again and a subtree is worth storing:
    # with 4 or 6 cards left in the players' hands (plays of one round commute)
    e = NULL
    i = popcount(s.hand[0] | s.hand[1])
    if i == 4 or i == 6:
        key = state_key(s, &S.r, 1)
        e = &X.tt[key & ((1 << TT_BITS) - 1)]
        if e.key == key:
            v = e.leaf.obj
            if (e.flag == TT_EXACT or (e.flag == TT_LOWER and v >= beta)
                    or (e.flag == TT_UPPER and v <= alpha)):
                out[0] = e.leaf
                return v
    buf = &S.buf[depth * XCAP]
    n = gen_moves(s, &S.r, buf, XCAP)
    if n > XCAP:
        n = XCAP
    if n == 0:                                          # (cannot happen in play)
        leaf_of(S, s, out)
        return out.obj
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
            j = greedy_index(s, &S.r, buf, n)
        if j:
            t = buf[0]; buf[0] = buf[j]; buf[j] = t
    j = 0
    maxing = side_of(&S.r, s.turn) == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        child = s
        if i + 1 < n:
            memcpy(&c, s, sizeof(State))
            child = &c
        apply_move(child, &S.r, &buf[i])
        deal_due(child, &S.r, &S.rng)
        v = alphabeta(X, child, depth + 1, alpha, beta, &lf)
        if maxing:
            if v > best:
                best = v; out[0] = lf; j = i
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v; out[0] = lf; j = i
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    if e != NULL:
        e.key = key
        e.leaf = out[0]
        e.flag = TT_UPPER if best <= alpha0 else (TT_LOWER if best >= beta0 else TT_EXACT)
    if h != NULL:
        h.key = hkey
        h.best = buf[j]
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
        alphabeta(X, &s, 0, -(1 << 30), 1 << 30, &lf)
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
    X.S = S; X.tt = x.tt; X.hints = x.hints
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
