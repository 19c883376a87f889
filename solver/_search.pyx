# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The Python-facing search: a `Searcher` per thread, which holds one search's
state (Search, in _search.pxd), its tree and the exact solver's tables, runs
the kernels without the GIL and reports what they counted; and the StopFlag
that cancels it from another thread.

The kernels play by the core's rules (_core: gen_moves, apply_move,
play_out, ...); nothing re-implements a rule. Each concern is a module:
  * _worlds: determinization (the worlds consistent with what a seat knows);
  * _equity: what a finished hand is worth, and the match-equity table;
  * _ismcts: SO-ISMCTS, the tree and its iteration;
  * _paired: the paired phase (every root move on the same worlds);
  * _exact: alpha-beta over every world of a 2-player endgame.

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
from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

from cirulla.solver._core cimport (
    EPS_MILLI_DEFAULT, GREEDY, LEARNED, MAX_MOVES, MAX_SEATS, N_CARDS, N_CAT, CoreRules, Move, State, bit, gen_moves,
    lowest, policy_flags, side_of, state_from_dict, state_to_dict, u64, value_layout)
from cirulla.solver._equity cimport EquityTable
from cirulla.solver._exact cimport (
    XCAP, XDEPTH, Tables, exact_worlds, last_round_vs_rollout_player, tables_free, tables_init)
from cirulla.solver._ismcts cimport Tree, ismcts_iteration, tree_free, tree_init
from cirulla.solver._paired cimport paired_world
from cirulla.solver._worlds cimport (
    MAX_SEEN_PLAYS, N_TYPES, PART_MEMO_BITS, TYPE_GREEDY, TYPE_LEARNED, TYPE_PROGRAM, SeatPart, SeenPlay,
    has_buona, play_likelihood, read_types, sample_world)

cdef enum:
    CHECK_EVERY = 16        # iterations between looks at the clock and the stop flag (< 1 ms)


cdef void seen_play(SeenPlay* sp, tuple play) except *:
    """A SeenPlay from its Python form (search.SeenPlay)."""
    cdef int i
    seat, table, card, take, after = play
    sp.seat = seat; sp.table = table; sp.card = card; sp.take = take
    for i in range(MAX_SEATS):
        sp.after[i] = after[i] if i < len(after) else 0


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


