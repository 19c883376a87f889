# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The search kernels: determinization, SO-ISMCTS, paired evaluation, exact
endgames and the match-equity table, as nogil C over the core's structs.

Everything here plays by the core's rules (gen_moves, apply_move, deal_round,
score_hand, greedy_index from _core); nothing re-implements a rule. The Python
side (search.py) builds a `Searcher` per thread from a SeatView, runs it
without the GIL and merges what the searchers counted.

Where the engine switches (search.py picks the kernel; its docstring says why):
  * one legal move: a short paired evaluation of it ("forced");
  * 2 players and an empty stock (the last round): one world, perfect
    information, solved exactly by alpha-beta (`Searcher.exact`);
  * 2 players and a stock of 6 (the last two rounds), captures mandatory:
    every opponent holding x every split of the last deal, each world solved
    exactly and averaged (`Searcher.exact`);
  * otherwise SO-ISMCTS (`Searcher.ismcts`) followed by a paired phase
    (`Searcher.paired`) that produces the reported figures.
"""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.math cimport exp, log, sqrt
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcpy, memset
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from cirulla.solver._core cimport (
    MAX_MOVES, MAX_SEATS, N_CARDS, N_CAT, PH_DEAL, PH_OVER, PH_PLAY, DEAL_VOID,
    CoreRules, Move, Rng, Rules, State, apply_move, cappotto_side, deal_round, gen_moves,
    greedy_index, greedy_scores, lowest, new_hand, rng_below, rng_next, score_hand,
    shuffle_rest, side_of, u64)

cdef extern from *:
    """
    /* the stop flag is written by another thread (CancelToken.cancel) */
    static inline int cirulla_load_flag(int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void cirulla_store_flag(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    /* the core's popcount is a call through a pointer from this module: the
       same SWAR count inline (no POPCNT instruction in the default build) */
    static inline int cirulla_search_popcount(unsigned long long x) {
        x = x - ((x >> 1) & 0x5555555555555555ULL);
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int)((x * 0x0101010101010101ULL) >> 56);
    }
    """
    int load_flag "cirulla_load_flag"(int* p) noexcept nogil
    void store_flag "cirulla_store_flag"(int* p, int v) noexcept nogil
    int popcount "cirulla_search_popcount"(u64 x) noexcept nogil

cdef enum:
    REJECT_CAP = 2000       # draws before a world that breaks an inference is accepted anyway
    INFER_TRIES = 32        # draws weighed by the plays' likelihood; then uniform (bounds the cost)
    MAX_DEPTH = 160         # tree path length (a hand has at most ~45 moves)
    CHECK_EVERY = 16        # iterations between looks at the clock and the stop flag (< 1 ms)
    NODE_CAP_MAX = 1 << 20  # nodes per tree (~75 MB with the child table); then it stops growing
    XCAP = 512              # moves per node in the exact solver
    XDEPTH = 48
    MAX_SEEN_PLAYS = 16         # other seats' card plays this round the inference reads
    MAXP = 64               # hand points are clamped to this in the equity table

cdef inline u64 bit(int c) noexcept nogil:
    return (<u64>1) << c

cdef inline double now_s() noexcept nogil:
    cdef timespec t
    clock_gettime(CLOCK_MONOTONIC, &t)
    return t.tv_sec + t.tv_nsec * 1e-9


# --- flags -------------------------------------------------------------

cdef class StopFlag:
    """An int the searchers poll without the GIL; set() is safe from any thread."""
    cdef int v

    def set(self):
        store_flag(&self.v, 1)

    def clear(self):
        store_flag(&self.v, 0)

    @property
    def is_set(self):
        return load_flag(&self.v) != 0


# --- determinization ----------------------------------------------------

cdef struct SeenPlay:
    # another seat's card play earlier in this round, and what it tells: a
    # holding whose best play (by the greedy worth) was far better than this
    # one is less likely (the play's likelihood, below)
    int seat
    u64 table                   # the table before it
    u64 after[MAX_SEATS]        # cards each seat played after it this round
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


cdef double play_likelihood(const Know* k, const Rules* r, const State* w) noexcept nogil:
    """How well world w explains the other seats' card plays this round, from 0
    to 1: the product over those plays of exp(-regret / infer_t). A play's
    regret is how much more (by the greedy worth, with the seat's holding at
    that time: what it holds in w plus what it played since) the best move of
    a card w gives it exceeds the best move of a card it is known to have held
    then (the one played, the ones played since, declared ones): the
    part of the play's likelihood that depends on the world."""
    cdef State t
    cdef Move buf[512]
    cdef int worth[512]
    cdef int p, i, k2, n, known, guessed
    cdef double regret = 0.0
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
        greedy_scores(&t, r, buf, n, worth)
        known = -1 << 30
        guessed = -1 << 30
        for i in range(n):
            if bit(buf[i].card) & sampled:
                if worth[i] > guessed:
                    guessed = worth[i]
            elif worth[i] > known:
                known = worth[i]
        if guessed > known:
            regret += guessed - known
    return exp(-regret / k.infer_t)


cdef int sample_world(const Know* k, const Rules* r, Rng* rng, State* out) noexcept nogil:
    """out = a world consistent with what the observer knows: the unseen cards
    dealt at random to the other seats' hidden slots and the stock. A draw that
    breaks the R-DECL-CHOICE inference is rejected (uniform over the consistent
    worlds), and one is kept with the probability play_likelihood gives it (the
    worlds drawn in proportion to it, for the first INFER_TRIES draws); after
    REJECT_CAP draws the last one is kept. Returns the rejections."""
    cdef signed char a[N_CARDS]
    cdef int i, j, n = k.n_unseen, seat, pos, tries = 0, ok
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
            for i in range(k.hidden[seat]):
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


# --- playouts and evaluation ----------------------------------------------

cdef inline void advance(State* s, const Rules* r, Rng* rng) noexcept nogil:
    """Deal the next round if one is due (a void deal only exists in round 0)."""
    while s.phase == PH_DEAL:
        if deal_round(s, r) == DEAL_VOID:
            shuffle_rest(s, rng)

cdef inline int policy(const State* s, const Rules* r, Rng* rng, const Move* buf, int n,
                       int eps_milli) noexcept nogil:
    """The rollout policy: the core's greedy move, a random one with probability
    eps_milli / 1000 (so the opponents are not one fixed script)."""
    if n == 1:
        return 0
    if eps_milli and rng_below(rng, 1000) < eps_milli:
        return rng_below(rng, n)
    return greedy_index(s, r, buf, n)

cdef void rollout(State* s, const Rules* r, Rng* rng, Move* buf, int eps_milli) noexcept nogil:
    """The hand to its end with the rollout policy."""
    cdef int n
    while s.phase != PH_OVER:
        if s.phase == PH_DEAL:
            advance(s, r, rng)
            continue
        n = gen_moves(s, r, buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        apply_move(s, r, &buf[policy(s, r, rng, buf, n, eps_milli)])

cdef int can_sweep_next(const State* s, const Rules* r, Move* buf) noexcept nogil:
    """Whether the seat to move can take the whole table as a scopa (R-SCOPA):
    a legal card play taking every table card, not the last card of the hand.
    Declarations are skipped (a matta named ace is not counted)."""
    cdef State t
    cdef int n, i, k, left = 0
    if s.phase != PH_PLAY or s.table == 0:
        return 0
    for k in range(r.n_players):
        left += popcount(s.hand[k])
    if left <= 1 and s.stock_pos == N_CARDS:
        return 0
    memcpy(&t, s, sizeof(State))
    t.declared |= 1 << t.turn
    n = gen_moves(&t, r, buf, MAX_MOVES)
    if n > MAX_MOVES:
        n = MAX_MOVES
    for i in range(n):
        if buf[i].card >= 0 and buf[i].take == t.table:
            return 1
    return 0


cdef struct Eval:
    int pts[MAX_SEATS]              # hand points by side
    int cats[MAX_SEATS * N_CAT]
    int cappotto                    # side, or -1
    double margin[MAX_SEATS]        # each side's points minus the others' average
    double win0                     # P(side 0 wins the match) after this hand, or -1


cdef struct Equity:
    int on                          # 2 sides and a table
    int target
    const float* table              # P(side 0 wins) at [(a * target + b) * 2 + dealer side]
    float tie[2]                    # from tied scores past the target, by dealer side
    int scores[2]
    int next_dealer_side


cdef inline double equity0(const Equity* e, int a, int b, int d) noexcept nogil:
    if a >= e.target or b >= e.target:                  # R-TARGET, R-WINNER
        if a > b:
            return 1.0
        if a < b:
            return 0.0
        return e.tie[d]
    return e.table[(a * e.target + b) * 2 + d]

cdef void evaluate(const State* s, const Rules* r, const Equity* e, Eval* ev) noexcept nogil:
    cdef int k, j, total = 0, ns = r.n_sides
    score_hand(s, r, ev.cats)
    for k in range(ns):
        ev.pts[k] = 0
        for j in range(N_CAT):
            ev.pts[k] += ev.cats[k * N_CAT + j]
        total += ev.pts[k]
    for k in range(ns):
        ev.margin[k] = ev.pts[k] - (total - ev.pts[k]) / <double>(ns - 1)
    ev.cappotto = cappotto_side(s, r)
    ev.win0 = -1.0
    if e.on:
        if ev.cappotto >= 0:                            # R-CAPPOTTO
            ev.win0 = 1.0 if ev.cappotto == 0 else 0.0
        else:
            ev.win0 = equity0(e, e.scores[0] + ev.pts[0], e.scores[1] + ev.pts[1],
                              e.next_dealer_side)

cdef inline double win_of(const Eval* ev, int side) noexcept nogil:
    return ev.win0 if side == 0 else 1.0 - ev.win0

cdef inline double reward(const Eval* ev, int side, int match_mode) noexcept nogil:
    """What the tree maximizes for a side: the hand margin, or near the target
    the chance of winning the match (scaled to points, the margin breaking ties)."""
    if match_mode:
        return 20.0 * (2.0 * win_of(ev, side) - 1.0) + 0.1 * ev.margin[side]
    return ev.margin[side]


# --- the searcher ---------------------------------------------------------

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


cdef inline u64 child_key(int parent, const Move* m) noexcept nogil:
    # the children are found through one open-addressing table keyed by
    # (parent, move): a tree of a million nodes scattered in memory makes
    # walking sibling lists a chain of cache misses
    cdef u64 h = m.take * <u64>0x9E3779B97F4A7C15
    h ^= (m.take2 + (<u64>parent << 20) + (<u64>(m.card + 1) << 8) + <u64>(m.matta_rank + 1)) * <u64>0xBF58476D1CE4E5B9
    h ^= h >> 31
    h *= <u64>0x94D049BB133111EB
    h ^= h >> 29
    return h if h else 1


cdef struct Search:
    Rules r
    Know k
    Equity eq
    int me                      # the asking side
    int match_mode
    double c_ucb
    int eps_milli
    int follow_min              # visits a tree move needs to be followed in the paired phase
    int follow_own              # 1: follow the tree at the asking side's moves only
    Rng rng
    int* stop
    Move* buf
    # the tree; node 0 is the root, nodes 1..n_root its children in root-move order
    Node* nodes
    int n_nodes
    int cap_nodes
    Slot* slots                 # children by (parent, move); a power of 2, at most half full
    u64 slot_mask
    int n_root
    Move* root
    long iters                  # ISMCTS iterations
    long playouts               # every playout, both phases
    long rejected               # determinization draws rejected (R-DECL-CHOICE)
    long solved                 # positions visited by the exact solver
    TTEntry* tt                 # the exact solver's transposition table (2^TT_BITS)
    Hint* hints                 # its move-ordering hints across the splits of the last deal
    double* r_visits            # per root move, ISMCTS: visits (apart from the nodes,
                                # which a growing tree moves: progress reports read these)
    double* r_sum2              # ... sum of squared margins
    double* r_msum              # ... margin (the tree may back up equity instead)
    double* r_cat               # ... margin by category
    double* r_win
    # the paired phase: every root move on the same worlds
    long worlds
    double weight               # their total weight (the exact solver weighs worlds by likelihood)
    double* p_sum               # margin
    double* p_cross             # sum of margin_i * margin_j
    double* p_cat
    double* p_risk
    double* p_win
    double* p_wcross            # sum of win_i * win_j
    double* p_val               # scratch: this world's margins
    double* p_wval


cdef inline void put_slot(Slot* slots, u64 mask, u64 key, int node) noexcept nogil:
    cdef u64 i = key & mask
    while slots[i].key:
        i = (i + 1) & mask
    slots[i].key = key
    slots[i].node = node

cdef int new_node(Search* S, int parent, const Move* m, int side) noexcept nogil:
    cdef Node* nd
    cdef Node* grown
    cdef Slot* table
    cdef u64 i, cap
    cdef int k
    if S.n_nodes == S.cap_nodes:
        if S.cap_nodes >= NODE_CAP_MAX:
            return -1
        grown = <Node*>realloc(S.nodes, 2 * S.cap_nodes * sizeof(Node))
        if grown == NULL:
            return -1
        S.nodes = grown
        S.cap_nodes *= 2
    if <u64>(S.n_nodes + 1) * 2 > S.slot_mask + 1:
        cap = (S.slot_mask + 1) * 2
        table = <Slot*>malloc(cap * sizeof(Slot))
        if table == NULL:
            return -1
        memset(table, 0, cap * sizeof(Slot))
        for i in range(S.slot_mask + 1):
            if S.slots[i].key:
                put_slot(table, cap - 1, S.slots[i].key, S.slots[i].node)
        free(S.slots)
        S.slots = table
        S.slot_mask = cap - 1
    k = S.n_nodes
    S.n_nodes += 1
    nd = &S.nodes[k]
    nd.take = m.take; nd.take2 = m.take2; nd.card = m.card; nd.matta_rank = m.matta_rank
    nd.side = side
    nd.sum = 0; nd.visits = 0; nd.avail = 0
    nd.parent = parent
    put_slot(S.slots, S.slot_mask, child_key(parent, m), k)
    return k

cdef inline int find_child(const Search* S, int parent, const Move* m) noexcept nogil:
    cdef u64 key = child_key(parent, m)
    cdef u64 i = key & S.slot_mask
    cdef const Node* nd
    while S.slots[i].key:
        if S.slots[i].key == key:
            nd = &S.nodes[S.slots[i].node]
            if (nd.parent == parent and nd.card == m.card and nd.take == m.take
                    and nd.take2 == m.take2 and nd.matta_rank == m.matta_rank):
                return S.slots[i].node
        i = (i + 1) & S.slot_mask
    return -1


cdef void ismcts_iteration(Search* S) noexcept nogil:
    """One SO-ISMCTS iteration: a fresh world, a descent choosing among the moves
    legal in it by UCB with availability counts, one new node, a rollout."""
    cdef State s
    cdef Eval ev
    cdef int path[MAX_DEPTH]
    cdef int untried[MAX_MOVES]
    cdef int depth = 0, node = 0, n, i, c, best, nu, side, j
    cdef double sc, best_sc, lg
    cdef Node* nd
    cdef const Rules* r = &S.r
    S.rejected += sample_world(&S.k, r, &S.rng, &s)
    path[0] = 0
    while s.phase == PH_PLAY and depth < MAX_DEPTH - 1:
        n = gen_moves(&s, r, S.buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        best = -1; best_sc = -1e300; nu = 0
        for i in range(n):
            c = find_child(S, node, &S.buf[i])
            if c < 0:
                untried[nu] = i; nu += 1
                continue
            nd = &S.nodes[c]
            nd.avail += 1
            if nd.visits == 0:                          # a root move not tried yet
                untried[nu] = i; nu += 1
                continue
            lg = log(<double>nd.avail)
            sc = nd.sum / nd.visits + S.c_ucb * sqrt(lg / nd.visits)
            if sc > best_sc:
                best_sc = sc; best = i
        side = side_of(r, s.turn)
        if nu:
            i = untried[rng_below(&S.rng, nu) if nu > 1 else 0]
            c = find_child(S, node, &S.buf[i])
            if c < 0:
                c = new_node(S, node, &S.buf[i], side)
                if c >= 0:
                    S.nodes[c].avail = 1
            apply_move(&s, r, &S.buf[i])
            advance(&s, r, &S.rng)
            if c >= 0:
                depth += 1; path[depth] = c
            break
        c = find_child(S, node, &S.buf[best])
        apply_move(&s, r, &S.buf[best])
        advance(&s, r, &S.rng)
        depth += 1; path[depth] = c
        node = c
    rollout(&s, r, &S.rng, S.buf, S.eps_milli)
    evaluate(&s, r, &S.eq, &ev)
    for i in range(1, depth + 1):
        nd = &S.nodes[path[i]]
        nd.visits += 1
        nd.sum += reward(&ev, nd.side, S.match_mode)
    if depth >= 1:
        i = path[1] - 1                                 # root move index
        S.r_visits[i] += 1
        S.r_sum2[i] += ev.margin[S.me] * ev.margin[S.me]
        S.r_msum[i] += ev.margin[S.me]
        if ev.win0 >= 0:
            S.r_win[i] += win_of(&ev, S.me)
        for j in range(N_CAT):
            S.r_cat[i * N_CAT + j] += cat_margin(&S.r, &ev, S.me, j)
    S.iters += 1
    S.playouts += 1

cdef inline double cat_margin(const Rules* r, const Eval* ev, int side, int cat) noexcept nogil:
    """A side's points in one category minus the other sides' average."""
    cdef int k, others = 0
    for k in range(r.n_sides):
        if k != side:
            others += ev.cats[k * N_CAT + cat]
    return ev.cats[side * N_CAT + cat] - others / <double>(r.n_sides - 1)


cdef inline void add_world(Search* S, int nr, double w) noexcept nogil:
    """Add one world's values of every root move (p_val, p_wval), with weight w,
    to the paired sums: the sums, and the cross products behind the paired
    standard errors."""
    cdef int i, k
    for i in range(nr):
        S.p_sum[i] += w * S.p_val[i]
        S.p_win[i] += w * S.p_wval[i]
        for k in range(nr):
            S.p_cross[i * nr + k] += w * S.p_val[i] * S.p_val[k]
            S.p_wcross[i * nr + k] += w * S.p_wval[i] * S.p_wval[k]
    S.worlds += 1
    S.weight += w
    S.playouts += nr


cdef void paired_world(Search* S) noexcept nogil:
    """Every root move on one sampled world, with common random numbers.

    This is how the differences to the best are paired: after each root move
    the hand is played out in the same world, following the tree's most
    visited legal move while it has one (with at least follow_min visits) and
    the rollout policy after that, its randomness reseeded identically for
    every root move. The per-world figures are independent draws given the
    tree, so their spread gives an honest standard error."""
    cdef State s0, s
    cdef Eval ev
    cdef Rng rr
    cdef u64 wseed
    cdef int m, n, i, c, node, best, bv, j, k
    cdef const Rules* r = &S.r
    cdef int nr = S.n_root
    S.rejected += sample_world(&S.k, r, &S.rng, &s0)
    wseed = rng_next(&S.rng)
    for m in range(nr):
        memcpy(&s, &s0, sizeof(State))
        rr.s = wseed
        apply_move(&s, r, &S.root[m])
        advance(&s, r, &rr)
        S.p_risk[m] += can_sweep_next(&s, r, S.buf)
        node = m + 1
        while s.phase == PH_PLAY and node >= 0:
            n = gen_moves(&s, r, S.buf, MAX_MOVES)
            if n > MAX_MOVES:
                n = MAX_MOVES
            if S.follow_own and side_of(r, s.turn) != S.me:
                # the others play the rollout policy, still tracked in the tree
                i = policy(&s, r, &rr, S.buf, n, S.eps_milli)
                node = find_child(S, node, &S.buf[i])
                apply_move(&s, r, &S.buf[i])
                advance(&s, r, &rr)
                continue
            best = -1; bv = S.follow_min - 1
            for i in range(n):
                c = find_child(S, node, &S.buf[i])
                if c >= 0 and S.nodes[c].visits > bv:
                    bv = S.nodes[c].visits; best = i
            if best < 0:
                break
            node = find_child(S, node, &S.buf[best])
            apply_move(&s, r, &S.buf[best])
            advance(&s, r, &rr)
        rollout(&s, r, &rr, S.buf, S.eps_milli)
        evaluate(&s, r, &S.eq, &ev)
        S.p_val[m] = ev.margin[S.me]
        S.p_wval[m] = win_of(&ev, S.me) if ev.win0 >= 0 else 0.0
        for j in range(N_CAT):
            S.p_cat[m * N_CAT + j] += cat_margin(r, &ev, S.me, j)
    add_world(S, nr, 1.0)


# --- exact endgames (2 players) ----------------------------------------------

cdef struct Leaf:
    int obj                     # the objective for the asking side
    int margin
    signed char cats[N_CAT]     # margin by category
    float win


cdef enum:
    TT_BITS = 12
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3


cdef struct TTEntry:
    u64 key                     # 0: empty
    Leaf leaf                   # the line's leaf; leaf.obj is the value (or bound)
    int flag


cdef struct Hint:
    u64 key                     # a state before the last deal, the stock left out
    Move best                   # the best move found there in the last world searched


cdef inline u64 mix64(u64 z) noexcept nogil:
    z = (z ^ (z >> 30)) * <u64>0xBF58476D1CE4E5B9
    z = (z ^ (z >> 27)) * <u64>0x94D049BB133111EB
    return z ^ (z >> 31)

cdef u64 state_key(const State* s, const Rules* r, int with_stock) noexcept nogil:
    """A hash of everything in a 2-player state that the rest of the hand can
    depend on: holdings, table, piles, scope, declarations, the matta's value,
    whose turn, the last capturer, and the undealt stock in order."""
    cdef u64 h = (s.hand[0] ^ <u64>0x9E3779B97F4A7C15) * <u64>0xBF58476D1CE4E5B9
    cdef int i
    h = (h ^ (h >> 29) ^ s.hand[1]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.table) * <u64>0xBF58476D1CE4E5B9
    h = (h ^ (h >> 29) ^ s.pile[0]) * <u64>0x94D049BB133111EB
    h = (h ^ (h >> 29) ^ s.pile[1]) * <u64>0xBF58476D1CE4E5B9
    h = mix64(h ^ (<u64>s.turn | <u64>(s.last_capturer + 1) << 4 | <u64>s.declared << 8
                   | <u64>s.round << 16 | <u64>(s.scope[0] & 0xFF) << 24 | <u64>(s.scope[1] & 0xFF) << 32
                   | <u64>(s.decl[0] & 0xFF) << 40 | <u64>(s.decl[1] & 0xFF) << 48
                   | <u64>(s.cval[r.matta] if r.matta >= 0 else 0) << 56))
    if with_stock:
        for i in range(s.stock_pos, N_CARDS):
            h = (h ^ (<u64>s.stock[i] + (<u64>i << 8))) * <u64>0x9E3779B97F4A7C15
        h = mix64(h)
    return h if h else 1


cdef inline void leaf_of(Search* S, const State* s, Leaf* lf) noexcept nogil:
    cdef Eval ev
    cdef int j, me = S.me, w
    evaluate(s, &S.r, &S.eq, &ev)
    lf.margin = <int>ev.margin[me]
    for j in range(N_CAT):
        lf.cats[j] = ev.cats[me * N_CAT + j] - ev.cats[(1 - me) * N_CAT + j]
    lf.win = win_of(&ev, me) if ev.win0 >= 0 else 0.0
    if S.match_mode:
        # lexicographic: the chance of winning the match first, then the margin
        w = <int>(lf.win * 10000.0 + 0.5)
        lf.obj = w * 512 + lf.margin + 256
    else:
        lf.obj = lf.margin

cdef int alphabeta(Search* S, State* s, int depth, int alpha, int beta, Leaf* out) noexcept nogil:
    """Minimax with alpha-beta (fail-soft) on the objective of the asking side,
    in a world where every card is known, with a transposition table; out gets
    the leaf of the line found. Clobbers *s (the last move is played on it:
    no copy for the many nodes with one move)."""
    cdef State c
    cdef State* child
    cdef Leaf lf
    cdef int n, i, j, v, best, maxing, alpha0 = alpha, beta0 = beta
    cdef Move* buf
    cdef Move t
    cdef u64 key, hkey = 0
    cdef TTEntry* e
    cdef Hint* h = NULL
    S.solved += 1
    if s.phase == PH_OVER:
        leaf_of(S, s, out)
        return out.obj
    # the table only where lines meet again and a subtree is worth storing:
    # with 4 or 6 cards left in the players' hands (plays of one round commute)
    e = NULL
    i = popcount(s.hand[0] | s.hand[1])
    if i == 4 or i == 6:
        key = state_key(s, &S.r, 1)
        e = &S.tt[key & ((1 << TT_BITS) - 1)]
        if e.key == key:
            v = e.leaf.obj
            if (e.flag == TT_EXACT or (e.flag == TT_LOWER and v >= beta)
                    or (e.flag == TT_UPPER and v <= alpha)):
                out[0] = e.leaf
                return v
    buf = &S.buf[depth * XCAP]
    n = gen_moves(s, &S.r, buf, XCAP)
    if n > XCAP:
        n = XCAP
    if n == 0:                                          # (cannot happen in play)
        leaf_of(S, s, out)
        return out.obj
    if n > 1:
        # the move first that was best here in the previous world (worlds that
        # differ only in the last deal share everything before it), else the
        # greedy move: more cut-offs
        j = -1
        if s.stock_pos < N_CARDS:
            hkey = state_key(s, &S.r, 0)
            h = &S.hints[hkey & ((1 << TT_BITS) - 1)]
            if h.key == hkey:
                for i in range(n):
                    if (buf[i].card == h.best.card and buf[i].take == h.best.take
                            and buf[i].take2 == h.best.take2 and buf[i].matta_rank == h.best.matta_rank):
                        j = i
                        break
        if j < 0:
            j = greedy_index(s, &S.r, buf, n)
        if j:
            t = buf[0]; buf[0] = buf[j]; buf[j] = t
    j = 0
    maxing = side_of(&S.r, s.turn) == S.me
    best = -(1 << 30) if maxing else (1 << 30)
    for i in range(n):
        child = s
        if i + 1 < n:
            memcpy(&c, s, sizeof(State))
            child = &c
        apply_move(child, &S.r, &buf[i])
        advance(child, &S.r, &S.rng)
        v = alphabeta(S, child, depth + 1, alpha, beta, &lf)
        if maxing:
            if v > best:
                best = v; out[0] = lf; j = i
            if best > alpha:
                alpha = best
        else:
            if v < best:
                best = v; out[0] = lf; j = i
            if best < beta:
                beta = best
        if alpha >= beta:
            break
    if e != NULL:
        e.key = key
        e.leaf = out[0]
        e.flag = TT_UPPER if best <= alpha0 else (TT_LOWER if best >= beta0 else TT_EXACT)
    if h != NULL:
        h.key = hkey
        h.best = buf[j]
    return best

cdef void exact_world(Search* S, const State* w, double weight) noexcept nogil:
    """Every root move solved exactly in one world; accumulated like a paired
    world, with the weight the world's likelihood gives it."""
    cdef State s
    cdef Leaf lf
    cdef int m, j, i, k, nr = S.n_root
    for m in range(nr):
        memcpy(&s, w, sizeof(State))
        apply_move(&s, &S.r, &S.root[m])
        advance(&s, &S.r, &S.rng)
        S.p_risk[m] += weight * can_sweep_next(&s, &S.r, S.buf)
        alphabeta(S, &s, 0, -(1 << 30), 1 << 30, &lf)
        S.p_val[m] = lf.margin
        S.p_wval[m] = lf.win
        for j in range(N_CAT):
            S.p_cat[m * N_CAT + j] += weight * lf.cats[j]
    add_world(S, nr, weight)

cdef long exact_worlds(Search* S, int part, int parts) noexcept nogil:
    """Enumerate the worlds of a 2-player endgame (the opponent's hidden cards x
    the split of the stock between the two seats of the last deal; the order
    within a seat's 3 cards does not matter) and solve the opponent holdings
    numbered part, part + parts, ..., each with every split (consecutive
    worlds that share a holding share the move-ordering hints). Worlds
    breaking the R-DECL-CHOICE inference are skipped. Returns the worlds
    solved (this part's share), or -1 if stopped."""
    cdef Know* k = &S.k
    cdef const Rules* r = &S.r
    cdef State w
    cdef int opp = 1 - k.observer, n = k.n_unseen, h = k.hidden[opp]
    cdef int ns = N_CARDS - k.base.stock_pos, first, i, pos, index = 0
    cdef u64 hm, sm, rest
    cdef long done = 0
    cdef signed char cards[N_CARDS]
    if k.fixed:                                         # the true world: nothing to enumerate
        if part == 0 and not load_flag(S.stop):
            exact_world(S, &k.base, 1.0)
            return 1
        return 0
    if n != h + ns or ns > 12:
        return 0
    for hm in range((<u64>1) << n):
        if popcount(hm) != h:
            continue
        index += 1
        if (index - 1) % parts != part:
            continue
        for sm in range((<u64>1) << ns):
            # with a stock, the first receiver (after the dealer) gets the first half
            if ns and popcount(sm) * 2 != ns:
                continue
            if ns == 0 and sm:
                break
            if load_flag(S.stop):
                return -1
            memcpy(&w, &k.base, sizeof(State))
            w.hand[opp] = k.base.hand[opp]
            pos = 0
            for i in range(n):
                if hm >> i & 1:
                    w.hand[opp] |= bit(k.unseen[i])
                else:
                    cards[pos] = k.unseen[i]; pos += 1
            if k.nobuona[opp] and has_buona(k, r, opp, w.hand[opp] | k.played[opp]):
                continue
            first = w.stock_pos
            rest = 0
            for i in range(ns):                         # the first receiver's cards
                if sm >> i & 1:
                    w.stock[first] = cards[i]; first += 1
            for i in range(ns):
                if not (sm >> i & 1):
                    w.stock[first] = cards[i]; first += 1
            exact_world(S, &w, play_likelihood(k, r, &w))
            done += 1
    return done


# --- the Python-facing searcher ---------------------------------------------

cdef class Searcher:
    """One search: the knowledge of one seat, a tree, and the counts behind the
    figures. Not thread-safe; one per thread, merged in search.py."""
    cdef Search S
    cdef StopFlag flag
    cdef object equity_ref          # keeps the equity table's buffer alive

    def __cinit__(self):
        memset(&self.S, 0, sizeof(Search))

    def __init__(self, CoreRules rules, dict base, *, int observer, list unseen, list hidden,
                 list nobuona, list played, bint fixed, unsigned long long seed,
                 StopFlag stop, list plays=None, double infer_t=0.0,
                 double c_ucb=4.0, int eps_milli=100, int follow_min=8, int follow_own=0,
                 object equity=None, list scores=None, int next_dealer_side=0,
                 bint match_mode=False):
        cdef int i, n
        cdef SeenPlay* sp
        self.S.r = rules.r
        self.S.k.base = _state_from(base)
        self.S.k.observer = observer
        self.S.k.fixed = fixed
        self.S.k.n_unseen = len(unseen)
        for i in range(len(unseen)):
            self.S.k.unseen[i] = unseen[i]
        for i in range(MAX_SEATS):
            self.S.k.hidden[i] = hidden[i] if i < len(hidden) else 0
            self.S.k.nobuona[i] = nobuona[i] if i < len(nobuona) else 0
            self.S.k.played[i] = played[i] if i < len(played) else 0
        # plays: (seat, the table before, card, the cards each seat played after it)
        for seat, table, card, after in (plays or [])[-MAX_SEEN_PLAYS:]:
            sp = &self.S.k.plays[self.S.k.n_plays]
            sp.seat = seat; sp.table = table; sp.card = card
            for i in range(MAX_SEATS):
                sp.after[i] = after[i] if i < len(after) else 0
            self.S.k.n_plays += 1
        self.S.k.infer_t = infer_t
        self.S.me = side_of(&self.S.r, observer)
        self.S.c_ucb = c_ucb
        self.S.eps_milli = eps_milli
        self.S.follow_min = follow_min
        self.S.follow_own = follow_own
        self.S.rng.s = seed
        self.flag = stop
        self.S.stop = &stop.v
        if equity is not None:
            self.equity_ref = equity
            self.S.eq = (<EquityTable>equity).lookup()
            self.S.eq.scores[0] = scores[0]
            self.S.eq.scores[1] = scores[1]
            self.S.eq.next_dealer_side = next_dealer_side
            self.S.match_mode = match_mode
        self.S.buf = <Move*>PyMem_Malloc(max(MAX_MOVES, XCAP * XDEPTH) * sizeof(Move))
        self.S.cap_nodes = 1024
        self.S.nodes = <Node*>malloc(self.S.cap_nodes * sizeof(Node))
        self.S.slots = <Slot*>malloc(2048 * sizeof(Slot))
        if self.S.buf == NULL or self.S.nodes == NULL or self.S.slots == NULL:
            raise MemoryError()
        memset(self.S.slots, 0, 2048 * sizeof(Slot))
        self.S.slot_mask = 2047
        memset(&self.S.nodes[0], 0, sizeof(Node))
        self.S.nodes[0].parent = -1
        self.S.n_nodes = 1
        # the root moves: the same in every world (they depend on the observer's
        # own cards and the public state only)
        n = gen_moves(&self.S.k.base, &self.S.r, self.S.buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        self.S.n_root = n
        self.S.root = <Move*>PyMem_Malloc(max(n, 1) * sizeof(Move))
        if self.S.root == NULL:
            raise MemoryError()
        self.S.r_visits = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.r_sum2 = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.r_msum = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.r_win = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.r_cat = <double*>PyMem_Malloc(max(n, 1) * N_CAT * sizeof(double))
        self.S.p_sum = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.p_cross = <double*>PyMem_Malloc(max(n * n, 1) * sizeof(double))
        self.S.p_cat = <double*>PyMem_Malloc(max(n, 1) * N_CAT * sizeof(double))
        self.S.p_risk = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.p_win = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.p_wcross = <double*>PyMem_Malloc(max(n * n, 1) * sizeof(double))
        self.S.p_val = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        self.S.p_wval = <double*>PyMem_Malloc(max(n, 1) * sizeof(double))
        if (self.S.r_visits == NULL or self.S.r_sum2 == NULL or self.S.r_msum == NULL or self.S.r_win == NULL
                or self.S.r_cat == NULL or self.S.p_sum == NULL or self.S.p_cross == NULL
                or self.S.p_cat == NULL or self.S.p_risk == NULL or self.S.p_win == NULL
                or self.S.p_wcross == NULL or self.S.p_val == NULL or self.S.p_wval == NULL):
            raise MemoryError()
        memset(self.S.r_visits, 0, n * sizeof(double))
        memset(self.S.r_sum2, 0, n * sizeof(double))
        memset(self.S.r_msum, 0, n * sizeof(double))
        memset(self.S.r_win, 0, n * sizeof(double))
        memset(self.S.r_cat, 0, n * N_CAT * sizeof(double))
        memset(self.S.p_sum, 0, n * sizeof(double))
        memset(self.S.p_cross, 0, n * n * sizeof(double))
        memset(self.S.p_cat, 0, n * N_CAT * sizeof(double))
        memset(self.S.p_risk, 0, n * sizeof(double))
        memset(self.S.p_win, 0, n * sizeof(double))
        memset(self.S.p_wcross, 0, n * n * sizeof(double))
        for i in range(n):
            self.S.root[i] = self.S.buf[i]
        # root children in root-move order: node i + 1 is root move i
        for i in range(n):
            if new_node(&self.S, 0, &self.S.root[i], self.S.me) < 0:
                raise MemoryError()

    def __dealloc__(self):
        free(self.S.tt)
        free(self.S.hints)
        free(self.S.nodes)
        free(self.S.slots)
        PyMem_Free(self.S.buf)
        PyMem_Free(self.S.root)
        PyMem_Free(self.S.r_visits)
        PyMem_Free(self.S.r_sum2)
        PyMem_Free(self.S.r_msum)
        PyMem_Free(self.S.r_win)
        PyMem_Free(self.S.r_cat)
        PyMem_Free(self.S.p_sum)
        PyMem_Free(self.S.p_cross)
        PyMem_Free(self.S.p_cat)
        PyMem_Free(self.S.p_risk)
        PyMem_Free(self.S.p_win)
        PyMem_Free(self.S.p_wcross)
        PyMem_Free(self.S.p_val)
        PyMem_Free(self.S.p_wval)

    @property
    def root_moves(self):
        """The root moves as the core's tuples (card, take, take2, matta_rank, points)."""
        return [(self.S.root[i].card, self.S.root[i].take, self.S.root[i].take2,
                 self.S.root[i].matta_rank, self.S.root[i].points) for i in range(self.S.n_root)]

    def ismcts(self, long iterations, double deadline):
        """Run SO-ISMCTS until `iterations` more iterations, the monotonic
        `deadline` (seconds, 0 for none) or the stop flag. Returns iterations run."""
        cdef long i = 0
        cdef Search* S = &self.S
        with nogil:
            while i < iterations:
                if i % CHECK_EVERY == 0 and (load_flag(S.stop) or (deadline > 0 and now_s() >= deadline)):
                    break
                ismcts_iteration(S)
                i += 1
        return i

    def paired(self, long worlds, double deadline, long min_worlds=0):
        """Run the paired phase for `worlds` more worlds (the first min_worlds
        regardless of the deadline and the stop flag). Returns worlds run."""
        cdef long i = 0
        cdef Search* S = &self.S
        with nogil:
            while i < worlds:
                if i >= min_worlds and (load_flag(S.stop) or (deadline > 0 and now_s() >= deadline)):
                    break
                paired_world(S)
                i += 1
        return i

    def exact(self, int part=0, int parts=1):
        """Solve this part of the worlds of a 2-player endgame exactly; the
        number of worlds solved, or -1 if the stop flag cut it short."""
        cdef long done
        if self.S.r.n_players != 2:
            raise ValueError("the exact solver is for 2 players")
        if self.S.tt == NULL:
            self.S.tt = <TTEntry*>malloc((1 << TT_BITS) * sizeof(TTEntry))
            self.S.hints = <Hint*>malloc((1 << TT_BITS) * sizeof(Hint))
            if self.S.tt == NULL or self.S.hints == NULL:
                raise MemoryError()
            memset(self.S.tt, 0, (1 << TT_BITS) * sizeof(TTEntry))
            memset(self.S.hints, 0, (1 << TT_BITS) * sizeof(Hint))
        with nogil:
            done = exact_worlds(&self.S, part, parts)
        return done

    def sample(self):
        """One sampled world as an export()-style dict (for tests); the dealt
        part of the stock, which no rule reads, is filled with the other cards."""
        cdef State s
        cdef u64 left = (<u64>1 << N_CARDS) - 1
        cdef int i, pos = 0
        self.S.rejected += sample_world(&self.S.k, &self.S.r, &self.S.rng, &s)
        for i in range(s.stock_pos, N_CARDS):
            left &= ~bit(s.stock[i])
        while left and pos < s.stock_pos:
            s.stock[pos] = lowest(left); pos += 1
            left &= left - 1
        return _state_dict(&s)

    def has_buona(self, int seat, u64 holding):
        return bool(has_buona(&self.S.k, &self.S.r, seat, holding))

    def stats(self):
        """The counts behind the figures, as plain Python numbers. Safe to call
        while another thread runs this searcher (for progress reports): it reads
        only fixed arrays, never the tree, and the figures may lag by an iteration."""
        cdef int n = self.S.n_root, i, j
        return {
            "iterations": self.S.iters, "playouts": self.S.playouts, "nodes": self.S.n_nodes,
            "rejected": self.S.rejected, "solved": self.S.solved,
            "visits": [int(self.S.r_visits[i]) for i in range(n)],
            "msum": [self.S.r_msum[i] for i in range(n)],
            "sum2": [self.S.r_sum2[i] for i in range(n)],
            "win": [self.S.r_win[i] for i in range(n)],
            "cat": [[self.S.r_cat[i * N_CAT + j] for j in range(N_CAT)] for i in range(n)],
            "worlds": self.S.worlds, "weight": self.S.weight,
            "p_sum": [self.S.p_sum[i] for i in range(n)],
            "p_cross": [[self.S.p_cross[i * n + j] for j in range(n)] for i in range(n)],
            "p_cat": [[self.S.p_cat[i * N_CAT + j] for j in range(N_CAT)] for i in range(n)],
            "p_risk": [self.S.p_risk[i] for i in range(n)],
            "p_win": [self.S.p_win[i] for i in range(n)],
            "p_wcross": [[self.S.p_wcross[i * n + j] for j in range(n)] for i in range(n)],
        }


cdef State _state_from(dict d) except *:
    """A core State from export()'s dict (as CoreState.restore does)."""
    cdef State s
    cdef int i
    d = dict(d)
    stock, cval = d.pop("stock"), d.pop("cval")
    d["stock"] = bytes(N_CARDS)
    d["cval"] = bytes(N_CARDS)
    s = d
    for i in range(N_CARDS):
        s.stock[i] = stock[i]
        s.cval[i] = cval[i]
    return s

cdef dict _state_dict(const State* s):
    d = <dict>s[0]
    for k, v in d.items():
        if isinstance(v, (list, tuple, bytes)):
            d[k] = list(v)
    d["stock"] = [s.stock[i] for i in range(N_CARDS)]
    d["cval"] = [s.cval[i] for i in range(N_CARDS)]
    return d


# --- match equity ---------------------------------------------------------------

def hand_distribution(CoreRules rules, long hands, unsigned long long seed):
    """Greedy self-play hands from fresh shuffles, the dealer in side 0: counts
    of (dealer side's points, the other side's points) clamped to MAXP - 1, and
    of cappotti by the dealer's side and by the other. 2 sides only."""
    cdef Rules r = rules.r
    cdef State s
    cdef Rng rng
    cdef long i
    cdef int out[MAX_SEATS * N_CAT]
    cdef int p0, p1, j, capp
    cdef long* counts = <long*>PyMem_Malloc(MAXP * MAXP * sizeof(long))
    cdef long capp_dealer = 0, capp_other = 0
    cdef Move* buf = <Move*>PyMem_Malloc(MAX_MOVES * sizeof(Move))
    if counts == NULL or buf == NULL:
        raise MemoryError()
    memset(counts, 0, MAXP * MAXP * sizeof(long))
    rng.s = seed
    with nogil:
        for i in range(hands):
            new_hand(&s, &r, 0)
            shuffle_rest(&s, &rng)
            rollout(&s, &r, &rng, buf, 0)
            if s.instant_winner >= 0:                   # R-CAPOTUN: the dealer's side
                capp_dealer += 1
                continue
            capp = cappotto_side(&s, &r)
            if capp == 0:
                capp_dealer += 1
                continue
            if capp == 1:
                capp_other += 1
                continue
            score_hand(&s, &r, out)
            p0 = 0; p1 = 0
            for j in range(N_CAT):
                p0 += out[j]; p1 += out[N_CAT + j]
            counts[min(p0, MAXP - 1) * MAXP + min(p1, MAXP - 1)] += 1
    result = [[counts[p0 * MAXP + p1] for p1 in range(MAXP)] for p0 in range(MAXP)]
    PyMem_Free(counts)
    PyMem_Free(buf)
    return result, capp_dealer, capp_other


cdef class EquityTable:
    """P(side 0 wins the match) for 2 sides from scores (a, b) below the target
    and the side dealing the next hand, by dynamic programming over the
    distribution of hand results (each hand independent given its dealer)."""
    cdef float* w
    cdef readonly int target
    cdef float tie[2]

    def __cinit__(self):
        self.w = NULL

    def __init__(self, list counts, long capp_dealer, long capp_other, int target):
        cdef int a, b, d, x, y, tot, npairs = 0, i
        cdef long total = capp_dealer + capp_other
        cdef double acc, pd, po, pwin[2], ptie[2]
        cdef double* prob
        cdef int* px
        cdef int* py
        if target < 1:
            raise ValueError("target must be positive")
        self.target = target
        for x in range(MAXP):
            for y in range(MAXP):
                if counts[x][y] and (x or y):           # a hand of 0-0 changes nothing: left out
                    npairs += 1
                    total += counts[x][y]
        if total == 0:
            raise ValueError("no hands in the distribution")
        prob = <double*>PyMem_Malloc(max(npairs, 1) * sizeof(double))
        px = <int*>PyMem_Malloc(max(npairs, 1) * sizeof(int))
        py = <int*>PyMem_Malloc(max(npairs, 1) * sizeof(int))
        self.w = <float*>PyMem_Malloc(target * target * 2 * sizeof(float))
        if prob == NULL or px == NULL or py == NULL or self.w == NULL:
            raise MemoryError()
        i = 0
        for x in range(MAXP):
            for y in range(MAXP):
                if counts[x][y] and (x or y):
                    prob[i] = counts[x][y] / <double>total; px[i] = x; py[i] = y; i += 1
        pd = capp_dealer / <double>total
        po = capp_other / <double>total
        # tied past the target (R-WINNER): another hand; solve the 2x2 system
        for d in range(2):
            pwin[d] = 0; ptie[d] = 0
            for i in range(npairs):
                # side 0 deals when d == 0: it scores x (dealer side), side 1 scores y
                if px[i] == py[i]:
                    ptie[d] += prob[i]
                elif (px[i] > py[i]) == (d == 0):
                    pwin[d] += prob[i]
            pwin[d] += pd if d == 0 else po
        self.tie[0] = (pwin[0] + ptie[0] * pwin[1]) / (1 - ptie[0] * ptie[1])
        self.tie[1] = (pwin[1] + ptie[1] * pwin[0]) / (1 - ptie[0] * ptie[1])
        cdef Equity eq = self.lookup()          # reads the entries this loop has already filled
        with nogil:
            for tot in range(2 * target - 2, -1, -1):
                for a in range(max(0, tot - target + 1), min(tot, target - 1) + 1):
                    b = tot - a
                    for d in range(2):
                        acc = pd if d == 0 else po      # a cappotto by side 0
                        for i in range(npairs):
                            if d == 0:
                                acc += prob[i] * equity0(&eq, a + px[i], b + py[i], 1)
                            else:
                                acc += prob[i] * equity0(&eq, a + py[i], b + px[i], 0)
                        self.w[(a * target + b) * 2 + d] = <float>acc
        PyMem_Free(prob)
        PyMem_Free(px)
        PyMem_Free(py)

    cdef Equity lookup(self) noexcept nogil:
        """The table as the search reads it (equity0)."""
        cdef Equity e
        memset(&e, 0, sizeof(Equity))
        e.on = 1
        e.target = self.target
        e.table = self.w
        e.tie[0] = self.tie[0]
        e.tie[1] = self.tie[1]
        return e

    def __dealloc__(self):
        PyMem_Free(self.w)

    def win0(self, int a, int b, int dealer_side):
        """P(side 0 wins) at scores (a, b), the next hand dealt by dealer_side."""
        if a < 0 or b < 0 or dealer_side not in (0, 1):
            raise ValueError("scores must be >= 0 and the dealer side 0 or 1")
        cdef Equity eq = self.lookup()
        return equity0(&eq, a, b, dealer_side)

