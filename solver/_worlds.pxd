# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# Determinization: what one seat knows of a hand (Know), and worlds drawn
# consistent with it for the search (sample_world), the R-DECL-CHOICE
# inference (has_buona) and the inference from the other seats' plays
# (play_likelihood).

from cirulla.solver._core cimport MAX_SEATS, N_CARDS, Rng, Rules, State, u64

cdef enum:
    MAX_SEEN_PLAYS = 16         # other seats' card plays this round the inference reads
    # the kinds of player the inference reads the others as (Know.type_w)
    TYPE_PROGRAM = 0            # greedy's best move every time, but for a slip (PROGRAM_SLIP)
    TYPE_GREEDY = 1             # moves chosen by the softmax of the greedy worth (infer_t)
    TYPE_LEARNED = 2            # by the softmax of the learned policy's score
    N_TYPES = 3

cdef struct SeenPlay:
    # another seat's card play, and what it tells: a holding whose other
    # moves were likelier choices is less likely (play_likelihood), and in a
    # finished round, where the holding is known, which kind of player it is
    int seat
    u64 table                   # the table before it
    u64 take                    # the cards it took
    u64 after[MAX_SEATS]        # cards each seat played after it in its round
    signed char card

cdef struct Know:
    State base                  # the public state, the observer's hand, declared cards
    int observer                # seat
    int fixed                   # 1: base is the true world (the cheating player): no sampling
    int n_unseen
    signed char unseen[N_CARDS]
    int hidden[MAX_SEATS]       # cards of each seat the observer cannot see
    int nobuona[MAX_SEATS]      # R-DECL-CHOICE: the seat is known to hold no buona
    u64 played[MAX_SEATS]       # cards each seat played this round
    int n_plays
    SeenPlay plays[MAX_SEEN_PLAYS]
    double infer_t              # the likelihood's temperature (greedy worth units); 0: off
    double type_w[MAX_SEATS][N_TYPES]   # how likely each seat is each kind of player (read_types)
    int infer_soft              # 1: a play's likelihood is its probability (0: by its regret)
    int infer_split             # 1: the two softmax kinds keep their prior split, each read on its own scale

cdef enum:
    PART_MEMO_BITS = 11         # entries of a search's memo of the seats' parts (1 << bits)

cdef struct SeatPart:
    # one seat's part of play_likelihood for one holding of its: what its card
    # plays this round say of it, by kind of player (weigh_play's p and b).
    # It reads no other seat's cards (how many each holds is public), so a
    # search keeps it (Search.memo) for the next world that deals it the same.
    u64 key                     # the holding | (seat + 1) << 48; 0: an empty entry
    int read                    # 0: no play of the seat told anything
    double p[N_TYPES]
    double b[N_TYPES]

cdef int has_buona(const Know* k, const Rules* r, int seat, u64 holding) noexcept nogil
cdef void read_types(Know* k, const Rules* r, const SeenPlay* past, int n, const double* prior) noexcept nogil
cdef double play_likelihood(const Know* k, const Rules* r, const State* w, SeatPart* memo) noexcept nogil
cdef int sample_world(const Know* k, const Rules* r, Rng* rng, State* out, SeatPart* memo) noexcept nogil