cdef class Searcher:
    """One search: the knowledge of one seat, a tree, and the counts behind the
    figures. Not thread-safe; one per thread, merged in search.py."""
    cdef Search S
    cdef Tree tree
    cdef Tables tables
    cdef StopFlag flag
    cdef EquityTable equity         # keeps the equity table's buffer alive

    def __cinit__(self):
        memset(&self.S, 0, sizeof(Search))
        memset(&self.tree, 0, sizeof(Tree))
        memset(&self.tables, 0, sizeof(Tables))

    def __init__(self, CoreRules rules, dict base, *, int observer, list unseen, list hidden,
                 list nobuona, list played, bint fixed, unsigned long long seed,
                 StopFlag stop, list plays=None, list past=None, double infer_t=0.0,
                 double c_ucb=4.0, int eps_milli=EPS_MILLI_DEFAULT, int follow_min=8, int follow_own=1,
                 double root_floor=0.0, int policy=GREEDY, int infer_policy=GREEDY, int own_policy=-1,
                 double infer_mix=-1.0, int infer_soft=0, double infer_program=0.0, int infer_split=0,
                 int own_eps_milli=-1, int learned_value=0,
                 EquityTable equity=None, list scores=None, int next_dealer_side=0,
                 bint match_mode=False):
        cdef int i, n
        cdef size_t size
        cdef SeenPlay past_plays[N_CARDS]             # a hand has fewer card plays
        cdef double prior[N_TYPES]
        cdef double mix
        cdef Search* S = &self.S
        cdef int rollout = policy_flags(policy)
        if not 0 <= eps_milli <= 1000:
            raise ValueError(f"eps_milli (the rollout's random moves, per 1000) must be in 0..1000, got {eps_milli}")
        if not -1 <= own_eps_milli <= 1000:
            raise ValueError(f"own_eps_milli (the asking side's random moves, per 1000) must be -1 (eps_milli's) "
                             f"or in 0..1000, got {own_eps_milli}")
        if not 0 <= learned_value <= 2:
            raise ValueError(f"learned_value must be 0 (off), 1 (on) or 2 (on as far as the other side does not "
                             f"read as the greedy program), got {learned_value}")
        if not 0 <= follow_own <= 2:
            raise ValueError(f"follow_own must be 0 (the tree at every turn), 1 (at the asking side's) or 2 "
                             f"(at the asking seat's), got {follow_own}")
        if not 0.0 <= c_ucb < INFINITY:
            raise ValueError(f"c_ucb (the tree's exploration) must be a finite number >= 0, got {c_ucb}")
        if follow_min < 0:
            raise ValueError(f"follow_min (the visits a tree move needs to be followed) must be >= 0, got {follow_min}")
        if not 0.0 <= infer_t < INFINITY:
            raise ValueError(f"infer_t (the inference's temperature; 0: off) must be a finite number >= 0, "
                             f"got {infer_t}")
        if infer_policy not in (GREEDY, LEARNED):
            raise ValueError(f"infer_policy (the inference's) must be GREEDY (0) or LEARNED (1), got {infer_policy}")
        if len(unseen) > N_CARDS:
            raise ValueError(f"{len(unseen)} unseen cards: there are {N_CARDS} cards")
        self.release()                  # (__init__ called again)
        S.r = rules.r
        S.k.base = state_from_dict(base)
        S.k.observer = observer
        S.k.fixed = fixed
        S.k.n_unseen = len(unseen)
        for i in range(len(unseen)):
            S.k.unseen[i] = unseen[i]
        for i in range(MAX_SEATS):
            S.k.hidden[i] = hidden[i] if i < len(hidden) else 0
            S.k.nobuona[i] = nobuona[i] if i < len(nobuona) else 0
            S.k.played[i] = played[i] if i < len(played) else 0
        # plays and past: (seat, the table before, card, the cards it took, the cards
        # each seat played after it in its round)
        for play in (plays or [])[-MAX_SEEN_PLAYS:]:
            seen_play(&S.k.plays[S.k.n_plays], play)
            S.k.n_plays += 1
        S.k.infer_t = infer_t
        # infer_mix -1: the infer_policy's model alone
        if not (infer_mix == -1.0 or 0.0 <= infer_mix <= 1.0):
            raise ValueError(f"infer_mix (the learned model's weight) must be in 0..1, got {infer_mix}")
        if infer_soft not in (0, 1):
            raise ValueError(f"infer_soft must be 0 (a play by its regret) or 1 (its probability), got {infer_soft}")
        if not 0.0 <= infer_program <= 1.0:
            raise ValueError(f"infer_program (the prior of a greedy program) must be in 0..1, got {infer_program}")
        mix = (1.0 if infer_policy == LEARNED else 0.0) if infer_mix < 0 else infer_mix
        prior[TYPE_PROGRAM] = infer_program
        prior[TYPE_GREEDY] = (1.0 - infer_program) * (1.0 - mix)
        prior[TYPE_LEARNED] = (1.0 - infer_program) * mix
        S.k.infer_soft = infer_soft
        if infer_split not in (0, 1):
            raise ValueError(f"infer_split must be 0 (the kinds read apart) or 1 (their prior split kept), "
                             f"got {infer_split}")
        S.k.infer_split = infer_split
        past = (past or [])[-N_CARDS:]
        for i in range(len(past)):
            seen_play(&past_plays[i], past[i])
        read_types(&S.k, &S.r, past_plays, len(past), prior)
        S.me = side_of(&S.r, observer)
        S.c_ucb = c_ucb
        S.eps_milli = eps_milli | rollout
        own_eps = eps_milli if own_eps_milli < 0 else own_eps_milli
        S.own_milli = own_eps | (rollout if own_policy < 0 else policy_flags(own_policy))
        S.follow_min = follow_min
        S.follow_own = follow_own
        # the learned value models the others as the engine plays: against the greedy program
        # the greedy rollouts are the better model, so with 2 it weighs as the program does not
        if learned_value and value_layout(S.r.n_players) < 0:
            raise ValueError(f"learned_value: the learned value has models for 2 and 4 players, "
                             f"not {S.r.n_players}")
        S.value_mix = learned_value != 0
        if learned_value == 2:
            for i in range(S.r.n_players):
                if side_of(&S.r, i) != S.me:
                    S.value_mix = min(S.value_mix, 1.0 - S.k.type_w[i][TYPE_PROGRAM])
        if not 0.0 <= root_floor <= 1.0:
            raise ValueError(f"root_floor (a share of the iterations) must be in 0..1, got {root_floor}")
        S.root_floor = root_floor
        S.rng.s = seed
        self.flag = stop
        S.stop = &stop.v
        if equity is not None:
            self.equity = equity
            S.eq = equity.lookup()
            S.eq.scores[0] = scores[0]
            S.eq.scores[1] = scores[1]
            S.eq.next_dealer_side = next_dealer_side
            S.match_mode = match_mode
        # the scratch moves: a playout's, or the exact solver's XCAP per ply
        S.buf = <Move*>malloc(max(MAX_MOVES, XCAP * XDEPTH) * sizeof(Move))
        if S.buf == NULL:
            raise MemoryError()
        if S.k.infer_t > 0 and S.k.n_plays and not S.k.fixed:
            S.memo = <SeatPart*>calloc(1 << PART_MEMO_BITS, sizeof(SeatPart))
            if S.memo == NULL:
                raise MemoryError()
        # the root moves: the same in every world (they depend on the observer's
        # own cards and the public state only); their figures and the cross
        # products of every pair in one zeroed allocation
        n = gen_moves(&S.k.base, &S.r, S.buf, MAX_MOVES)
        if n > MAX_MOVES:
            n = MAX_MOVES
        size = n * sizeof(RootMove) + <size_t>n * n * sizeof(Pair)
        S.roots = <RootMove*>calloc(1, size if size else 1)
        if S.roots == NULL:
            raise MemoryError()
        S.cross = <Pair*>&S.roots[n]
        S.n_root = n
        for i in range(n):
            S.roots[i].move = S.buf[i]
        if tree_init(&self.tree, S) < 0:
            raise MemoryError()

    cdef void release(self) noexcept:
        """Free every buffer (those a failed __init__ got too)."""
        tables_free(&self.tables)
        tree_free(&self.tree)
        free(self.S.buf)
        free(self.S.memo)
        free(self.S.roots)
        memset(&self.S, 0, sizeof(Search))

    def __dealloc__(self):
        self.release()

    def focus_on(self, int move, double share):
        """Give root move `move` (an index of root_moves) `share` of the tree's
        iterations at least: the analysis's played move, whose figures matter."""
        if not 0 <= move < self.S.n_root:
            raise ValueError(f"root move {move}: there are {self.S.n_root}")
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share (of the iterations) must be in 0..1, got {share}")
        self.S.focus = move
        self.S.focus_share = share

    @property
    def type_weights(self):
        """How likely each seat is each kind of player (TYPE_PROGRAM,
        TYPE_GREEDY, TYPE_LEARNED), from the prior and its plays of the hand's
        finished rounds: a list per seat (the observer's, the prior)."""
        return [[self.S.k.type_w[s][i] for i in range(N_TYPES)] for s in range(self.S.r.n_players)]

    @property
    def root_moves(self):
        """The root moves as the core's tuples (card, take, take2, matta_rank, points)."""
        cdef const Move* m
        out = []
        for i in range(self.S.n_root):
            m = &self.S.roots[i].move
            out.append((m.card, m.take, m.take2, m.matta_rank, m.points))
        return out

    def ismcts(self, long iterations, double deadline):
        """Run SO-ISMCTS until `iterations` more iterations, the monotonic
        `deadline` (seconds, 0 for none) or the stop flag. Returns iterations run."""
        cdef long i = 0
        cdef Search* S = &self.S
        cdef Tree* t = &self.tree
        with nogil:
            while i < iterations:
                if i % CHECK_EVERY == 0 and halted(S.stop, deadline):
                    break
                ismcts_iteration(S, t)
                i += 1
        return i

    def paired(self, long worlds, double deadline, long min_worlds=0):
        """Run the paired phase for `worlds` more worlds (the first min_worlds
        regardless of the deadline and the stop flag). Returns worlds run."""
        cdef long i = 0
        cdef Search* S = &self.S
        cdef const Tree* t = &self.tree
        with nogil:
            while i < worlds:
                if i >= min_worlds and halted(S.stop, deadline):
                    break
                paired_world(S, t)
                i += 1
        return i

    def exact(self, int part=0, int parts=1, double deadline=0.0, bint respond=False):
        """Solve this part of the worlds of a 2-player endgame exactly (with
        two sides of more players, the last round's best response); the
        number of worlds solved, or -1 if the stop flag or the monotonic
        `deadline` (seconds, 0 for none) cut it short. The opponent holdings
        are visited in a shuffled order, so the worlds solved by then are a
        fair sample of them all. `respond`: the other seat plays the greedy
        program's move at its every turn (a best response to the program)."""
        cdef long done
        if self.S.r.n_players != 2 and not (respond and self.S.r.n_sides == 2 and self.S.k.base.stock_pos == N_CARDS):
            raise ValueError("the exact solver is for 2 players (with two sides of more: the best response in the "
                             "last round)")
        if not 0 <= part < parts:
            raise ValueError(f"part {part} of {parts}: need 0 <= part < parts")
        if tables_init(&self.tables) < 0:
            raise MemoryError()
        with nogil:
            done = exact_worlds(&self.S, &self.tables, part, parts, deadline, respond)
        return done

    def vs_rollout_player(self, double program=0.0):
        """The last round of 2 players (the stock empty, one world): each root
        move's margin against a player who plays it by rollouts (flat Monte
        Carlo: its every move the best by the rollout policy's expectation of
        the rest), or with weight `program` the greedy program (its move
        greedy's), this seat's moves the best by minimax first, then against
        that player; by root move, or None in any other position or where the
        round has too many lines to walk (with optional captures and a large
        table: _exact.WALK_NODES)."""
        cdef double out[MAX_MOVES]
        cdef int done
        if not 0.0 <= program <= 1.0:
            raise ValueError(f"program (a weight) must be in 0..1, got {program}")
        with nogil:
            done = last_round_vs_rollout_player(&self.S, program, out)
        return None if done < 0 else [out[m] for m in range(self.S.n_root)]

    def sample(self):
        """One sampled world as an export()-style dict (for tests); the dealt
        part of the stock, which no rule reads, is filled with the other cards."""
        cdef State s
        cdef u64 left = (<u64>1 << N_CARDS) - 1
        cdef int i, pos = 0
        self.S.rejected += sample_world(&self.S.k, &self.S.r, &self.S.rng, &s, self.S.memo)
        for i in range(s.stock_pos, N_CARDS):
            left &= ~bit(s.stock[i])
        while left and pos < s.stock_pos:
            s.stock[pos] = lowest(left); pos += 1
            left &= left - 1
        return state_to_dict(&s)

    def has_buona(self, int seat, u64 holding):
        return bool(has_buona(&self.S.k, &self.S.r, seat, holding))

    def likelihood(self, list hands, bint memo=True):
        """How well the world of these hands (by seat; the rest as the knowledge
        has it) explains the other seats' plays this round (play_likelihood),
        through the search's memo of the seats' parts, or without it (for tests)."""
        cdef State w
        cdef int i
        if len(hands) != self.S.r.n_players:
            raise ValueError(f"{len(hands)} hands for {self.S.r.n_players} players")
        memcpy(&w, &self.S.k.base, sizeof(State))
        for i in range(self.S.r.n_players):
            w.hand[i] = hands[i]
        return play_likelihood(&self.S.k, &self.S.r, &w, self.S.memo if memo else NULL)

    def stats(self):
        """The counts behind the figures, as plain Python numbers. Safe to call
        while another thread runs this searcher (for progress reports): it reads
        only fixed arrays, never the tree, and the figures may lag by an iteration."""
        cdef int n = self.S.n_root, i, j
        cdef const RootMove* m = self.S.roots
        cdef const Pair* x = self.S.cross
        return {
            "iterations": self.S.iters, "playouts": self.S.playouts, "nodes": self.tree.n_nodes,
            "rejected": self.S.rejected, "solved": self.S.solved,
            "visits": [int(m[i].visits) for i in range(n)],
            "msum": [m[i].msum for i in range(n)],
            "sum2": [m[i].sum2 for i in range(n)],
            "win": [m[i].win for i in range(n)],
            "cat": [[m[i].cat[j] for j in range(N_CAT)] for i in range(n)],
            "worlds": self.S.worlds, "weight": self.S.weight,
            "p_sum": [m[i].p_sum for i in range(n)],
            "p_cross": [[x[i * n + j].margin for j in range(n)] for i in range(n)],
            "p_cat": [[m[i].p_cat[j] for j in range(N_CAT)] for i in range(n)],
            "p_risk": [m[i].p_risk for i in range(n)],
            "p_win": [m[i].p_win for i in range(n)],
            "p_wcross": [[x[i * n + j].win for j in range(n)] for i in range(n)],
        }
