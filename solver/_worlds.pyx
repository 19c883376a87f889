# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Determinization (docs/rules.md section 8): the worlds a search draws from
what one seat knows, the R-DECL-CHOICE inference and the inference from the
other seats' card plays. The types are in _worlds.pxd."""
from libc.math cimport exp, log
from libc.string cimport memcpy

from cirulla.solver._core cimport (
    N_CARDS, PH_PLAY, Move, Rng, Rules, State, bit, gen_moves, greedy_scores, learned_scores, popcount,
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


cdef inline double play_share(u64 sampled, const Move* buf, int n, const int* worth, double temp) noexcept nogil:
    """A play's likelihood as a choice among every move of the holding (a
    softmax of worth / temp): the known cards' share of the total, which the
    sampled cards' moves take from (the played move's own weight is the same
    in every world)."""
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
    return known / total


cdef inline double play_cost(const Know* k, u64 sampled, const Move* buf, int n, const int* worth) noexcept nogil:
    """What a play takes from a world's likelihood by one model's worth, in
    worth units (the likelihood is exp(-cost / infer_t)): its regret, or with
    infer_soft -infer_t x log of its softmax share."""
    if k.infer_soft:
        return -k.infer_t * log(play_share(sampled, buf, n, worth, k.infer_t))
    return play_regret(sampled, buf, n, worth)


cdef double play_likelihood(const Know* k, const Rules* r, const State* w) noexcept nogil:
    """How well world w explains the other seats' card plays this round, from 0
    to 1: the product over those plays of exp(-regret / infer_t). A play's
    regret is how much more (by the greedy worth, or the learned policy's
    score, 100 x its logit; with the seat's holding at
    that time: what it holds in w plus what it played since) the best move of
    a card w gives it exceeds the best move of a card it is known to have held
    then (the one played, the ones played since, declared ones): the
    part of the play's likelihood that depends on the world. With both
    models (0 < infer_mix < 1) the others are of one kind or the other, the
    same at every play: the two products mixed, infer_mix the learned one's
    weight (a player who plays like the greedy heuristic at every turn is
    read as one)."""
    cdef State t
    cdef Move buf[512]
    cdef int worth[512]
    cdef int p, k2, n
    cdef double rg = 0.0, rl = 0.0, mix = k.infer_mix
    cdef u64 sampled
    cdef const SeenPlay* sp
    if k.infer_t <= 0 or k.n_plays == 0:
        return 1.0
    for p in range(k.n_plays):
        sp = &k.plays[p]
        sampled = w.hand[sp.seat] & ~k.base.hand[sp.seat]
        if not sampled:
            continue
        memcpy(&t, w, sizeof(State))
        t.table = sp.table
        for k2 in range(r.n_players):
            t.hand[k2] |= sp.after[k2]
        t.hand[sp.seat] |= bit(sp.card)
        t.turn = sp.seat
        t.declared |= 1 << sp.seat                  # the card plays only
        n = gen_moves(&t, r, buf, 512)
        if n > 512:
            n = 512
        if mix < 1.0:
            greedy_scores(&t, r, buf, n, worth)
            rg += play_cost(k, sampled, buf, n, worth)
        if mix > 0.0:
            learned_scores(&t, r, buf, n, worth)
            rl += play_cost(k, sampled, buf, n, worth)
    return (1.0 - mix) * exp(-rg / k.infer_t) + mix * exp(-rl / k.infer_t)


cdef int sample_world(const Know* k, const Rules* r, Rng* rng, State* out) noexcept nogil:
    """out = a world consistent with what the observer knows: the unseen cards
    dealt at random to the other seats' hidden slots and the stock. A draw that
    breaks the R-DECL-CHOICE inference is rejected (uniform over the consistent
    worlds), and one is kept with the probability play_likelihood gives it (the
    worlds drawn in proportion to it, for the first INFER_TRIES draws); after
    REJECT_CAP draws the last one is kept. Returns the rejections."""
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
            ok = (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0) < play_likelihood(k, r, out)
        if ok or tries >= REJECT_CAP:
            break
        tries += 1
    for i in range(pos, n):
        out.stock[out.stock_pos + i - pos] = a[i]
    return tries
