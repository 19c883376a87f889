# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# The paired phase: every root move on the same sampled worlds, with common
# random numbers, so that the differences between moves have honest standard
# errors; and what it shares with the exact solver (add_world, can_sweep_next).

from cirulla.solver._core cimport Move, Rules, State
from cirulla.solver._ismcts cimport Tree
from cirulla.solver._search cimport Search

cdef void paired_world(Search* S, const Tree* t) noexcept nogil
cdef void add_world(Search* S, double w) noexcept nogil
cdef int can_sweep_next(const State* s, const Rules* r, Move* buf) noexcept nogil
