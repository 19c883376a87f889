# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Determinization (docs/rules.md section 8): the worlds a search draws from
what one seat knows, the R-DECL-CHOICE inference and the inference from the
other seats' card plays. The types are in _worlds.pxd."""
from libc.math cimport exp
from libc.string cimport memcpy

from cirulla.solver._core cimport (
    MAX_SEATS, N_CARDS, PH_PLAY, Move, Rng, Rules, State, bit, gen_moves, greedy_scores, learned_scores, popcount,
    rng_below, rng_next, u64)

cdef enum:
    REJECT_CAP = 2000       # draws before a world that breaks an inference is accepted anyway
    INFER_TRIES = 32        # draws weighed by the plays' likelihood; then uniform (bounds the cost)


cdef int has_buona(const Know* k, const Rules* r, int seat, u64 holding) noexcept nogil:
    """Whether this round's holding makes a declaration (asks the core's gen_moves
    on a scratch state: at the seat's first turn, with mandatory declarations,
    only scoring declarations are legal when there is one)."""
    cdef State s
    cdef Move buf[256]
    cdef int n, i
    memcpy(&s, &k.base, sizeof(State))
    s.hand[seat] = holding
    s.public[seat] = 0
    s.turn = seat
    s.table = 0
    s.phase = PH_PLAY
    s.declared = 0
    s.round_cards = popcount(holding)
    n = gen_moves(&s, r, buf, 256)
    for i in range(min(n, 256)):
        if buf[i].card < 0 and buf[i].points > 0:
            return 1
    return 0


cdef enum:
    MAX_PLAY_MOVES = 512        # a play's moves the inference reads (more: the first ones)

cdef double PROGRAM_SLIP = 0.02     # TYPE_PROGRAM's chance of a move at random


cdef inline double play_regret(u64 sampled, const Move* buf, int n, const int* worth) noexcept nogil:
    """A play's regret by one model's worth: how much the best move of a
    sampled card beats the best move of a known one (0 if it does not)."""
    cdef int i, known = -1 << 30, guessed = -1 << 30
    for i in range(n):
        if bit(buf[i].card) & sampled:
            if worth[i] > guessed:
                guessed = worth[i]
        elif worth[i] > known:
            known = worth[i]
    return guessed - known if guessed > known else 0.0


cdef inline double soft_prob(int played, u64 sampled, const Move* buf, int n, const int* worth, double temp,
                             double* bound) noexcept nogil:
    """The probability of the played move (index `played`) among the holding's
    moves by the softmax of worth / temp; *bound: the same among the known
    cards' moves alone (the most it is in any world)."""
    cdef int i, top = -1 << 30
    cdef double known = 0.0, total = 0.0, e
    for i in range(n):
        if worth[i] > top:
            top = worth[i]
    for i in range(n):
        e = exp((worth[i] - top) / temp)
        total += e
        if not bit(buf[i].card) & sampled:
            known += e
    e = exp((worth[played] - top) / temp)
    bound[0] = e / known
    return e / total


cdef inline double program_prob(int played, u64 sampled, const Move* buf, int n, const int* worth,
                                double* bound) noexcept nogil:
    """The probability of the played move for TYPE_PROGRAM: one of the moves
    of best greedy worth, or with PROGRAM_SLIP any move; *bound as soft_prob's."""
    cdef int i, best = -1 << 30, n_best = 0, best_k = -1 << 30, n_best_k = 0, n_k = 0
    for i in range(n):
        if worth[i] > best:
            best = worth[i]; n_best = 0
        n_best += worth[i] == best
        if not bit(buf[i].card) & sampled:
            n_k += 1
            if worth[i] > best_k:
                best_k = worth[i]; n_best_k = 0
            n_best_k += worth[i] == best_k
    bound[0] = PROGRAM_SLIP / n_k + (1.0 - PROGRAM_SLIP) * (worth[played] == best_k) / n_best_k
    return PROGRAM_SLIP / n + (1.0 - PROGRAM_SLIP) * (worth[played] == best) / n_best


