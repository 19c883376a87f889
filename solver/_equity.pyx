# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""What a finished hand is worth to a search (evaluate: points, margins, the
chance of winning the match) and the match-equity table behind that chance
(hand_distribution, EquityTable). The types are in _equity.pxd."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memset

from cirulla.solver._core cimport (
    MAX_MOVES, MAX_SEATS, N_CAT, CoreRules, Move, Rng, Rules, State, cappotto_side, new_hand,
    play_out, score_hand, shuffle_rest)

cdef enum:
    MAXP = 64               # hand points are clamped to this in the equity table


cdef void evaluate(const State* s, const Rules* r, const Equity* e, Eval* ev) noexcept nogil:
    """ev = the points, margins and (with a table) match equity of the finished hand s."""
    cdef int k, j, total = 0, ns = r.n_sides
    score_hand(s, r, ev.cats)
    memset(ev.cat_fix, 0, N_CAT * sizeof(double))
    for k in range(ns):
        ev.pts[k] = 0
        for j in range(N_CAT):
            ev.pts[k] += ev.cats[k * N_CAT + j]
        total += ev.pts[k]
    for k in range(ns):
        ev.margin[k] = ev.pts[k] - (total - ev.pts[k]) / <double>(ns - 1)
    ev.cappotto = cappotto_side(s, r)
    ev.win0 = -1.0
    if e.on:
        if ev.cappotto >= 0:                            # R-CAPPOTTO
            ev.win0 = 1.0 if ev.cappotto == 0 else 0.0
        else:
            ev.win0 = equity0(e, e.scores[0] + ev.pts[0], e.scores[1] + ev.pts[1],
                              e.next_dealer_side)


def hand_distribution(CoreRules rules, long hands, unsigned long long seed):
    """Greedy self-play hands from fresh shuffles, the dealer in side 0: counts
    of (dealer side's points, the other side's points) clamped to MAXP - 1, and
    of cappotti by the dealer's side and by the other. 2 sides only."""
    cdef Rules r = rules.r
    cdef State s
    cdef Rng rng
    cdef long _i
    cdef int out[MAX_SEATS * N_CAT]
    cdef int p0, p1, j, capp
    cdef long* counts = <long*>PyMem_Malloc(MAXP * MAXP * sizeof(long))
    cdef long capp_dealer = 0, capp_other = 0
    cdef Move* buf = <Move*>PyMem_Malloc(MAX_MOVES * sizeof(Move))
    if counts == NULL or buf == NULL:
        PyMem_Free(counts)
        PyMem_Free(buf)
        raise MemoryError()
    memset(counts, 0, MAXP * MAXP * sizeof(long))
    rng.s = seed
    with nogil:
        for _i in range(hands):
            new_hand(&s, &r, 0)
            shuffle_rest(&s, &rng)
            play_out(&s, &r, &rng, 0, buf)              # the greedy policy
            if s.instant_winner >= 0:                   # R-CAPOTUN: the dealer's side
                capp_dealer += 1
                continue
            capp = cappotto_side(&s, &r)
            if capp == 0:
                capp_dealer += 1
                continue
            if capp == 1:
                capp_other += 1
                continue
            score_hand(&s, &r, out)
            p0 = 0; p1 = 0
            for j in range(N_CAT):
                p0 += out[j]; p1 += out[N_CAT + j]
            counts[min(p0, MAXP - 1) * MAXP + min(p1, MAXP - 1)] += 1
    result = [[counts[p0 * MAXP + p1] for p1 in range(MAXP)] for p0 in range(MAXP)]
    PyMem_Free(counts)
    PyMem_Free(buf)
    return result, capp_dealer, capp_other


