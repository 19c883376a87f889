# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# The rules of Cirulla in C structs and nogil functions: the one place the
# rules are written. Everything else (the Python API, the search) calls these.
#
# Cards are 0..39: card = suit * 10 + rank, suits D H C S (R-SUITS), ranks
# A 2 3 4 5 6 7 J Q K (R-DECK); a set of cards is one 64-bit mask.
from libc.string cimport memcpy

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

# --- the card plays of 2 players on a short table (the exact solver's) ---
cdef struct TableInfo:
    # a table of 1 to 4 cards as card_plays reads it (128 bytes)
    u64 key                         # its cards | the matta's value << 40 (on it) | bit 63; 0: empty
    u64 lo[4]                       # the cards of its sorted positions 0 and 1 by a mask of them (bits 0, 1)
    u64 hi[4]                       # those of positions 2 and 3 (bits 2, 3)
    unsigned short match[15]        # by capture value 1..14: bit k set if subset k (lexicographic) adds up to it
    unsigned char weight[15]        # by subset: its cards' greedy weights, summed
    unsigned char n                 # its cards
    unsigned char sum               # their capture values, summed
    unsigned char ace               # 1: one of them is an ace (capture value 1)
    unsigned char spare[4]
cdef enum:
    TABLE_INFO_BITS = 10            # 1024 tables (128 KB)
# e (cache's entry for key, table_of's) filled for a table of 1 to 4 cards, or NULL (capture values out of 1..10)
cdef TableInfo* table_fill(const Rules* r, const unsigned char* cval, TableInfo* e, u64 key, u64 table) noexcept nogil

cdef inline TableInfo* table_of(const Rules* r, const unsigned char* cval, TableInfo* cache, u64 table) noexcept nogil:
    """cache's entry for a table of 1 to 4 cards (filled if it holds
    another), or NULL for a capture value out of 1..10 (in no legal
    position). Its key: the cards and the matta's value (cval: a State's,
    of which play changes only the matta's)."""
    cdef u64 key = table | (<u64>1 << 63)
    cdef TableInfo* e
    if r.matta >= 0 and table >> r.matta & 1:
        key |= <u64>cval[r.matta] << 40                 # R-MATTA: its value as named
    e = &cache[(key * <u64>0x9E3779B97F4A7C15) >> (64 - TABLE_INFO_BITS)]
    if e.key == key:
        return e
    return table_fill(r, cval, e, key, table)

# gen_moves and greedy_index of a 2-player position's card plays on a short
# table, packed (card << 40 | take), or -1; with a cache of tables
cdef int gen_plays_2p(const Rules* r, const unsigned char* cval, TableInfo* cache, u64 h, u64 other,
                      u64 table, int may_declare, int stock_empty, u64* out, int* greedy) noexcept nogil
# the greedy policy's weight of each card (GREEDY_W: greedy_worth's)
cdef const int* greedy_weights() noexcept nogil

cdef inline int play_score(int took, int wsum, int rest, int last, int risk) noexcept nogil:
    """greedy_worth of a play that captures (took) cards of greedy weight wsum
    with the card's (else drops a card of weight wsum), leaving a table of
    capture values summing to rest; last, risk: greedy_context's."""
    cdef int score = wsum if took else -wsum
    cdef int sweep = took & (rest == 0)
    score += 100 * (sweep & (last ^ 1))
    score -= 40 * ((sweep ^ 1) & (rest <= 14) & risk)
    return score

cdef inline int card_plays(const Rules* r, const TableInfo* ti, u64 table, int c, int v, int wc, u64* out, int n,
                           int last, int risk, int* best, int* who) noexcept nogil:
    """gen_moves's plays of card c (capture value v in 1..10, greedy weight wc)
    on a table of 1 to 4 cards (ti: table_of's), 2 players,
    appended packed (card << 40 | take) to out[:n], in order (gen_plays_short's:
    the subsets in lexicographic order of the sorted table); their greedy
    worth (last, risk: greedy_context's) against best, the first best's
    index in who. The new count."""
    cdef unsigned int sel
    cdef int before = n, k, p, rv, rf, score
    cdef u64 card = <u64>c << 40
    if v == 1:
        if not ti.ace or r.ace_on_ace == ACE_SWEEP:
            sel = 0
            out[n] = card | table                       # R-ACE (R-ACE-ACE sweep)
            score = play_score(1, wc + ti.weight[ti.n - 1], 0, last, risk)
            if score > best[0]:
                best[0] = score
                who[0] = n
            n += 1
        else:                                           # R-ACE-ACE: the aces, in order
            sel = ti.match[1]
            if r.ace_on_ace == ACE_OR_FIFTEEN:
                sel |= <unsigned int>ti.match[14] << 16
        rv = ti.sum - 1
        rf = ti.sum - 14
    else:
        # R-CHOICE: the single cards of value v (the 4 positions' singles: subsets 0, 8, 12, 14)
        sel = ti.match[v] & 0x5101
        if not (r.single_match_first and sel):
            sel = ti.match[v]                           # R-SIMPLE
        sel |= <unsigned int>ti.match[15 - v] << 16     # R-FIFTEEN
        rv = ti.sum - v
        rf = ti.sum - 15 + v
    # the subsets selected, in order: those adding up to v (bits 0..14), then to 15 - v
    while sel:
        k = lowest(sel)
        sel &= sel - 1
        p = <int>(<u64>0x8c4ae629d5bf731 >> (4 * (k & 15))) & 15      # its positions (gen_plays_short's SHORT_POS)
        out[n] = card | ti.lo[p & 3] | ti.hi[p >> 2]
        score = play_score(1, wc + ti.weight[k & 15], rf if k >= 16 else rv, last, risk)
        if score > best[0]:
            best[0] = score
            who[0] = n
        n += 1
    if n == before or r.capture_optional:               # R-MUST
        out[n] = card
        score = play_score(0, wc, ti.sum + v, last, risk)
        if score > best[0]:
            best[0] = score
            who[0] = n
        n += 1
    return n