cdef void weigh_play(const Know* k, const Rules* r, const State* t, const SeenPlay* sp, u64 sampled,
                     const double* w, int soft, double* p, double* b) noexcept nogil:
    """p[type] *= the play's probability at position t (its seat to move,
    holding what it held then) for each kind of player of weight w > 0, b[type]
    *= its bound (the most it is in any world); with soft 0 (the regret form)
    exp(-regret / infer_t), or for TYPE_PROGRAM 1 or PROGRAM_SLIP, bound 1."""
    cdef Move buf[MAX_PLAY_MOVES]
    cdef int worth[MAX_PLAY_MOVES]
    cdef int n, i, played = -1
    cdef double x, regret
    n = gen_moves(t, r, buf, MAX_PLAY_MOVES)
    if n > MAX_PLAY_MOVES:
        n = MAX_PLAY_MOVES
    for i in range(n):
        if buf[i].card == sp.card and buf[i].take == sp.take:
            played = i
    if played < 0:
        return                  # not a move there (a view's play the core cannot place): it tells nothing
    if w[TYPE_PROGRAM] > 0 or w[TYPE_GREEDY] > 0:
        greedy_scores(t, r, buf, n, worth)
        if soft:
            p[TYPE_PROGRAM] *= program_prob(played, sampled, buf, n, worth, &x); b[TYPE_PROGRAM] *= x
            p[TYPE_GREEDY] *= soft_prob(played, sampled, buf, n, worth, k.infer_t, &x); b[TYPE_GREEDY] *= x
        else:
            regret = play_regret(sampled, buf, n, worth)
            p[TYPE_PROGRAM] *= 1.0 if regret == 0 else PROGRAM_SLIP
            p[TYPE_GREEDY] *= exp(-regret / k.infer_t)
    if w[TYPE_LEARNED] > 0:
        learned_scores(t, r, buf, n, worth)
        if soft:
            p[TYPE_LEARNED] *= soft_prob(played, sampled, buf, n, worth, k.infer_t, &x); b[TYPE_LEARNED] *= x
        else:
            p[TYPE_LEARNED] *= exp(-play_regret(sampled, buf, n, worth) / k.infer_t)


cdef void read_types(Know* k, const Rules* r, const SeenPlay* past, int n, const double* prior) noexcept nogil:
    """k.type_w[seat] = each kind of player's prior times the probability it
    gives the seat's card plays of the hand's finished rounds (where every
    holding is known: what a seat held at a play is what it played from it on),
    normalized (the prior alone without the inference, k.infer_t 0). The
    positions are today's but for the table and the holdings."""
    cdef State t
    cdef double p[N_TYPES]
    cdef double b[N_TYPES]
    cdef double total = 0.0
    cdef double* w
    cdef int i, j, seat
    for seat in range(MAX_SEATS):
        for j in range(N_TYPES):
            k.type_w[seat][j] = prior[j]
    if k.infer_t <= 0:
        return                                      # no inference (worlds drawn uniformly): the prior
    for i in range(n):
        memcpy(&t, &k.base, sizeof(State))
        t.table = past[i].table
        for seat in range(r.n_players):
            t.hand[seat] = past[i].after[seat]
            t.public[seat] = 0
        t.hand[past[i].seat] |= bit(past[i].card)
        t.turn = past[i].seat
        t.declared |= 1 << past[i].seat             # the card plays only
        if t.stock_pos == N_CARDS:
            t.stock_pos = N_CARDS - 1               # a finished round had a stock to come (greedy's "last")
        w = k.type_w[past[i].seat]
        for j in range(N_TYPES):
            p[j] = 1.0; b[j] = 1.0
        weigh_play(k, r, &t, &past[i], 0, w, 1, p, b)     # the probabilities, whatever infer_soft
        if k.infer_split and w[TYPE_GREEDY] + w[TYPE_LEARNED] > 0:
            # the two softmax kinds judged together against the program: their split stays the prior's
            p[TYPE_GREEDY] = p[TYPE_LEARNED] = ((w[TYPE_GREEDY] * p[TYPE_GREEDY] + w[TYPE_LEARNED] * p[TYPE_LEARNED])
                                                / (w[TYPE_GREEDY] + w[TYPE_LEARNED]))
        total = 0.0
        for j in range(N_TYPES):
            total += w[j] * p[j]
        if total <= 0:
            continue
        for j in range(N_TYPES):
            w[j] = w[j] * p[j] / total              # normalized as it goes: no underflow


