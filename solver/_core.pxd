# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# The rules of Cirulla in C structs and nogil functions: the one place the
# rules are written. Everything else (the Python API, the search) calls these.
#
# Cards are 0..39: card = suit * 10 + rank, suits D H C S (R-SUITS), ranks
# A 2 3 4 5 6 7 J Q K (R-DECK); a set of cards is one 64-bit mask.

ctypedef unsigned long long u64

cdef enum:
    N_CARDS = 40
    MAX_SEATS = 5
    N_CAT = 9           # scoring categories, in the order below
    MAX_MOVES = 4096    # buffer for search playouts; the Python API grows its own

# R-ACE-ACE
cdef enum:
    ACE_ONLY = 0
    ACE_OR_FIFTEEN = 1
    ACE_SWEEP = 2

# phases of a hand
cdef enum:
    PH_DEAL = 0         # waiting for the next round's cards
    PH_PLAY = 1
    PH_OVER = 2

# deal outcomes
cdef enum:
    DEAL_OK = 0
    DEAL_VOID = 1       # R-MONTE
    DEAL_CAPOTUN = 2    # R-CAPOTUN: the dealer's side wins the match

# scoring categories (section 6)
cdef enum:
    CAT_SCOPE = 0
    CAT_DECL = 1
    CAT_CARDS = 2
    CAT_DIAMONDS = 3
    CAT_SETTEBELLO = 4
    CAT_PRIMIERA = 5
    CAT_GRANDE = 6
    CAT_PICCOLA = 7
    CAT_REBELLO = 8

cdef struct Rules:
    int n_players
    int n_sides
    int capture_optional        # R-MUST
    int ace_on_ace              # R-ACE-ACE
    int single_match_first      # R-CHOICE
    int decl_mandatory          # R-DECL-CHOICE
    int matta                   # R-MATTA: card index, or -1 for none
    int piccola_to_seven        # R-SC-PICCOLA
    int grande_long             # R-SC-GRANDE
    int buona_stack             # R-V13
    int grande_in_hand          # R-V30
    int capotun                 # R-CAPOTUN
    int re_bello
    int cirullone               # R-VC
    int five_players            # R-V5
    int table_cards             # 4, or 5 with R-V5
    int buona_low               # dealer buona sums: 15/30, or 17/34 with R-V5
    int buona_high

cdef struct State:
    u64 hand[MAX_SEATS]         # holdings by seat
    u64 public[MAX_SEATS]       # declared cards still held, by seat (R-DECL-WHEN)
    u64 pile[MAX_SEATS]         # captured cards by side
    u64 table
    signed char stock[N_CARDS]  # deal order; stock[stock_pos:] is still undealt
    int stock_pos
    unsigned char cval[N_CARDS]  # capture value of each card; the matta's may be named
    int scope[MAX_SEATS]        # by side, dealer buona included (R-SC-SCOPE)
    int decl[MAX_SEATS]         # declaration points by side (R-SC-BUONE)
    int low_card[MAX_SEATS]     # R-V5: value each seat played in the 1-card round
    int dealer
    int turn                    # seat to move
    int last_capturer           # side, or -1 (R-LEFTOVER)
    int round                   # 0-based round of the hand
    int round_cards             # cards each player got this round
    int declared                # bit per seat: declared this round already
    int phase
    int dealer_buona            # scope the dealer took at the deal (0, 1, 2)
    int instant_winner          # side that won the match at once (R-CAPOTUN), or -1

cdef struct Move:
    u64 take                    # cards captured; for a declaration, the declared triple
    u64 take2                   # a declaration's second triple (R-VC), else 0
    signed char card            # card played, or -1 for a declaration
    signed char matta_rank      # rank the matta is named (0..9), or -1
    signed char points          # a declaration's points

cdef struct Rng:
    u64 s

# The rule switches as a Python object (solver.rules.Rules.core builds it).
cdef class CoreRules:
    cdef Rules r

# --- primitives ---
# Small and hot, so inline here: a cdef function another module cimports is
# called through a pointer; an inline one in this .pxd is compiled into every
# module that cimports it.

cdef extern from *:
    """
    /* popcount without a libgcc call when the target has no POPCNT instruction
       (the default x86-64 build): SWAR, a dozen branch-free operations.
       __builtin_popcountll there calls libgcc's __popcountdi2: measured 1.7%
       more instructions for an exact endgame solve. */
    static inline int cirulla_popcount64(unsigned long long x) {
    #if defined(__POPCNT__)
        return __builtin_popcountll(x);
    #else
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    """
    int cirulla_popcount64(unsigned long long) noexcept nogil
    int __builtin_ctzll(unsigned long long) noexcept nogil

cdef inline u64 bit(int c) noexcept nogil:
    return (<u64>1) << c

cdef inline int popcount(u64 x) noexcept nogil:
    return cirulla_popcount64(x)

cdef inline int lowest(u64 x) noexcept nogil:
    """The lowest card of a non-empty set."""
    return __builtin_ctzll(x)

cdef inline u64 mix64(u64 z) noexcept nogil:
    """splitmix64's finalizer: every bit of z stirred into every bit."""
    z = (z ^ (z >> 30)) * <u64>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <u64>0x94D049BB133111EB
    return z ^ (z >> 31)

