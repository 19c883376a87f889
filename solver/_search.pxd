# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# One search's state, which the kernels take (_ismcts, _paired, _exact) and
# the Searcher in _search.pyx owns: the rules, what the asking seat knows, the
# equity table, the parameters, and per root move what both phases count.
# The tree (_ismcts.Tree) and the exact solver's tables (_exact.Tables) are
# the Searcher's too, passed to the kernels that use them.

from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from cirulla.solver._core cimport N_CAT, Move, Rng, Rules
from cirulla.solver._equity cimport Equity
from cirulla.solver._worlds cimport Know, SeatPart

cdef extern from *:
    """
    /* the stop flag is written by another thread (CancelToken.cancel) */
    static inline int cirulla_load_flag(int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void cirulla_store_flag(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    """
    int load_flag "cirulla_load_flag"(int* p) noexcept nogil
    void store_flag "cirulla_store_flag"(int* p, int v) noexcept nogil

cdef inline double now_s() noexcept nogil:
    """The monotonic clock in seconds (deadlines are on it)."""
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + t.tv_nsec * 1e-9

cdef inline bint halted(int* stop, double deadline) noexcept nogil:
    """Whether a kernel stops here: the stop flag raised, or the monotonic
    deadline (seconds; 0 for none) passed."""
    return load_flag(stop) != 0 or (deadline > 0 and now_s() >= deadline)


cdef struct RootMove:
    Move move
    # SO-ISMCTS: the tree's figures for the move, kept apart from the nodes
    # (which a growing tree moves: progress reports read these)
    double visits
    double sum2                 # sum of squared margins
    double msum                 # margin (the tree may back up equity instead)
    double win
    double cat[N_CAT]           # margin by category
    # the paired phase (or the exact worlds): every root move on the same worlds
    double p_sum                # margin, by the worlds' weights
    double p_win
    double p_risk               # the next player can sweep the table
    double p_cat[N_CAT]
    double p_val                # scratch: this world's margin
    double p_wval               # ... and chance of winning the match

cdef struct Pair:
    # root moves i and j over the paired worlds, behind the paired standard errors
    double margin               # sum of margin_i * margin_j
    double win                  # sum of win_i * win_j

cdef struct Search:
    Rules r
    Know k
    Equity eq
    int me                      # the asking side
    int match_mode
    double c_ucb
    int eps_milli               # the rollout policy's random moves (_core.choose_move)
    int own_milli               # ... and the asking side's own moves in the rollouts
    int follow_min              # visits a tree move needs to be followed in the paired phase
    double value_mix            # the learned value's weight in the rollouts' outcomes (0: off; 2 or 4 players)
    int follow_own              # 1: follow the tree at the asking side's moves only; 2: the asking seat's
    double root_floor           # the share of the tree's iterations spread over the root moves at least
    int focus                   # a root move (index) given focus_share of the iterations at least
    double focus_share
    Rng rng
    int* stop
    Move* buf                   # scratch moves (see Searcher.__init__ for how many)
    SeatPart* memo              # the likelihood's seat parts (play_likelihood), or NULL
    int n_root
    RootMove* roots             # the root moves: the same in every world
    Pair* cross                 # [i * n_root + j], in the roots' allocation
    long iters                  # ISMCTS iterations
    long playouts               # every playout, both phases
    long rejected               # determinization draws rejected (R-DECL-CHOICE)
    long solved                 # positions visited by the exact solver
    long worlds                 # paired (or exact) worlds
    double weight               # their total weight (the exact solver weighs worlds by likelihood)