cdef void seat_part(const Know* k, const Rules* r, const State* w, int seat, SeatPart* out) noexcept nogil:
    """out = what the seat's card plays this round say of its holding in world
    w (with what it played since): each kind of player's probability of them,
    and its bound (the most it is in any world); read 0 if none told anything."""
    cdef State t
    cdef int p, k2, j
    cdef const SeenPlay* sp
    cdef u64 sampled = w.hand[seat] & ~k.base.hand[seat]
    for j in range(N_TYPES):
        out.p[j] = 1.0; out.b[j] = 1.0
    out.read = 0
    if not sampled:
        return
    for p in range(k.n_plays):
        sp = &k.plays[p]
        if sp.seat != seat:
            continue
        memcpy(&t, w, sizeof(State))
        t.table = sp.table
        for k2 in range(r.n_players):
            t.hand[k2] |= sp.after[k2]
        t.hand[seat] |= bit(sp.card)
        t.turn = seat
        t.declared |= 1 << seat                     # the card plays only
        weigh_play(k, r, &t, sp, sampled, k.type_w[seat], k.infer_soft, out.p, out.b)
        out.read = 1


cdef double play_likelihood(const Know* k, const Rules* r, const State* w, SeatPart* memo) noexcept nogil:
    """How well world w explains the other seats' card plays this round, from 0
    to 1. Each kind of player gives each play a probability, with the seat's
    holding at that time (what it holds in w plus what it played since) and
    today's position but for the table; a seat's part of the likelihood is
    the kinds' products mixed by its weights (k.type_w[seat]), over the most
    that mixture is in any world (the plays' probabilities among the known
    cards' moves alone); the world's, the seats' parts multiplied. `memo`
    (1 << PART_MEMO_BITS entries, or NULL) keeps the seats' parts by holding."""
    cdef int p, j, seat
    cdef unsigned int seats = 0
    cdef double num, den, out = 1.0
    cdef u64 key
    cdef SeatPart scratch
    cdef SeatPart* part
    if k.infer_t <= 0 or k.n_plays == 0:
        return 1.0
    for p in range(k.n_plays):
        seats |= 1u << k.plays[p].seat
    for seat in range(r.n_players):
        if not seats >> seat & 1:
            continue
        if memo == NULL:
            part = &scratch
            seat_part(k, r, w, seat, part)
        else:
            key = w.hand[seat] | (<u64>(seat + 1) << 48)
            part = &memo[(key * <u64>0x9E3779B97F4A7C15) >> (64 - PART_MEMO_BITS)]
            if part.key != key:
                seat_part(k, r, w, seat, part)
                part.key = key
        if part.read:
            num = 0.0; den = 0.0
            for j in range(N_TYPES):
                if k.infer_split:                   # each kind over its own bound, then mixed
                    num += k.type_w[seat][j] * (part.p[j] / part.b[j] if part.b[j] > 0 else 0.0)
                    den += k.type_w[seat][j]
                else:
                    num += k.type_w[seat][j] * part.p[j]
                    den += k.type_w[seat][j] * part.b[j]
            if den > 0:
                out *= num / den
    return out


cdef int sample_world(const Know* k, const Rules* r, Rng* rng, State* out, SeatPart* memo) noexcept nogil:
    """out = a world consistent with what the observer knows: the unseen cards
    dealt at random to the other seats' hidden slots and the stock. A draw that
    breaks the R-DECL-CHOICE inference is rejected (uniform over the consistent
    worlds), and one is kept with the probability play_likelihood gives it (the
    worlds drawn in proportion to it, for the first INFER_TRIES draws); after
    REJECT_CAP draws the last one is kept. Returns the rejections. `memo`: play_likelihood's."""
    cdef signed char a[N_CARDS]
    cdef int i, _i, j, n = k.n_unseen, seat, pos, tries = 0, ok
    cdef signed char t
    cdef u64 h
    memcpy(out, &k.base, sizeof(State))
    if k.fixed:
        return 0
    memcpy(a, k.unseen, n)
    while True:
        for i in range(n - 1, 0, -1):                   # Fisher-Yates
            j = rng_below(rng, i + 1)
            t = a[i]; a[i] = a[j]; a[j] = t
        pos = 0
        ok = 1
        for seat in range(r.n_players):
            h = k.base.hand[seat]
            for _i in range(k.hidden[seat]):
                h |= bit(a[pos]); pos += 1
            out.hand[seat] = h
            if ok and k.nobuona[seat] and has_buona(k, r, seat, h | k.played[seat]):
                ok = 0
        if ok and k.infer_t > 0 and k.n_plays and tries < INFER_TRIES:
            ok = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) < play_likelihood(k, r, out, memo)
        if ok or tries >= REJECT_CAP:
            break
        tries += 1
    for i in range(pos, n):
        out.stock[out.stock_pos + i - pos] = a[i]
    return tries