cdef class EquityTable:
    """P(side 0 wins the match) for 2 sides from scores (a, b) below the target
    and the side dealing the next hand, by dynamic programming over the
    distribution of hand results (each hand independent given its dealer)."""

    def __cinit__(self):
        self.w = NULL

    def __init__(self, list counts, long capp_dealer, long capp_other, int target):
        cdef int a, b, d, x, y, tot, npairs = 0, i
        cdef long total = capp_dealer + capp_other
        cdef double acc, pd, po
        cdef double pwin[2]
        cdef double ptie[2]
        cdef double* prob
        cdef int* px
        cdef int* py
        cdef Equity eq
        if target < 1:
            raise ValueError("target must be positive")
        for x in range(MAXP):
            for y in range(MAXP):
                if counts[x][y] and (x or y):           # a hand of 0-0 changes nothing: left out
                    npairs += 1
                    total += counts[x][y]
        if total == 0:
            raise ValueError("no hands in the distribution")
        PyMem_Free(self.w)                              # (__init__ called again)
        self.target = target
        self.w = <float*>PyMem_Malloc(target * target * 2 * sizeof(float))
        prob = <double*>PyMem_Malloc(max(npairs, 1) * sizeof(double))
        px = <int*>PyMem_Malloc(max(npairs, 1) * sizeof(int))
        py = <int*>PyMem_Malloc(max(npairs, 1) * sizeof(int))
        try:
            if prob == NULL or px == NULL or py == NULL or self.w == NULL:
                raise MemoryError()
            i = 0
            for x in range(MAXP):
                for y in range(MAXP):
                    if counts[x][y] and (x or y):
                        prob[i] = counts[x][y] / <double>total; px[i] = x; py[i] = y; i += 1
            pd = capp_dealer / <double>total
            po = capp_other / <double>total
            # tied past the target (R-WINNER): another hand; solve the 2x2 system
            for d in range(2):
                pwin[d] = 0; ptie[d] = 0
                for i in range(npairs):
                    # side 0 deals when d == 0: it scores x (dealer side), side 1 scores y
                    if px[i] == py[i]:
                        ptie[d] += prob[i]
                    elif (px[i] > py[i]) == (d == 0):
                        pwin[d] += prob[i]
                pwin[d] += pd if d == 0 else po
            self.tie[0] = (pwin[0] + ptie[0] * pwin[1]) / (1 - ptie[0] * ptie[1])
            self.tie[1] = (pwin[1] + ptie[1] * pwin[0]) / (1 - ptie[0] * ptie[1])
            eq = self.lookup()                          # reads the entries this loop has already filled
            with nogil:
                for tot in range(2 * target - 2, -1, -1):
                    for a in range(max(0, tot - target + 1), min(tot, target - 1) + 1):
                        b = tot - a
                        for d in range(2):
                            acc = pd if d == 0 else po  # a cappotto by side 0
                            for i in range(npairs):
                                if d == 0:
                                    acc += prob[i] * equity0(&eq, a + px[i], b + py[i], 1)
                                else:
                                    acc += prob[i] * equity0(&eq, a + py[i], b + px[i], 0)
                            self.w[(a * target + b) * 2 + d] = <float>acc
        finally:
            PyMem_Free(prob)
            PyMem_Free(px)
            PyMem_Free(py)

    cdef Equity lookup(self) noexcept nogil:
        """The table as the search reads it (equity0)."""
        cdef Equity e
        memset(&e, 0, sizeof(Equity))
        e.on = 1
        e.target = self.target
        e.table = self.w
        e.tie[0] = self.tie[0]
        e.tie[1] = self.tie[1]
        return e

    def __dealloc__(self):
        PyMem_Free(self.w)

    def win0(self, int a, int b, int dealer_side):
        """P(side 0 wins) at scores (a, b), the next hand dealt by dealer_side."""
        cdef Equity eq
        if a < 0 or b < 0 or dealer_side not in (0, 1):
            raise ValueError("scores must be >= 0 and the dealer side 0 or 1")
        eq = self.lookup()
        return equity0(&eq, a, b, dealer_side)
