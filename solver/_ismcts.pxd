# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# SO-ISMCTS with availability counts: the tree (nodes found by a hash of
# (parent, move)) and one iteration of the search on it.

from cirulla.solver._core cimport Move, Rng, State, mark_round, u64
from cirulla.solver._equity cimport Eval
from cirulla.solver._search cimport Search

cdef struct Node:
    u64 take
    u64 take2
    double sum                  # rewards of the side that made this move
    int visits
    int avail                   # iterations in which this move was legal (availability)
    int parent
    signed char card
    signed char matta_rank
    signed char side            # side of the player who made the move

cdef struct Slot:
    u64 key                     # hash of (parent, move); 0: empty
    int node

cdef struct Tree:
    Node* nodes                 # node 0 is the root, nodes 1..n_root its children in root-move order
    int n_nodes
    int cap_nodes
    Slot* slots                 # children by (parent, move); a power of 2, at most half full
    u64 slot_mask

cdef inline u64 child_key(int parent, const Move* m) noexcept nogil:
    # the children are found through one open-addressing table keyed by
    # (parent, move): a tree of a million nodes scattered in memory makes
    # walking sibling lists a chain of cache misses
    cdef u64 h = m.take * <u64>0x9E3779B97F4A7C15
    h ^= (m.take2 + (<u64>parent << 20) + (<u64>(m.card + 1) << 8)
          + <u64>(m.matta_rank + 1)) * <u64>0xBF58476D1CE4E5B9
    h ^= h >> 31
    h *= <u64>0x94D049BB133111EB
    h ^= h >> 29
    return h if h else 1

cdef inline int find_child(const Tree* t, int parent, const Move* m) noexcept nogil:
    """The node of move m below parent, or -1."""
    cdef u64 key = child_key(parent, m)
    cdef u64 i = key & t.slot_mask
    cdef const Node* nd
    while t.slots[i].key:
        if t.slots[i].key == key:
            nd = &t.nodes[t.slots[i].node]
            if (nd.parent == parent and nd.card == m.card and nd.take == m.take
                    and nd.take2 == m.take2 and nd.matta_rank == m.matta_rank):
                return t.slots[i].node
        i = (i + 1) & t.slot_mask
    return -1

cdef int tree_init(Tree* t, const Search* S) noexcept nogil
cdef void tree_free(Tree* t) noexcept nogil
cdef void ismcts_iteration(Search* S, Tree* t) noexcept nogil

cdef inline bint marked(const Search* S, const State* s, int root_round, State* at, bint got) noexcept nogil:
    """mark_round where the learned value is on."""
    return mark_round(s, root_round, at, got) if S.value_mix > 0 else got

# The hand played out from s by the rollout policy and evaluated into ev; with
# the learned value on, the margins corrected at the first state of a round
# after the root's (at, if got already, else met on the way)
cdef void roll_out(Search* S, State* s, Rng* rng, State* at, int root_round, bint got, Eval* ev) noexcept nogil
