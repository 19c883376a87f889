/* yardstick.c: random playouts of 2-player classic Cirulla in plain C.
 *
 * A yardstick for the Cython core (solver/_core.pyx): the same game as the
 * core's bench_playouts(rules, n, seed, greedy=False) under the classic rules
 * for two players (docs/rules.md; bench/bench_core.py's CLASSIC_2P), written
 * the way one would write a fast, simple playout for this one rule set, with
 * no switches for variants. bench/bench_core.py compiles it with the flags
 * the core is compiled with and prints the core's speed as a ratio to it.
 *
 * It plays the core's random policy move for move: the same random numbers
 * (splitmix64, a multiply-shift draw below n), the same shuffle (Fisher-Yates
 * from the top), the same deal order, and the legal moves in the core's order
 * (declarations, then card by card, lowest card first, each card's captures in
 * depth-first order over the table sorted by capture value, then its drop), so
 * for the same seed and number of hands its checksum is bench_playouts's.
 *
 * Usage: yardstick N SEED [stats]
 * Prints "hands N" and "checksum X" (the sum of side 0's points over the
 * hands, as bench_playouts returns it); with "stats", one line per statistic:
 * its name, sum and sum of squares over the hands, and its mean per hand.
 * C99 and one GCC/Clang builtin (__builtin_ctzll, as the core); no dependencies.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t u64;

enum {
    N_CARDS = 40,       /* card = suit * 10 + rank; suits D H C S, ranks A 2 3 4 5 6 7 J Q K */
    MATTA = 16,         /* 7H (R-MATTA) */
    SETTEBELLO = 6,     /* 7D */
    ROUNDS = 6,         /* 36 cards, 3 each to 2 players a round (R-DEAL) */
    MAX_MOVES = 4096    /* the core's playout buffer: more moves are cut to this many */
};

#define DIAMONDS 0x3FFULL
#define BIT(c) ((u64)1 << (c))

/* R-PRIM, by rank */
static const int PRIM[10] = {16, 12, 13, 14, 15, 18, 21, 10, 10, 10};

/* --- random numbers: splitmix64, as the core --- */
typedef struct { u64 s; } Rng;