cdef inline u64 rng_next(Rng* r) noexcept nogil:
    # splitmix64: tiny state, passes BigCrush, trivially seedable
    r.s += <u64>0x9E3779B97F4A7C15
    return mix64(r.s)

cdef inline int rng_below(Rng* r, int n) noexcept nogil:
    """Uniform in 0..n-1 (n >= 1)."""
    return <int>(((rng_next(r) >> 32) * <u64>n) >> 32)

cdef inline int side_of(const Rules* r, int seat) noexcept nogil:
    # seat % n_sides (R-SIDES) without a division for the seats there are
    return seat if seat < r.n_sides else seat % r.n_sides

# --- the rules ---
cdef int cards_in_round(const Rules* r, int rnd) noexcept nogil
cdef void new_hand(State* s, const Rules* r, int dealer) noexcept nogil
cdef int deal_round(State* s, const Rules* r) noexcept nogil
cdef void shuffle_rest(State* s, Rng* rng) noexcept nogil
cdef int gen_moves(const State* s, const Rules* r, Move* out, int cap) noexcept nogil
cdef void apply_move(State* s, const Rules* r, const Move* m) noexcept nogil
cdef void score_hand(const State* s, const Rules* r, int* out) noexcept nogil  # out[side * N_CAT + cat]
cdef int cappotto_side(const State* s, const Rules* r) noexcept nogil

# --- policies and playouts ---
cdef int greedy_index(const State* s, const Rules* r, const Move* moves, int n) noexcept nogil
cdef void greedy_scores(const State* s, const Rules* r, const Move* moves, int n, int* out) noexcept nogil
# the learned policy (bench/policy/): a linear score over move_features, fit to the search's choices
cdef int learned_index(const State* s, const Rules* r, const Move* moves, int n) noexcept nogil
cdef int learned_sample(const State* s, const Rules* r, Rng* rng, const Move* moves, int n) noexcept nogil
cdef void learned_scores(const State* s, const Rules* r, const Move* moves, int n, int* out) noexcept nogil

cdef enum:
    RANDOM_PLAY = -1    # choose_move's and play_out's eps_milli: every move uniformly at random
    # a flag in choose_move's and play_out's eps_milli (above the per-1000 count
    # in its low EPS_MASK bits): the learned policy instead of the greedy one
    POLICY_LEARNED = 1 << 16
    POLICY_SAMPLE = 1 << 17     # with POLICY_LEARNED: a move drawn by the learned logit's softmax
    EPS_MASK = 0xFFFF

cpdef enum Policy:
    """How the others' moves are chosen in a playout (the search's rollouts),
    or judged by the inference from plays (GREEDY or LEARNED): one number for
    Python (search.SearchParams, the arena's pol= and ipol= knobs) and the core."""
    GREEDY = 0          # the greedy heuristic's move (greedy_index)
    LEARNED = 1         # the learned policy's best move (learned_index)
    SAMPLE = 2          # a move drawn from the learned policy's softmax (learned_sample)

# choose_move's and play_out's eps_milli flags that play `policy`
cdef int policy_flags(int policy) except -1

cdef inline int choose_move(const State* s, const Rules* r, Rng* rng, const Move* moves, int n,
                            int eps_milli) noexcept nogil:
    """The playout policy's choice among moves[:n] (n >= 1): the greedy move
    (the learned policy's with the POLICY_LEARNED flag, or one drawn from its
    softmax with POLICY_SAMPLE too), or with probability
    (eps_milli & EPS_MASK) / 1000 a random one (so the opponents of a search
    are not one fixed script; one move is played without a draw).
    eps_milli RANDOM_PLAY: a uniformly random move, a draw for every move."""
    cdef int eps = eps_milli & EPS_MASK
    if eps_milli == RANDOM_PLAY:
        return rng_below(rng, n)
    if n == 1:
        return 0
    if eps and rng_below(rng, 1000) < eps:
        return rng_below(rng, n)
    if eps_milli & POLICY_LEARNED:
        if eps_milli & POLICY_SAMPLE:
            return learned_sample(s, r, rng, moves, n)
        return learned_index(s, r, moves, n)
    return greedy_index(s, r, moves, n)

cdef inline void deal_due(State* s, const Rules* r, Rng* rng) noexcept nogil:
    """Deal the next round if one is due; a void deal (R-MONTE) reshuffles the
    undealt stock and deals again."""
    while s.phase == PH_DEAL:
        if deal_round(s, r) == DEAL_VOID:
            shuffle_rest(s, rng)

# The hand to its end from s, dealing from the stock, each move by choose_move
# with this eps_milli (policy_flags(policy), or RANDOM_PLAY: random). buf:
# MAX_MOVES moves.
cdef void play_out(State* s, const Rules* r, Rng* rng, int eps_milli, Move* buf) noexcept nogil
# The same, own_side's seats by own_milli's flags
cdef void play_out_sides(State* s, const Rules* r, Rng* rng, int eps_milli, int own_milli, int own_side,
                         Move* buf) noexcept nogil

# --- the state as Python values ---
# A dict of ints and lists, one key per State field (CoreState.export's form);
# state_from_dict trusts its consistency.
cdef State state_from_dict(dict fields) except *
cdef dict state_to_dict(const State* s)
