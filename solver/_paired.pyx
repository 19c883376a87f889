# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The paired phase: every root move played out on one sampled world at a
time, following the SO-ISMCTS tree and then the rollout policy, its
randomness the same for every root move. The exact solver accumulates its
worlds the same way (add_world). The declarations are in _paired.pxd."""
from libc.string cimport memcpy

from cirulla.solver._core cimport (
    MAX_MOVES, N_CARDS, N_CAT, PH_PLAY, Rng, apply_move, choose_move, deal_due, gen_moves, popcount,
    rng_next, side_of, u64)
from cirulla.solver._equity cimport Eval, cat_margin, win_of
from cirulla.solver._ismcts cimport find_child, marked, roll_out
from cirulla.solver._search cimport Pair, RootMove
from cirulla.solver._worlds cimport sample_world


cdef int can_sweep_next(const State* s, const Rules* r, Move* buf) noexcept nogil:
    """Whether the seat to move can take the whole table as a scopa (R-SCOPA):
    a legal card play taking every table card, not the last card of the hand.
    Declarations are skipped (a matta named ace is not counted)."""
    cdef State t
    cdef int n, i, k, left = 0
    if s.phase != PH_PLAY or s.table == 0:
        return 0
    for k in range(r.n_players):
        left += popcount(s.hand[k])
    if left <= 1 and s.stock_pos == N_CARDS:
        return 0
    memcpy(&t, s, sizeof(State))
    t.declared |= 1 << t.turn
    n = gen_moves(&t, r, buf, MAX_MOVES)
    if n > MAX_MOVES:
        n = MAX_MOVES
    for i in range(n):
        if buf[i].card >= 0 and buf[i].take == t.table:
            return 1
    return 0


cdef void add_world(Search* S, double w) noexcept nogil:
    """Add one world's values of every root move (p_val, p_wval), with weight w,
    to the paired sums: the sums, and the cross products behind the paired
    standard errors."""
    cdef int i, k, nr = S.n_root
    cdef RootMove* a
    cdef Pair* row
    for i in range(nr):
        a = &S.roots[i]
        a.p_sum += w * a.p_val
        a.p_win += w * a.p_wval
        row = &S.cross[i * nr]
        for k in range(nr):
            row[k].margin += w * a.p_val * S.roots[k].p_val
            row[k].win += w * a.p_wval * S.roots[k].p_wval
    S.worlds += 1
    S.weight += w
    S.playouts += nr


cdef void paired_world(Search* S, const Tree* t) noexcept nogil:
    """Every root move on one sampled world, with common random numbers.

    This is how the differences to the best are paired: after each root move
    the hand is played out in the same world, following the tree's most
    visited legal move while it has one (with at least follow_min visits;
    with follow_own, at the asking side's turns only, the others playing the
    rollout policy with the cards this world gives them; with follow_own 2 at
    the asking seat's alone, a partner playing it too) and the rollout
    policy after that, its randomness reseeded identically for
    every root move. The per-world figures are independent draws given the
    tree, so their spread gives an honest standard error."""
    cdef State s0, s, at
    cdef Eval ev
    cdef bint got
    cdef Rng rr
    cdef u64 wseed
    cdef int m, n, i, c, node, best, bv, j
    cdef const Rules* r = &S.r
    cdef RootMove* rm
    S.rejected += sample_world(&S.k, r, &S.rng, &s0, S.memo)
    wseed = rng_next(&S.rng)
    for m in range(S.n_root):
        rm = &S.roots[m]
        memcpy(&s, &s0, sizeof(State))
        rr.s = wseed
        apply_move(&s, r, &rm.move)
        deal_due(&s, r, &rr)
        got = marked(S, &s, s0.round, &at, False)
        rm.p_risk += can_sweep_next(&s, r, S.buf)
        node = m + 1
        while s.phase == PH_PLAY and node >= 0:
            n = gen_moves(&s, r, S.buf, MAX_MOVES)
            if n > MAX_MOVES:
                n = MAX_MOVES
            if S.follow_own and (s.turn != S.k.observer if S.follow_own == 2
                                 else side_of(r, s.turn) != S.me):
                # the others play the rollout policy, still tracked in the tree
                i = choose_move(&s, r, &rr, S.buf, n, S.eps_milli)
                node = find_child(t, node, &S.buf[i])
                apply_move(&s, r, &S.buf[i])
                deal_due(&s, r, &rr)
                got = marked(S, &s, s0.round, &at, got)
                continue
            best = -1; bv = S.follow_min - 1
            for i in range(n):
                c = find_child(t, node, &S.buf[i])
                if c >= 0 and t.nodes[c].visits > bv:
                    bv = t.nodes[c].visits; best = i
            if best < 0:
                break
            node = find_child(t, node, &S.buf[best])
            apply_move(&s, r, &S.buf[best])
            deal_due(&s, r, &rr)
            got = marked(S, &s, s0.round, &at, got)
        roll_out(S, &s, &rr, &at, s0.round, got, &ev)
        rm.p_val = ev.margin[S.me]
        rm.p_wval = win_of(&ev, S.me) if ev.win0 >= 0 else 0.0
        for j in range(N_CAT):
            rm.p_cat[j] += cat_margin(r, &ev, S.me, j)
    add_world(S, 1.0)