static inline u64 rng_next(Rng *r)
{
    u64 z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline int rng_below(Rng *r, int n)     /* uniform in 0..n-1 */
{
    return (int)(((rng_next(r) >> 32) * (u64)n) >> 32);
}

static inline int lowest(u64 x) { return __builtin_ctzll(x); }

static inline int popcount(u64 x)
{
    /* SWAR: the project's default x86-64 flags have no POPCNT instruction */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
}

/* --- the game --- */
typedef struct {
    u64 take;           /* captured cards; a declaration's triple */
    int8_t card;        /* card played, or -1 for a declaration */
    int8_t rank;        /* rank the matta is named (0..9), or -1 */
    int8_t points;      /* a declaration's points */
} Move;

typedef struct {
    u64 hand[2], pile[2], table;
    int8_t stock[N_CARDS];
    uint8_t cval[N_CARDS];      /* capture value (R-VALUE); the matta's may be named */
    int scope[2], decl[2];
    int last;                   /* seat that captured last, or -1 (R-LEFTOVER) */
    int dealer_bonus;           /* scope the dealer took at the deal */
    int voids;                  /* deals gone a monte */
    int moves, declarations;
} Game;

static void shuffle(int8_t *a, int n, Rng *rng)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rng_below(rng, i + 1);
        int8_t t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

/* R-DEALER-BUONA: the scope the dealer takes for these table cards */
static int dealer_bonus(u64 table)
{
    int total = 0;
    for (u64 t = table; t; t &= t - 1)
        total += lowest(t) % 10 + 1;
    if (table & BIT(MATTA)) {       /* the matta may count 1..10 */
        int other = total - 7;
        if (30 - other >= 1 && 30 - other <= 10) return 2;
        if (15 - other >= 1 && 15 - other <= 10) return 1;
        return 0;
    }
    return total == 30 ? 2 : total == 15 ? 1 : 0;
}

/* Deal round `round`: 3 cards to each player from the seat after the dealer,
   then (first round) 4 to the table; a deal with two aces on the table is
   void (R-MONTE): reshuffle and deal again. */
static void deal(Game *g, int round, int dealer, Rng *rng)
{
    int first = dealer ^ 1;
    for (;;) {
        const int8_t *s = g->stock + (round ? 6 * round + 4 : 0);   /* the table's 4 after round 0's */
        g->hand[first] = BIT(s[0]) | BIT(s[1]) | BIT(s[2]);
        g->hand[dealer] = BIT(s[3]) | BIT(s[4]) | BIT(s[5]);
        if (round > 0)
            return;
        g->table = BIT(s[6]) | BIT(s[7]) | BIT(s[8]) | BIT(s[9]);
        if ((s[6] % 10 == 0) + (s[7] % 10 == 0) + (s[8] % 10 == 0) + (s[9] % 10 == 0) < 2)
            break;
        g->voids++;
        shuffle(g->stock, N_CARDS, rng);
    }
    int b = dealer_bonus(g->table);
    if (b) {
        g->pile[dealer] |= g->table;
        g->table = 0;
        g->scope[dealer] += b;
        g->dealer_bonus = b;
        g->last = dealer;
    }
}

/* Points of a declared triple with these capture values (R-BUONA3, R-DECINO,
   R-DECL-ONE: the better one). */
static inline int triple_points(int v0, int v1, int v2)
{
    if (v0 == v1 && v1 == v2) return 10;
    return v0 + v1 + v2 <= 9 ? 3 : 0;
}

static inline int add_move(Move *out, int n, u64 take, int card, int rank, int points)
{
    if (n < MAX_MOVES) {
        out[n].take = take; out[n].card = (int8_t)card;
        out[n].rank = (int8_t)rank; out[n].points = (int8_t)points;
    }
    return n + 1;
}

/* The declarations of a 3-card holding (R-DECL-*): as it is, then the matta
   named each other rank (R-MATTA-CHOICE). */
static int declarations(u64 h, Move *out, int n)
{
    int v[3], k = 0, mi = -1, pts;
    for (u64 t = h; t; t &= t - 1, k++) {
        int c = lowest(t);
        if (c == MATTA) mi = k;
        v[k] = c % 10 + 1;
    }
    if ((pts = triple_points(v[0], v[1], v[2])))
        n = add_move(out, n, h, -1, -1, pts);
    if (mi >= 0) {
        for (int rank = 0; rank < 10; rank++) {
            if (rank == MATTA % 10) continue;   /* named as itself = not named */
            v[mi] = rank + 1;
            if ((pts = triple_points(v[0], v[1], v[2])))
                n = add_move(out, n, h, -1, rank, pts);
        }
    }
    return n;
}

/* The table's subsets that add up to 14 or less, found once per move and
   listed by sum: a card of value v takes a set adding up to v (R-SIMPLE) or
   to 15 - v (R-FIFTEEN). Found depth-first over the table sorted by capture
   value, so each sum's list is in the order of the core's search. */
enum { MAX_SUBSETS = 28700 };   /* subsets adding up to 14 or less of all 40 cards */

typedef struct {
    int nt, nsub;
    int8_t tc[N_CARDS];         /* table cards sorted by capture value, then card */
    uint8_t tv[N_CARDS];
    int head[15], tail[15];     /* by sum: first and last subset, or -1 */
    int next[MAX_SUBSETS];      /* the next subset of the same sum, or -1 */
    u64 set[MAX_SUBSETS];
} Subsets;

static void find_subsets(Subsets *t, int i, int sum, u64 cards)
{
    for (; i < t->nt; i++) {
        int s = sum + t->tv[i];
        if (s > 14) break;
        u64 x = cards | BIT(t->tc[i]);
        int k = t->nsub++;
        t->set[k] = x;
        t->next[k] = -1;
        if (t->head[s] < 0) t->head[s] = k; else t->next[t->tail[s]] = k;
        t->tail[s] = k;
        find_subsets(t, i + 1, s, x);
    }
}

static inline int add_sets(Move *out, int n, const Subsets *t, int sum, int card)
{
    for (int k = t->head[sum]; k >= 0; k = t->next[k])
        n = add_move(out, n, t->set[k], card, -1, 0);
    return n;
}

/* The legal moves of a holding h: the declarations if allowed, then each
   card's captures (it must capture if it can, R-MUST) or its drop. */
static int gen_moves(const Game *g, u64 h, int decl_ok, Move *out, Subsets *t)
{
    int n = decl_ok ? declarations(h, out, 0) : 0;
    u64 table = g->table;
    if (!table) {
        for (; h; h &= h - 1)
            n = add_move(out, n, 0, lowest(h), -1, 0);
        return n;
    }
    t->nt = 0;
    for (u64 x = table; x; x &= x - 1) {        /* insertion sort, stable */
        int c = lowest(x), v = g->cval[c], i = t->nt++;
        for (; i > 0 && t->tv[i - 1] > v; i--) {
            t->tc[i] = t->tc[i - 1]; t->tv[i] = t->tv[i - 1];
        }
        t->tc[i] = (int8_t)c; t->tv[i] = (uint8_t)v;
    }
    t->nsub = 0;
    for (int s = 0; s < 15; s++) t->head[s] = -1;
    find_subsets(t, 0, 0, 0);
    for (; h; h &= h - 1) {
        int c = lowest(h), v = g->cval[c], before = n;
        if (v == 1)     /* R-ACE: the table, or with an ace there, an ace (R-ACE-ACE) */
            n = t->head[1] < 0 ? add_move(out, n, table, c, -1, 0) : add_sets(out, n, t, 1, c);
        else
            n = add_sets(out, add_sets(out, n, t, v, c), t, 15 - v, c);
        if (n == before)
            n = add_move(out, n, 0, c, -1, 0);
    }
    return n;
}

/* One hand from a fresh shuffle, random moves; the points by seat and category. */
enum { C_SCOPE, C_DECL, C_CARDS, C_DIAMONDS, C_SETTEBELLO, C_PRIMIERA, C_GRANDE, C_PICCOLA, N_CAT };

static void play_hand(Game *g, int dealer, Rng *rng, Move *moves, Subsets *subsets)
{
    memset(g, 0, sizeof *g);
    for (int c = 0; c < N_CARDS; c++) {
        g->stock[c] = (int8_t)c;
        g->cval[c] = (uint8_t)(c % 10 + 1);
    }
    g->last = -1;
    shuffle(g->stock, N_CARDS, rng);
    for (int round = 0; round < ROUNDS; round++) {
        deal(g, round, dealer, rng);
        for (int t = 0; t < 6; t++) {
            int seat = (dealer + 1 + t) & 1;
            int decl_ok = t < 2;                /* R-DECL-WHEN: the seat's first turn */
            for (;;) {
                int n = gen_moves(g, g->hand[seat], decl_ok, moves, subsets);
                if (n > MAX_MOVES) n = MAX_MOVES;
                const Move *m = &moves[rng_below(rng, n)];
                g->moves++;
                if (m->card >= 0) {
                    u64 b = BIT(m->card);
                    g->hand[seat] &= ~b;
                    if (m->take) {
                        g->table &= ~m->take;
                        g->pile[seat] |= m->take | b;
                        g->last = seat;
                        /* R-SCOPA, not on the last card of the hand */
                        if (!g->table && (round < ROUNDS - 1 || t < 5))
                            g->scope[seat]++;
                    } else {
                        g->table |= b;
                    }
                    break;
                }
                g->decl[seat] += m->points;     /* a declaration, then a card */
                g->declarations++;
                if (m->rank >= 0)
                    g->cval[MATTA] = (uint8_t)(m->rank + 1);
                decl_ok = 0;
            }
        }
    }
    if (g->table && g->last >= 0)               /* R-LEFTOVER */
        g->pile[g->last] |= g->table;
}

static int prim_of(u64 pile)
{
    int total = 0;
    for (int suit = 0; suit < 4; suit++) {
        int best = 0;
        for (u64 s = (pile >> (10 * suit)) & 0x3FF; s; s &= s - 1)
            if (PRIM[lowest(s)] > best) best = PRIM[lowest(s)];
        total += best;
    }
    return total;
}

static void score(const Game *g, int out[2][N_CAT])
{
    int cards[2], dia[2], prim[2];
    memset(out, 0, sizeof(int) * 2 * N_CAT);
    for (int k = 0; k < 2; k++) {
        u64 p = g->pile[k], d = p & DIAMONDS;
        out[k][C_SCOPE] = g->scope[k];
        out[k][C_DECL] = g->decl[k];
        cards[k] = popcount(p);
        dia[k] = popcount(d);
        prim[k] = prim_of(p);
        out[k][C_SETTEBELLO] = (int)(d >> SETTEBELLO & 1);
        if ((d & 0x380) == 0x380) out[k][C_GRANDE] = 5;        /* J Q K */
        if ((d & 0x7) == 0x7) {                                 /* A 2 3, then 4 5 6 */
            int pts = 3;
            for (int r = 3; r < 6 && (d >> r & 1); r++) pts++;
            out[k][C_PICCOLA] = pts;
        }
    }
    /* most cards, most diamonds, best primiera: 1 point, none on a tie */
    if (cards[0] != cards[1]) out[cards[1] > cards[0]][C_CARDS] = 1;
    if (dia[0] != dia[1]) out[dia[1] > dia[0]][C_DIAMONDS] = 1;
    if (prim[0] != prim[1]) out[prim[1] > prim[0]][C_PRIMIERA] = 1;
}

/* --- statistics, to check that this is the core's game --- */
static const char *const CAT_NAMES[N_CAT] = {
    "scope", "declarations", "cards", "diamonds", "settebello", "primiera", "grande", "piccola",
};
enum {
    S_ROLE = 0,                         /* N_CAT + 2 per role: dealer's side, then the other */
    S_PER_ROLE = N_CAT + 2,             /* ... + dealer_bonus, total */
    S_MOVES = 2 * S_PER_ROLE, S_DECLARATIONS, S_SWEEPS, S_VOIDS,
    N_STATS
};

static void add_stat(long long sum[], long long sq[], int k, long long x)
{
    sum[k] += x;
    sq[k] += x * x;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s N SEED [stats]\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[1], NULL, 10);
    Rng rng = {strtoull(argv[2], NULL, 10)};
    int stats = argc > 3 && strcmp(argv[3], "stats") == 0;
    Move *moves = malloc(MAX_MOVES * sizeof(Move));
    Subsets *subsets = malloc(sizeof(Subsets));
    if (!moves || !subsets) return 1;
    long long checksum = 0, sum[N_STATS] = {0}, sq[N_STATS] = {0};
    Game g;
    int pts[2][N_CAT];
    for (long i = 0; i < n; i++) {
        int dealer = (int)(i % 2);
        play_hand(&g, dealer, &rng, moves, subsets);
        score(&g, pts);
        for (int c = 0; c < N_CAT; c++)
            checksum += pts[0][c];
        if (!stats)
            continue;
        for (int role = 0; role < 2; role++) {
            int side = role ? dealer ^ 1 : dealer, total = 0, base = S_ROLE + role * S_PER_ROLE;
            for (int c = 0; c < N_CAT; c++) {
                add_stat(sum, sq, base + c, pts[side][c]);
                total += pts[side][c];
            }
            add_stat(sum, sq, base + N_CAT, role ? 0 : g.dealer_bonus);
            add_stat(sum, sq, base + N_CAT + 1, total);
        }
        add_stat(sum, sq, S_MOVES, g.moves);
        add_stat(sum, sq, S_DECLARATIONS, g.declarations);
        add_stat(sum, sq, S_SWEEPS, g.scope[0] + g.scope[1] - g.dealer_bonus);
        add_stat(sum, sq, S_VOIDS, g.voids);
    }
    printf("hands %ld\nchecksum %lld\n", n, checksum);
    if (stats) {
        printf("# statistic, sum and sum of squares over the hands, mean per hand\n");
        for (int k = 0; k < N_STATS; k++) {
            char name[64];
            if (k < S_MOVES) {
                int c = k % S_PER_ROLE;
                snprintf(name, sizeof name, "%s.%s", k < S_PER_ROLE ? "dealer" : "other",
                         c < N_CAT ? CAT_NAMES[c] : c == N_CAT ? "dealer_bonus" : "total");
            } else {
                static const char *const rest[] = {"moves", "declarations_made", "sweeps", "void_deals"};
                snprintf(name, sizeof name, "%s", rest[k - S_MOVES]);
            }
            printf("%s %lld %lld %.6f\n", name, sum[k], sq[k], n ? (double)sum[k] / (double)n : 0.0);
        }
    }
    free(moves);
    free(subsets);
    return 0;
}
