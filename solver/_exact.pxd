# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# Exact endgames (2 players; with 4, the last round's best response to the
# program): every world of the last round or two solved by
# alpha-beta with a transposition table, and averaged; the legal moves, the
# leaves' values and the hand's last two and three plays through memos, on a
# compact state (XState).

from cirulla.solver._core cimport N_CAT, Move, TableInfo, u64
from cirulla.solver._search cimport Search

cdef enum:
    XCAP = 512                  # moves per node
    XDEPTH = 48                 # plies at most: Search.buf holds XCAP moves per ply
    MEMO_MOVES = 3              # card plays a MoveList holds (more: from gen_moves each time)
    DECL_MOVES = 8              # the moves a DeclList holds (more: from gen_moves each time)
    TAIL_LINES = 4              # the lines a Tail holds (more: searched as they come)
    TRI_KIDS = 4                # the moves a Tri holds at its node
    TRI_NODES = 6               # the first moves of its tails (in all)
    TRI_LINES = 5               # the lines a Tri holds (in all; a Tri is 128 bytes)
    DUO_NODES = 3               # the other's moves a Duo holds
    DUO_LINES = 3               # the lines a Duo holds (in all; a Duo is 64 bytes)
    SKEL_MOVES = 8              # the moves a SkelNode holds (more: searched as they come)
    SKEL_NODES = 1024           # the nodes of the first round's skeleton (352 bytes each, a few touched)
    SKEL_ROOTS = 16             # the root moves it holds

cdef struct Leaf:
    int obj                     # the objective for the asking side
    int margin
    signed char cats[N_CAT]     # margin by category
    signed char tt              # (in the table: TTEntry's flag, in the Leaf's room)
    float win

cdef struct XState:
    # the compact 2-player state the memoized search plays on (a State's
    # fields that play changes, 64 bytes against the State's ~300: copied per
    # node); the rest (dealer, stock, the other capture values) stays in the
    # world's State (Solve.full), which the core's functions read it with
    u64 hand[2]
    u64 pile[2]
    u64 table
    short scope[2]              # (short: room for fresh in 64 bytes)
    short decl[2]
    signed char turn
    signed char last_capturer
    signed char round
    signed char round_cards
    signed char declared
    signed char phase
    signed char stock_pos
    unsigned char mval          # the matta's capture value (0 without one)
    unsigned char fresh         # bit per seat: no card played this round (all its cards in hand)

cdef struct TTEntry:
    # 32 bytes: two a cache line (the table on cache lines)
    u64 key                     # 0: empty
    Leaf leaf                   # the line's leaf; leaf.obj is the value (or bound), leaf.tt the flag

cdef struct Hint:
    u64 key                     # a state before the last deal, the stock left out
    Move best                   # the best move found there in the last world searched

cdef struct MoveList:
    # gen_moves's card plays for a mover's hand and a table (with the flags
    # that change them or their greedy order), in its order: card << 40 | take
    u64 hand                    # the hand | the flags (see moves_of) | bit 63; 0: empty
    u64 table
    u64 moves[MEMO_MOVES]
    int n
    int greedy                  # greedy_index among them

cdef struct DeclList:
    # gen_moves's moves where the move memo cannot keep them (declarations
    # among them, a long table): by the move memo's key, with their greedy
    # index (256 bytes)
    u64 hand                    # MoveList.hand; 0: empty
    u64 table
    int n
    int greedy
    Move moves[DECL_MOVES]
    u64 spare[5]

cdef struct LeafEntry:
    # a finished hand's leaf by what it depends on: the piles (side 0's, all
    # the other cards side 1's), scope and declarations (32 bytes)
    u64 key                     # leaf_key's; 0: empty
    Leaf leaf

cdef struct TailLine:
    u64 pile0                   # the cards each side's pile gains on the line
    u64 pile1
    unsigned int marks          # the scope gained by side 0, 1, the declaration points by 0, 1: 8 bits each

cdef struct Tail:
    # the hand's last two plays (one card in each hand) by all they depend on
    # but the piles, scope and declarations, which no play reads: the lines in
    # the search's order, by what they add to those (tail_of, tail_replay)
    u64 hand0                   # | the flags (tail_of) | bit 63; 0: empty
    u64 hand1
    u64 table
    unsigned char n1            # the first player's moves
    unsigned char turn2         # the second player's seat
    unsigned char n2[TAIL_LINES]    # the second player's moves after each
    TailLine lines[TAIL_LINES]

