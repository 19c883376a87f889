# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# Exact endgames (2 players): every world of the last round or two solved by
# alpha-beta with a transposition table, and averaged.

from cirulla.solver._core cimport N_CAT, Move, u64
from cirulla.solver._search cimport Search

cdef enum:
    XCAP = 512                  # moves per node
    XDEPTH = 48                 # plies at most: Search.buf holds XCAP moves per ply

cdef struct Leaf:
    int obj                     # the objective for the asking side
    int margin
    signed char cats[N_CAT]     # margin by category
    float win

cdef struct TTEntry:
    u64 key                     # 0: empty
    Leaf leaf                   # the line's leaf; leaf.obj is the value (or bound)
    int flag

cdef struct Hint:
    u64 key                     # a state before the last deal, the stock left out
    Move best                   # the best move found there in the last world searched

cdef struct Tables:
    # the solver's memory, kept across the worlds and the calls of one search
    TTEntry* tt                 # the transposition table
    Hint* hints                 # the move-ordering hints across the splits of the last deal

cdef int tables_init(Tables* x) noexcept nogil
cdef void tables_free(Tables* x) noexcept nogil
cdef long exact_worlds(Search* S, Tables* x, int part, int parts, double deadline) noexcept nogil