cdef inline int hand_plays(const Rules* r, const unsigned char* cval, const int* gw, TableInfo* cache, u64 h,
                           u64 table, int last, int risk, u64* out, int* greedy) noexcept nogil:
    """gen_moves and greedy_index of the card plays of the cards of h (no
    declaration to make) on a table of at most 4 cards, 2 players: packed
    (card << 40 | take) in out, the greedy move's index in *greedy (gw:
    greedy_weights(); last, risk: greedy_context's). The count, or -1 where
    card_plays does not cover them (a longer table, a capture value out of
    1..10)."""
    cdef int n = 0, best = -(1 << 30), who = 0, c, v, score
    cdef u64 t
    cdef TableInfo* ti
    if not table:                                       # nothing to capture: drops
        while h:
            c = lowest(h)
            h &= h - 1
            out[n] = <u64>c << 40
            score = play_score(0, gw[c], cval[c], last, risk)
            if score > best:
                best = score
                who = n
            n += 1
        greedy[0] = who
        return n
    t = table & (table - 1)
    t &= t - 1
    t &= t - 1
    if t & (t - 1):                                     # more than 4 cards
        return -1
    ti = table_of(r, cval, cache, table)
    if ti == NULL:
        return -1
    while h:
        c = lowest(h)
        h &= h - 1
        v = cval[c]
        if <unsigned int>(v - 1) > 9:
            return -1
        n = card_plays(r, ti, table, c, v, gw[c], out, n, last, risk, &best, &who)
    greedy[0] = who
    return n

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
    EPS_MILLI_DEFAULT = 100     # the rollouts' random moves per 1000 by default (the Searcher's, flat Monte Carlo's)
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

# --- the learned value (bench/value_screen.py, value_model.json) ---
# The hand's margin that self-play of the engine reached from the first state
# of a round, fitted on what a greedy playout from there reached and where
# every card lay: a correction of the rollouts, which model every seat as greedy.
cdef enum:
    VALUE_LAYOUTS = 2   # the player counts with a model of their own: 2, then 4 in two sides
    VALUE_PLACES_MAX = 8     # side 0's pile, side 1's, each seat's hand, the table, the stock
    # sweeps, declarations, who leads (all seats but the last), the last capturer's side (2),
    # the dealer's points, cards taken, 1
    VALUE_EXTRAS_MAX = 10
    N_VF_MAX = N_CARDS * VALUE_PLACES_MAX + VALUE_EXTRAS_MAX
    VALUE_ROUNDS = 6    # a 2-player hand's rounds (a 4-player hand has 3)
    VALUE_OUTS = 1 + N_CAT   # what it values: side 0's margin, then its margin in each category
# The model's layout for n players (0: 2 players, 1: 4), or -1 for player counts without one
cdef inline int value_layout(int n_players) noexcept nogil:
    return 0 if n_players == 2 else 1 if n_players == 4 else -1
# The features of a layout's n players: each card's place (n + 4 places), then n + 6 extras
cdef inline int value_places(int n_players) noexcept nogil:
    return n_players + 4
cdef inline int value_extras(int n_players) noexcept nogil:
    return n_players + 6
cdef inline int n_value_features(int n_players) noexcept nogil:
    return N_CARDS * value_places(n_players) + value_extras(n_players)
# The features into f[n_value_features(r.n_players)] (a player count with a layout)
cdef void value_features(const State* s, const Rules* r, double* f) noexcept nogil
# Side 0's margin: g0, what a rollout reached from the first state of a round (at), corrected
# by the learned value; g0 itself where the model has no weights for that round. fix[N_CAT]: the
# correction split by category (the categories' own fits, g_cat[N_CAT] the rollout's category
# margins), adding up to the margin's
cdef double learned_value(const State* at, const Rules* r, double g0, const double* g_cat, double* fix) noexcept nogil
cdef inline bint mark_round(const State* s, int root_round, State* at, bint got) noexcept nogil:
    """Whether at holds the first state of a round after root_round: s copied
    into it if s is one and at holds none yet."""
    if not got and s.phase == PH_PLAY and s.round != root_round:
        memcpy(at, s, sizeof(State))
        return True
    return got

# play_out_sides, marking (mark_round) the first state of a round after root_round in at unless got (got:
# play_out_sides itself): whether at holds one
cdef bint play_out_marking(State* s, const Rules* r, Rng* rng, int eps_milli, int own_milli, int own_side,
                           Move* buf, State* at, int root_round, bint got) noexcept nogil

# --- the state as Python values ---
# A dict of ints and lists, one key per State field (CoreState.export's form);
# state_from_dict trusts its consistency.
cdef State state_from_dict(dict fields) except *
cdef dict state_to_dict(const State* s)