cdef struct TriLine:
    # a Tri's line by what it adds to the piles and the scope (no declaration
    # comes after a card played in the round), played out as if no one had
    # captured before the tri (the key leaves the last capturer out)
    u64 a                       # side 0's cards | side 0's scope << 40 | side 1's << 48
    u64 b                       # side 1's cards

cdef struct Tri:
    # the hand's last three plays (two cards in the mover's hand, one in the
    # other's), like a Tail: the tails of the mover's moves in the search's
    # order, their lines by what they add to the piles, scope and declarations.
    # 128 bytes, two cache lines: a flat tri of two lines (most) is read from
    # the first alone
    u64 hand0                   # | the flags (tri_of) | bit 63; 0: empty
    u64 hand1
    u64 table
    unsigned char n3            # the mover's moves; 0: none kept (searched as they come)
    unsigned char flat          # 1: each tail one line (n1 = n2 = 1), line k the move k's
    unsigned char lru           # (the pair's first entry: which of the two served last)
    unsigned char spare[5]
    TriLine lines[TRI_LINES]
    unsigned char n1[TRI_KIDS]      # the first moves of each move's tail (Tail.n1)
    unsigned char ls[TRI_KIDS]      # the line each move's tail starts at
    unsigned char n2[TRI_NODES]     # the last moves after each of those (Tail.n2), in order
    unsigned char spare2[2]

cdef struct DuoLine:
    u64 m                       # the mover's cards | the other's sweep << 40
    u64 o                       # the other's cards

cdef struct Duo:
    # a tri's last two plies (tri_direct), the other's one card and the
    # mover's last on a table, by all they depend on (duo_of): their lines
    # in the search's order by what they add to the piles and the scope,
    # played out as if no one had captured before them
    u64 key                     # duo_of's; 0: empty
    unsigned char n1            # the other's moves
    unsigned char n2[DUO_NODES]  # the mover's last moves after each
    unsigned char spare[4]
    DuoLine lines[DUO_LINES]

cdef struct SkelNode:
    # a position of the first round (the stock not dealt) as xalphabeta's loop
    # meets it, with all it computes there that the last deal does not change:
    # the worlds of one opponent holding share it (skel_ab)
    XState s
    u64 pre                     # xstate_pre(s)
    short kids[SKEL_MOVES]      # the node after each move; -1: not built yet
    signed char n               # the moves; 0: none kept (xalphabeta searches it)
    signed char g               # greedy_index among them
    signed char left            # the cards in the hands
    signed char deal            # 1: the round played out (xdeal, then the last round)
    signed char packed          # 1: the moves are card plays, in moves; 0: in mv (declarations)
    u64 moves[SKEL_MOVES]       # the card plays, packed, as xmoves_of gives them
    Move mv[SKEL_MOVES]         # or the moves with declarations

cdef struct Skel:
    # the first round's positions of the root moves' worlds of one holding
    SkelNode* nodes
    int used
    int roots[SKEL_ROOTS]       # each root move's node; -1: none yet
    int risk[SKEL_ROOTS]        # can_sweep_next there; -1: not known yet

cdef struct Tables:
    # the solver's memory, kept across the worlds and the calls of one search
    TTEntry* tt                 # the transposition table (in tt_mem)
    void* tt_mem
    Hint* hints                 # the move-ordering hints across the splits of the last deal
    MoveList* moves             # the legal moves by (hand, table), with their greedy order
    LeafEntry* leaves           # the leaves by piles, scope and declarations (in leaves_mem)
    void* leaves_mem
    Tail* tails                 # the last two plays by hands and table (in tails_mem)
    void* tails_mem
    Tri* tris                   # the last three plays by hands and table (in tris_mem)
    void* tris_mem
    Duo* duos                   # a tri's last two plies by their cards and table (in duos_mem)
    void* duos_mem
    TableInfo* tables           # gen_plays_2p's cache of tables (in tables_mem)
    void* tables_mem
    DeclList* decls             # the moves with declarations by (hand, table) (in decls_mem)
    void* decls_mem
    Skel skel                   # the first round's skeleton (its nodes in skel_mem)
    void* skel_mem

cdef int tables_init(Tables* x) noexcept nogil
cdef void tables_free(Tables* x) noexcept nogil
cdef long exact_worlds(Search* S, Tables* x, int part, int parts, double deadline, int respond) noexcept nogil
cdef int last_round_vs_rollout_player(Search* S, double program, double* out) noexcept nogil
