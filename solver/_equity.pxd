# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# What a finished hand is worth to a search: its points by side and category,
# each side's margin and, with a match-equity table, the chance that side 0
# wins the match after it (Eval, evaluate); the table itself (EquityTable),
# built from greedy self-play hands (hand_distribution in _equity.pyx).

from cirulla.solver._core cimport MAX_SEATS, N_CAT, N_CARDS, Rules, State

cdef struct Equity:
    int on                          # 2 sides and a table
    int target
    const float* table              # P(side 0 wins) at [(a * target + b) * 2 + dealer side]
    float tie[2]                    # from tied scores past the target, by dealer side
    int scores[2]
    int next_dealer_side

cdef struct Eval:
    int pts[MAX_SEATS]              # hand points by side
    int cats[MAX_SEATS * N_CAT]
    double cat_fix[N_CAT]           # 2 sides: side 0's category margins' correction (the learned value)
    int cappotto                    # side, or -1
    double margin[MAX_SEATS]        # each side's points minus the others' average
    double win0                     # P(side 0 wins the match) after this hand, or -1

cdef inline double equity0(const Equity* e, int a, int b, int d) noexcept nogil:
    """P(side 0 wins) at scores (a, b), the next hand dealt by side d."""
    if a >= e.target or b >= e.target:                  # R-TARGET, R-WINNER
        if a > b:
            return 1.0
        if a < b:
            return 0.0
        return e.tie[d]
    return e.table[(a * e.target + b) * 2 + d]

cdef void evaluate(const State* s, const Rules* r, const Equity* e, Eval* ev) noexcept nogil

cdef inline double win_of(const Eval* ev, int side) noexcept nogil:
    return ev.win0 if side == 0 else 1.0 - ev.win0

cdef inline double reward(const Eval* ev, int side, int match_mode) noexcept nogil:
    """What the tree maximizes for a side: the hand margin, or near the target
    the chance of winning the match (scaled to points, the margin breaking ties)."""
    if match_mode:
        return 20.0 * (2.0 * win_of(ev, side) - 1.0) + 0.1 * ev.margin[side]
    return ev.margin[side]

cdef inline double cat_margin(const Rules* r, const Eval* ev, int side, int cat) noexcept nogil:
    """A side's points in one category minus the other sides' average (with the
    learned value's correction, if any)."""
    cdef int k, others = 0
    for k in range(r.n_sides):
        if k != side:
            others += ev.cats[k * N_CAT + cat]
    return (ev.cats[side * N_CAT + cat] - others / <double>(r.n_sides - 1)
            + (ev.cat_fix[cat] if side == 0 else -ev.cat_fix[cat]))

cdef class EquityTable:
    cdef float* w
    cdef readonly int target
    cdef float tie[2]
    cdef Equity lookup(self) noexcept nogil
