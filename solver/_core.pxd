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
    unsigned char cval[N_CARDS] # capture value of each card; the matta's may be named
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
cdef u64 rng_next(Rng* r) noexcept nogil
cdef int rng_below(Rng* r, int n) noexcept nogil
cdef int popcount(u64 x) noexcept nogil
cdef int lowest(u64 x) noexcept nogil

# --- the rules ---
cdef int side_of(const Rules* r, int seat) noexcept nogil
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
cdef void play_out(State* s, const Rules* r, Rng* rng, int greedy, Move* buf) noexcept nogil
