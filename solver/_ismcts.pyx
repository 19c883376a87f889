# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SO-ISMCTS with availability counts: the tree and one iteration on it (a
fresh world, a descent by UCB among the moves legal in it, one new node, a
rollout). The types are in _ismcts.pxd."""
from libc.math cimport log, sqrt
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

from cirulla.solver._core cimport (
    MAX_MOVES, N_CAT, PH_PLAY, Rng, Rules, State, apply_move, deal_due, gen_moves, learned_value, play_out_marking,
    rng_below, side_of)
from cirulla.solver._equity cimport Eval, cat_margin, evaluate, reward, win_of
from cirulla.solver._search cimport RootMove
from cirulla.solver._worlds cimport sample_world

cdef enum:
    MAX_DEPTH = 160         # tree path length (a hand has at most ~45 moves)
    NODE_CAP_MAX = 1 << 20  # nodes per tree (~75 MB with the child table); then it stops growing
    FIRST_NODES = 1024
    FIRST_SLOTS = 2048


cdef inline void put_slot(Slot* slots, u64 mask, u64 key, int node) noexcept nogil:
    cdef u64 i = key & mask
    while slots[i].key:
        i = (i + 1) & mask
    slots[i].key = key
    slots[i].node = node

cdef int new_node(Tree* t, int parent, const Move* m, int side) noexcept nogil:
    """A node for move m below parent: its index, or -1 if the tree is full
    (NODE_CAP_MAX, or out of memory)."""
    cdef Node* nd
    cdef Node* grown
    cdef Slot* table
    cdef u64 i, cap
    cdef int k
    if t.n_nodes == t.cap_nodes:
        if t.cap_nodes >= NODE_CAP_MAX:
            return -1
        grown = <Node*>realloc(t.nodes, 2 * t.cap_nodes * sizeof(Node))
        if grown == NULL:
            return -1
        t.nodes = grown
        t.cap_nodes *= 2
    if <u64>(t.n_nodes + 1) * 2 > t.slot_mask + 1:
        cap = (t.slot_mask + 1) * 2
        table = <Slot*>malloc(cap * sizeof(Slot))
        if table == NULL:
            return -1
        memset(table, 0, cap * sizeof(Slot))
        for i in range(t.slot_mask + 1):
            if t.slots[i].key:
                put_slot(table, cap - 1, t.slots[i].key, t.slots[i].node)
        free(t.slots)
        t.slots = table
        t.slot_mask = cap - 1
    k = t.n_nodes
    t.n_nodes += 1
    nd = &t.nodes[k]
    nd.take = m.take; nd.take2 = m.take2; nd.card = m.card; nd.matta_rank = m.matta_rank
    nd.side = side
    nd.sum = 0; nd.visits = 0; nd.avail = 0
    nd.parent = parent
    put_slot(t.slots, t.slot_mask, child_key(parent, m), k)
    return k

cdef int tree_init(Tree* t, const Search* S) noexcept nogil:
    """The tree of a root and its children, S's root moves in order (node i + 1
    is root move i): 0, or -1 out of memory (tree_free frees what was had)."""
    cdef int i
    memset(t, 0, sizeof(Tree))
    t.nodes = <Node*>malloc(FIRST_NODES * sizeof(Node))
    t.slots = <Slot*>malloc(FIRST_SLOTS * sizeof(Slot))
    if t.nodes == NULL or t.slots == NULL:
        return -1
    t.cap_nodes = FIRST_NODES
    memset(t.slots, 0, FIRST_SLOTS * sizeof(Slot))
    t.slot_mask = FIRST_SLOTS - 1
    memset(&t.nodes[0], 0, sizeof(Node))
    t.nodes[0].parent = -1
    t.n_nodes = 1
    for i in range(S.n_root):
        if new_node(t, 0, &S.roots[i].move, S.me) < 0:
            return -1
    return 0

cdef void tree_free(Tree* t) noexcept nogil:
    free(t.nodes)
    free(t.slots)
    memset(t, 0, sizeof(Tree))


cdef inline int starved_root(const Search* S, const Tree* t, int n, int best) noexcept nogil:
    """The least visited root move if it has less than its floor (root_floor /
    n of the iterations so far), else `best`. Without it, a root move whose first
    playout came out badly can go unvisited for good (UCB's bonus is small beside
    a hand's spread of points), and the paired phase then finds no tree to follow
    after it and plays it out with the rollout policy alone: a biased figure.
    The focus move, if any, comes first while it has less than focus_share."""
    cdef int i, c, low = -1
    cdef long v, fewest = 1L << 62
    if S.focus_share > 0 and 0 <= S.focus < n:
        c = find_child(t, 0, &S.buf[S.focus])
        if <double>t.nodes[c].visits < S.focus_share * S.iters:
            return S.focus
    for i in range(n):
        c = find_child(t, 0, &S.buf[i])
        v = t.nodes[c].visits
        if v < fewest:
            fewest = v; low = i
    if low >= 0 and <double>fewest * n < S.root_floor * S.iters:
        return low
    return best


cdef void roll_out(Search* S, State* s, Rng* rng, State* at, int root_round, bint got, Eval* ev) noexcept nogil:
    cdef double g_cat[N_CAT]
    cdef double fix[N_CAT]
    cdef int j
    # (the learned value off: got from the start, a plain playout)
    got = play_out_marking(s, &S.r, rng, S.eps_milli, S.own_milli, S.me, S.buf, at, root_round,
                           got or S.value_mix == 0)
    evaluate(s, &S.r, &S.eq, ev)
    if got and S.value_mix > 0:                         # (2 sides)
        for j in range(N_CAT):
            g_cat[j] = cat_margin(&S.r, ev, 0, j)
        ev.margin[0] += S.value_mix * (learned_value(at, &S.r, ev.margin[0], g_cat, fix) - ev.margin[0])
        ev.margin[1] = -ev.margin[0]
        for j in range(N_CAT):
            ev.cat_fix[j] = S.value_mix * fix[j]


cdef void ismcts_iteration(Search* S, Tree* t) noexcept nogil:
    """One SO-ISMCTS iteration: a fresh world, a descent choosing among the moves
    legal in it by UCB with availability counts, one new node, a rollout."""
    cdef State s, at
    cdef Eval ev
    cdef bint got = False
    cdef int root_round
    cdef int path[MAX_DEPTH]
    cdef int untried[MAX_MOVES]
    cdef int depth = 0, node = 0, n, i, c, best, nu, side, j
    cdef double sc, best_sc, lg
    cdef Node* nd
    cdef RootMove* rm
    cdef const Rules* r = &S.r
    S.rejected += sample_world(&S.k, r, &S.rng, &s, S.memo)
    root_round = s.round
    path[0] = 0
    while s.phase == PH_PLAY and depth < MAX_DEPTH - 1:
        n = gen_moves(&s, r, S.buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        best = -1; best_sc = -1e300; nu = 0
        for i in range(n):
            c = find_child(t, node, &S.buf[i])
            if c < 0:
                untried[nu] = i; nu += 1
                continue
            nd = &t.nodes[c]
            nd.avail += 1
            if nd.visits == 0:                          # a root move not tried yet
                untried[nu] = i; nu += 1
                continue
            lg = log(<double>nd.avail)
            sc = nd.sum / nd.visits + S.c_ucb * sqrt(lg / nd.visits)
            if sc > best_sc:
                best_sc = sc; best = i
        if node == 0 and not nu and (S.root_floor > 0 or S.focus_share > 0):
            best = starved_root(S, t, n, best)
        side = side_of(r, s.turn)
        if nu:
            i = untried[rng_below(&S.rng, nu) if nu > 1 else 0]
            c = find_child(t, node, &S.buf[i])
            if c < 0:
                c = new_node(t, node, &S.buf[i], side)
                if c >= 0:
                    t.nodes[c].avail = 1
            apply_move(&s, r, &S.buf[i])
            deal_due(&s, r, &S.rng)
            got = marked(S, &s, root_round, &at, got)
            if c >= 0:
                depth += 1; path[depth] = c
            break
        c = find_child(t, node, &S.buf[best])
        apply_move(&s, r, &S.buf[best])
        deal_due(&s, r, &S.rng)
        got = marked(S, &s, root_round, &at, got)
        depth += 1; path[depth] = c
        node = c
    roll_out(S, &s, &S.rng, &at, root_round, got, &ev)
    for i in range(1, depth + 1):
        nd = &t.nodes[path[i]]
        nd.visits += 1
        nd.sum += reward(&ev, nd.side, S.match_mode)
    if depth >= 1:
        rm = &S.roots[path[1] - 1]                      # node i + 1 is root move i
        rm.visits += 1
        rm.sum2 += ev.margin[S.me] * ev.margin[S.me]
        rm.msum += ev.margin[S.me]
        if ev.win0 >= 0:
            rm.win += win_of(&ev, S.me)
        for j in range(N_CAT):
            rm.cat[j] += cat_margin(r, &ev, S.me, j)
    S.iters += 1
    S.playouts += 1
