"""The search engine: determinization, SO-ISMCTS with a paired
phase, exact endgames, match equity, cancellation and reproducibility.

Rule ids refer to docs/rules.md.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import os
import random
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from cirulla.solver import Card, Match, Move, Rules, StateError, _core, _equity
from cirulla.solver.cards import cards_of, mask_of
from cirulla.solver.players import GreedyPlayer
from cirulla.solver.search import (
    FORCED_WORLDS,
    INFER_MIX,
    INFER_PROGRAM,
    INFER_T,
    CancelToken,
    Knowledge,
    SearchBudget,
    SearchMethod,
    SearchResult,
    Tuning,
    _search,
    equity_table,
    flat_monte_carlo,
    run_search,
    search,
    searcher_knobs,
    win_chance,
)
from cirulla.solver.view import SeatView
from rules_support import position

# the exact solver's positions here come from greedy self-play (conftest.exact_against_any_opponent)
pytestmark = pytest.mark.usefixtures("exact_against_any_opponent")

ALL = (1 << 40) - 1


def greedy_move(match: Match) -> Move:
    return match.greedy_move()


def advance_greedy(match: Match, plies: int) -> Match:
    for _ in range(plies):
        match.play(greedy_move(match))
    return match


def world_cards(w: dict, n_players: int, n_sides: int) -> list[int]:
    """Every card a sampled world places: hands, table, piles, undealt stock."""
    out = []
    for s in range(n_players):
        out += [c.index for c in cards_of(w["hand"][s])]
    out += [c.index for c in cards_of(w["table"])]
    for s in range(n_sides):
        out += [c.index for c in cards_of(w["pile"][s])]
    out += w["stock"][w["stock_pos"]:]
    return out


def samples(view, n: int, seed: int = 1) -> list[dict]:
    s = Knowledge.of(view).searcher(seed, _search.StopFlag())
    return [s.sample() for _ in range(n)]


# --- 1. determinization -------------------------------------------------------------

@pytest.mark.parametrize("preset,players,plies", [
    ("classic", 2, 0), ("classic", 2, 7), ("online", 3, 5), ("classic", 4, 9),
    ("cirullone", 2, 4), ("five", 5, 12), ("extended", 4, 20)])
def test_sampled_worlds_are_consistent(preset, players, plies):
    rules = Rules.preset(preset, players=players)
    match = advance_greedy(Match(rules, seed=11), plies)
    seat = match.to_move
    view = match.view(seat)
    truth = match.core.export()
    for w in samples(view, 200):
        cards = world_cards(w, players, rules.n_sides)
        assert sorted(cards) == list(range(40))                     # R-DECK: 40 cards, once each
        for s in range(players):
            assert bin(w["hand"][s]).count("1") == view.hand_sizes[s]
            assert w["public"][s] & ~w["hand"][s] == 0             # declared cards still held
        # the observer's own information is never altered
        assert w["hand"][seat] == truth["hand"][seat]
        for key in ("public", "pile", "table", "stock_pos", "cval", "scope", "decl", "dealer",
                    "turn", "last_capturer", "round", "round_cards", "declared", "phase"):
            assert w[key] == truth[key], key


def test_the_peeking_engine_sees_every_hand_and_draws_only_the_stock():
    """Knowledge.hands_seen (the arena's peek): every hand is the true one, the
    stock holds its true cards in a drawn order, and in the last two rounds
    the exact solver averages the 20 splits of the last deal only."""
    match = advance_greedy(Match(Rules(), seed=4), 5)
    truth = match.core.export()
    rest = truth["stock"][truth["stock_pos"]:]
    know = Knowledge.hands_seen(match, match.to_move)
    s = know.searcher(3, _search.StopFlag())
    orders = set()
    for _ in range(50):
        w = s.sample()
        assert w["hand"] == truth["hand"] and w["table"] == truth["table"]
        assert sorted(w["stock"][w["stock_pos"]:]) == sorted(rest)
        orders.add(tuple(w["stock"][w["stock_pos"]:]))
    assert len(orders) > 40                                 # drawn, not the true order
    end = _endgame(Rules(), 2, 6, 2)
    res = run_search(Knowledge.hands_seen(end, end.to_move), SearchBudget(seed=1))
    assert res.method == "exact" and res.info["worlds"] == 20


def test_view_to_state_matches_the_true_state():
    """Knowledge.of(view) is the true core state with the hidden cards taken out."""
    rules = Rules.preset("online", players=4)
    match = advance_greedy(Match(rules, seed=5), 14)
    seat = match.to_move
    k = Knowledge.of(match.view(seat))
    truth = match.core.export()
    for key, value in truth.items():
        if key in ("hand", "stock"):
            continue
        assert k.base[key] == value, key
    for s in range(rules.players):
        hidden = truth["hand"][s] & ~k.base["hand"][s]
        assert bin(hidden).count("1") == k.hidden[s]
        assert {c for c in range(40) if hidden >> c & 1} <= set(k.unseen)


def makes_buona(cards: list[Card], matta: Card | None) -> bool:
    """An independent oracle for a 3-card holding: R-BUONA3, R-DECINO, R-MATTA."""
    options = [range(1, 11) if c == matta else (c.value,) for c in cards]
    return any(sum(v) <= 9 or len(set(v)) == 1 for v in itertools.product(*options))


def _after_undeclared_play(rules: Rules) -> Match:
    """A match where the first player of a round played without declaring and the
    second player is to move."""
    for seed in range(200):
        match = Match(rules, seed=seed)
        first = match.to_move
        move = greedy_move(match)
        if move.is_declaration:
            continue
        match.play(move)
        if not match.view(match.to_move).declared[first]:
            return match
    raise AssertionError("no such deal")


def test_sampling_honours_the_mandatory_declaration_inference():
    """R-DECL-CHOICE: with declarations mandatory, a seat that played this round
    without declaring held no buona; with them optional nothing is inferred."""
    matta = Card.parse("7H")
    for decl, expect_some in (("mandatory", False), ("optional", True)):
        rules = Rules.preset("classic", declarations=decl)
        match = _after_undeclared_play(rules)
        seat = match.to_move
        opp = 1 - seat
        view = match.view(seat)
        played = list(view.played_this_round[opp])
        assert played and not view.declared[opp]
        buone = 0
        for w in samples(view, 400, seed=3):
            holding = cards_of(w["hand"][opp]) + played
            buone += makes_buona(holding, matta)
        if expect_some:
            assert buone > 0            # the inference is what removes them
        else:
            assert buone == 0


def test_sampling_weighs_worlds_by_the_plays_seen():
    """The opponent dropped a card with the settebello (7D) on the table: a
    holding with a 7, which would have taken it, explains that play badly, so
    the search draws such worlds far less often than uniform sampling does."""
    sevens = [Card.parse(x).index for x in ("7D", "7H", "7C", "7S")]
    settebello = Card.parse("7D")
    checked = 0
    for seed in range(300):
        match = Match(Rules(), seed=seed)
        while not match.is_over and match.hand_number == 0 and checked < 3:
            seat, view = match.to_move, match.view(match.to_move)
            opp = 1 - seat
            plays = view.round_plays()          # (history index, seat, table before, move)
            if (plays and plays[-1][1] == opp and not plays[-1][3].is_capture
                    and settebello in view.table and view.hidden_count(opp) and view.stock_size):
                share = []
                for infer_t in (0.0, INFER_T):
                    s = Knowledge.of(view).searcher(3, _search.StopFlag(), infer_t=infer_t)
                    worlds = [s.sample() for _ in range(1500)]
                    share.append(statistics.fmean(any(w["hand"][opp] >> c & 1 for c in sevens)
                                                  for w in worlds))
                if share[0] > 0.05:
                    assert share[1] < share[0] / 2, share
                    checked += 1
            match.play(greedy_move(match))
        if checked == 3:
            return
    raise AssertionError("no position with the settebello left on the table")


@pytest.mark.parametrize("players", [2, 4])
def test_a_seats_part_of_the_likelihood_is_kept_by_its_holding_alone(players):
    """The search keeps each seat's part of a world's likelihood by that seat's
    holding (Searcher.memo; how many cards the others hold is public, which
    cards does not enter it): a world that deals a seat a holding seen before,
    whatever the others hold, gets the likelihood computed afresh, to the bit."""
    rules = Rules.preset("classic", players=players)
    match = Match(rules, seed=5)
    while True:
        seat, view = match.to_move, match.view(match.to_move)
        played = {row[1] for row in view.round_plays()} - {seat}
        if len(played) == players - 1 and all(view.hidden_count(k) >= 2 for k in played):
            break
        match.play(greedy_move(match))
    knobs = searcher_knobs(rules)
    assert knobs["infer_t"] > 0
    s = Knowledge.of(view).searcher(5, _search.StopFlag(), **knobs)
    rnd = random.Random(1)
    values = set()
    for _ in range(150):
        w = s.sample()
        worlds = [list(w["hand"][:players])]
        if players > 2:
            # seat a's holding again, b and c with one hidden card exchanged
            a, b, c = rnd.sample(sorted(played), 3)
            hands = list(w["hand"][:players])
            x = rnd.choice([k.index for k in cards_of(hands[b] & ~w["public"][b])])
            y = rnd.choice([k.index for k in cards_of(hands[c] & ~w["public"][c])])
            hands[b] ^= 1 << x | 1 << y
            hands[c] ^= 1 << x | 1 << y
            worlds.append(hands)
        for hands in worlds:
            fresh = s.likelihood(hands, memo=False)
            assert s.likelihood(hands) == fresh
            assert s.likelihood(hands) == fresh     # (from the memo)
            values.add(fresh)
    assert len(values) > 10                         # the plays told the worlds apart


def test_has_buona_agrees_with_the_oracle():
    rules = Rules.preset("online")
    match = _after_undeclared_play(rules)
    s = Knowledge.of(match.view(match.to_move)).searcher(1, _search.StopFlag())
    rnd = random.Random(4)
    for _ in range(300):
        cards = rnd.sample(range(40), 3)
        assert s.has_buona(0, mask_of(Card(c) for c in cards)) == makes_buona(
            [Card(c) for c in cards], Card.parse("7H"))


# --- 2. ISMCTS and the reported figures ---------------------------------------------

def test_every_legal_move_is_ranked_best_first():
    match = advance_greedy(Match(Rules(), seed=2), 3)
    res = search(match.view(match.to_move), SearchBudget(iterations=4000, seed=1))
    assert res.method == "ismcts"
    assert {m.move for m in res.moves} == set(match.legal_moves)
    assert res.moves[0].move == res.best
    assert res.moves[0].diff_to_best == 0.0
    assert all(m.diff_to_best <= 1e-12 for m in res.moves)
    for m in res.moves:
        assert math.isclose(sum(m.categories.values()), m.expected_points, abs_tol=1e-9)
        assert 0.0 <= m.scopa_risk <= 1.0
        assert m.win_chance is not None and 0.0 <= m.win_chance <= 1.0
    assert not res.cut_short and res.iterations >= 3900


def test_a_forced_sweep_is_found():
    """Table 3C 4S: JH takes both, a scopa (R-FIFTEEN, R-SCOPA); the other cards cannot capture."""
    rules = Rules()
    match = position(rules, ["JH 2D 6C", "5C 5S 6S"], "3C 4S", turn=0, piles={1: "KS QC"})
    res = search(match.view(0), SearchBudget(iterations=6000, seed=2))
    assert str(res.best) == "JH x 3C 4S"
    best = res.moves[0]
    # a scopa now: about one more scopa than after any other move (the margin by category)
    assert best.categories["scope"] > max(m.categories["scope"] for m in res.moves[1:]) + 0.7
    assert res.moves[1].diff_to_best < -3 * res.moves[1].diff_to_best_stderr


def test_the_settebello_capture_is_preferred():
    """Table 7D KS: 7C takes the settebello (R-SC-SETTEBELLO)."""
    rules = Rules()
    match = position(rules, ["7C 4H KH", "2C 3S 6S"], "7D QS", turn=0, piles={1: "JS JC"})
    res = search(match.view(0), SearchBudget(iterations=6000, seed=3))
    assert str(res.best) == "7C x 7D"
    assert res.moves[0].categories["settebello"] > 0.5


def test_same_seed_same_answer_and_seeds_differ():
    match = advance_greedy(Match(Rules(), seed=8), 5)
    view = match.view(match.to_move)
    a = search(view, SearchBudget(iterations=3000, seed=7))
    b = search(view, SearchBudget(iterations=3000, seed=7))
    c = search(view, SearchBudget(iterations=3000, seed=8))
    assert a.moves == b.moves and a.best == b.best
    assert a.moves != c.moves


def test_reported_standard_error_matches_the_spread_across_seeds():
    """The honesty check of the standard errors: over independent seeds, the spread of each
    move's expected (and of its difference to a fixed other move) matches the
    standard error the search reports."""
    match = advance_greedy(Match(Rules(), seed=21), 4)
    view = match.view(match.to_move)
    runs = [search(view, SearchBudget(iterations=6000, seed=s)) for s in range(24)]
    by_move = {}
    for r in runs:
        for m in r.moves:
            by_move.setdefault(m.move, []).append(m)
    for move, stats in by_move.items():
        spread = statistics.stdev(m.expected_points for m in stats)
        reported = statistics.fmean(m.expected_points_stderr for m in stats)
        assert 0.6 < spread / reported < 1.6, (move, spread, reported)


def test_the_root_floor_keeps_every_root_move_in_the_tree():
    """A root move whose first playouts come out badly can starve under UCB (a
    hand's spread dwarfs its bonus), and the paired phase then has no tree to
    follow after it: root_floor gives each root move its share of the iterations."""
    starved = positions = 0
    for seed, plies in itertools.product(range(12), (3, 9, 15)):
        m = advance_greedy(Match(Rules(), seed=seed), plies)
        if m.phase != "play" or len(m.legal_moves) < 2:
            continue
        know = Knowledge.of(m.view(m.to_move))
        share = {}
        for floor in (0.0, 0.25):
            s = know.searcher(seed, _search.StopFlag(), root_floor=floor)
            s.ismcts(3000, 0.0)
            visits = s.stats()["visits"]
            share[floor] = min(visits) * len(visits) / 3000
        assert share[0.25] >= 0.25 - 0.01, (seed, plies, share)
        starved += share[0.0] < 0.25
        positions += 1
    assert starved >= positions // 3, (starved, positions)     # without the floor, many do starve
    with pytest.raises(ValueError, match="root_floor"):
        know.searcher(1, _search.StopFlag(), root_floor=1.5)


def test_the_paired_phase_follows_the_tree_at_the_asking_sides_turns_only():
    """By default (+0.32 a hand against greedy, +0.33 against flat Monte
    Carlo in the arena) the others play the rollout policy with the cards each world
    gives them, not the tree's choice averaged over worlds."""
    match = advance_greedy(Match(Rules(hands=1), seed=8), 3)
    know = Knowledge.of(match.view(match.to_move))

    def figures(**knobs):
        return [(m.move, m.expected_points) for m in run_search(know, SearchBudget(iterations=3000, seed=2),
                                                                     Tuning(knobs=knobs)).moves]

    assert figures() == figures(follow_own=1) != figures(follow_own=0)


def test_with_4_players_the_partner_can_play_the_rollout_policy_too():
    """follow_own=2 (a knob, `docs/strength.md`): the asking seat alone follows the
    tree in the paired phase; with 2 players that is the asking side, so nothing changes."""
    def figures(match: Match, **knobs):
        know = Knowledge.of(match.view(match.to_move))
        return [(m.move, m.expected_points) for m in run_search(know, SearchBudget(iterations=3000, seed=2),
                                                                     Tuning(knobs=knobs)).moves]

    two = advance_greedy(Match(Rules(hands=1), seed=8), 3)
    four = advance_greedy(Match(Rules(players=4, hands=1), seed=8), 5)
    assert figures(two) == figures(two, follow_own=2)
    assert figures(four) == figures(four, follow_own=1) != figures(four, follow_own=2)
    with pytest.raises(ValueError, match="follow_own"):
        Knowledge.of(two.view(two.to_move)).searcher(1, _search.StopFlag(), follow_own=3)


def test_errors_name_the_problem():
    match = advance_greedy(Match(Rules(), seed=1), 1)
    other = 1 - match.to_move
    with pytest.raises(StateError, match="turn"):
        search(match.view(other), SearchBudget(iterations=100))
    with pytest.raises(StateError, match="iterations"):
        search(match.view(match.to_move), SearchBudget(iterations=0))
    with pytest.raises(StateError, match="threads"):
        search(match.view(match.to_move), SearchBudget(iterations=10, threads=0))


def test_one_legal_move_returns_at_once():
    """A forced move gets a short evaluation of FORCED_WORLDS worlds, not the
    budget: on any machine, however busy, it answers long before the budget."""
    match = _find(Rules(), 3, lambda m: len(m.legal_moves) == 1)
    view = match.view(match.to_move)
    res = search(view, SearchBudget(time_ms=60_000))
    assert res.method == "forced" and res.elapsed_ms < 30_000
    assert res.best == match.legal_moves[0] and 0 < res.moves[0].samples <= FORCED_WORLDS + 1


def test_a_focus_move_gets_its_share_of_the_tree():
    match = advance_greedy(Match(Rules(), seed=3), 3)
    know = Knowledge.of(match.view(match.to_move))
    s = know.searcher(1, _search.StopFlag())
    last = len(s.root_moves) - 1
    s.focus_on(last, 0.6)
    s.ismcts(3000, 0.0)
    assert s.stats()["visits"][last] >= 0.6 * 3000 - 1
    with pytest.raises(ValueError, match="root move"):
        s.focus_on(last + 1, 0.5)
    # through run_search: the focus move named as a Move
    move = match.legal_moves[-1]
    res = run_search(know, SearchBudget(iterations=4000, seed=1), Tuning(focus=move, focus_share=0.6))
    assert res.info["tree_iterations"] > 0 and move in [m.move for m in res.moves]


def test_a_forced_position_can_be_valued_like_any_other():
    """The analysis values every position: with solve_forced, one legal move gets
    the tree (or the exact solve) as any position would, not a few playouts."""
    match = _find(Rules(), 3, lambda m: len(m.legal_moves) == 1 and m.stock_size > 6)
    know = Knowledge.of(match.view(match.to_move))
    quick = run_search(know, SearchBudget(iterations=4000, seed=1))
    full = run_search(know, SearchBudget(iterations=4000, seed=1), Tuning(solve_forced=True))
    assert quick.method == "forced" and full.method == "ismcts" and full.info["tree_iterations"] > 0
    assert full.best == quick.best == match.legal_moves[0]


def test_cancel_stops_within_50ms():
    """A cancelled search returns within 50 ms of its own work (about 2 ms
    measured): the CPU time of the thread it runs in, from the cancel to its
    return, which a busy machine does not stretch as it stretches the wall
    clock."""
    match = Match(Rules.preset("classic", players=3), seed=4)
    # the tables built once per rules (hand points, equity) before any search: not timed here
    search(match.view(match.to_move), SearchBudget(iterations=100))
    for _ in range(3):
        token = CancelToken()
        out = {}

        def run(out: dict = out, token: CancelToken = token) -> None:
            out["res"] = search(match.view(match.to_move), SearchBudget(time_ms=20_000, cancel=token))
            out["cpu"] = time.thread_time()

        th = threading.Thread(target=run)
        th.start()
        time.sleep(0.15)
        cancelled = time.clock_gettime(time.pthread_getcpuclockid(th.ident))
        token.cancel()
        th.join(10)
        assert not th.is_alive() and token.cancelled
        assert out["res"].cut_short and out["res"].iterations > 0
        assert out["cpu"] - cancelled < 0.05, f"{(out['cpu'] - cancelled) * 1000:.0f} ms of CPU after the cancel"


def test_a_search_stopped_in_its_tree_keeps_the_trees_figures():
    """Cancelled while it builds its tree, a search reports the tree's figures
    (what its progress reports showed), not a paired phase of a handful of
    worlds whose standard errors would swamp them."""
    match = Match(Rules(), seed=4)
    view = match.view(match.to_move)
    search(view, SearchBudget(iterations=100))                # the per-rules tables, before timing
    token = CancelToken()
    threading.Timer(0.2, token.cancel).start()
    res = search(view, SearchBudget(time_ms=20_000, cancel=token))
    assert res.cut_short and res.info["worlds"] == 0
    assert sum(m.samples for m in res.moves) == res.info["tree_iterations"] > 1_000


def test_time_budget_and_progress_reports():
    match = Match(Rules.preset("classic", players=4), seed=6)
    reports: list[SearchResult] = []
    res = search(match.view(match.to_move), SearchBudget(time_ms=300, on_progress=reports.append,
                                                           progress_interval_ms=20, threads=2))
    assert 250 < res.elapsed_ms < 30_000       # the 300 ms budget ends it (a busy machine only delays the end)
    assert res.threads == 2 and not res.cut_short
    assert len(reports) >= 3
    assert reports[-1].iterations <= res.iterations
    assert {m.move for m in reports[0].moves} == {m.move for m in res.moves}


def test_threads_add_their_iterations():
    match = advance_greedy(Match(Rules(), seed=9), 2)
    view = match.view(match.to_move)
    one = search(view, SearchBudget(iterations=4000, seed=1))
    two = search(view, SearchBudget(iterations=4000, seed=1, threads=2))
    assert abs(one.iterations - two.iterations) < 100
    assert one.best == two.best or abs(one.moves[0].expected_points - two.moves[0].expected_points) < 1.0


def test_flat_monte_carlo_ranks_every_move():
    match = advance_greedy(Match(Rules(), seed=12), 3)
    res = flat_monte_carlo(match.view(match.to_move), SearchBudget(iterations=3000, seed=1))
    assert res.method == "flat" and res.info["nodes"] == 1 + len(res.moves)
    assert {m.move for m in res.moves} == set(match.legal_moves)


@pytest.mark.parametrize("preset,players", [
    ("classic", 3), ("online", 4), ("relaxed", 2), ("extended", 2), ("cirullone", 2),
    ("five", 5)])
def test_any_preset_and_player_count(preset, players):
    rules = Rules.preset(preset, players=players, grande_in_hand=True, buona_stack=True,
                         re_bello=True, grande_long=True)
    match = Match(rules, seed=3)
    for _ in range(30):
        if match.is_over:
            break
        seat = match.to_move
        res = search(match.view(seat), SearchBudget(iterations=400, seed=1))
        assert {m.move for m in res.moves} == set(match.legal_moves)
        assert (res.moves[0].win_chance is None) == (rules.n_sides != 2)
        match.play(res.best)


def test_search_after_declaring():
    """R-DECL-WHEN: the declarer keeps its cards, now public, and plays on."""
    match = position(Rules(), ["2D 3C 4S", "5C 5S 6S"], "KC QS", turn=0, piles={1: "JS JC"})
    match.play("declare 2D 3C 4S")
    res = search(match.view(0), SearchBudget(iterations=500))
    assert {m.move for m in res.moves} == set(match.legal_moves)


# --- 3. exact endgames (2 players) ------------------------------------------------------

def hand_margin(core, side: int) -> int:
    """Side `side`'s points of the finished hand less the other side's."""
    pts = [sum(row) for row in core.score()]
    return pts[side] - pts[1 - side]


def brute_value(core, me: int) -> int:
    """The hand margin of side `me` under minimax, walking every move in Python
    (through the core's moves; deals come from the world's stock)."""
    if core.phase == _core.PHASE_OVER:
        return hand_margin(core, me)
    if core.phase == _core.PHASE_DEAL:
        core = core.copy()
        core.deal()
    values = []
    for mv in core.legal_moves():
        child = core.copy()
        child.apply(*mv)
        values.append(brute_value(child, me))
    return max(values) if core.turn == me else min(values)


PROGRAM_SLIP = 0.02     # _worlds.pyx: the greedy program's chance of a move at random


def brute_play_probs(fields: dict, rules: Rules, seat: int, table: int, holdings: list[int], played: tuple,
                     infer_t: float, among: int = -1) -> dict[str, float]:
    """The probability each kind of player gives `seat` playing `played` (a
    core move) at today's position `fields` with `table` and every seat holding
    `holdings` (card plays only), among the moves of the cards in `among`:
    greedy's best move but for a slip (program), the softmax of the greedy
    worth or of the learned score over infer_t."""
    f = dict(fields, table=table, turn=seat, declared=fields["declared"] | 1 << seat, hand=list(holdings))
    core = _core.CoreState.restore(rules.core, f)
    moves = core.legal_moves()
    out = {}
    for model, worths in (("greedy", core.greedy_worths(moves)), ("learned", core.learned_worths(moves))):
        worth = {m[:2]: w for m, w in zip(moves, worths, strict=True) if among >> m[0] & 1}
        top, mine = max(worth.values()), worth[played[:2]]
        out[model] = math.exp((mine - top) / infer_t) / sum(math.exp((w - top) / infer_t) for w in worth.values())
        if model == "greedy":
            out["program"] = (PROGRAM_SLIP / len(worth)
                              + (1 - PROGRAM_SLIP) * (mine == top) / list(worth.values()).count(top))
    return out


def brute_types(match: Match, opp: int, infer_t: float, mix: float, program: float) -> dict[str, float]:
    """The weight of each kind of player opp may be: the prior (program, then
    greedy and learned sharing the rest as 1 - mix to mix) times the
    probability each gives opp's card plays of the hand's finished rounds,
    where opp held at a play what it played from then on in that round; the
    position today's but for the table and the holdings, no declared cards,
    a stock still to come."""
    now = match.core.export()
    fields = dict(now, public=[0] * len(now["public"]), stock_pos=min(now["stock_pos"], 39))
    w = {"program": program, "greedy": (1 - program) * (1 - mix), "learned": (1 - program) * mix}
    for rows in match.view(1 - opp).finished_round_plays():
        after = [0] * len(now["hand"])
        for _, seat, table, move in reversed(rows):
            if seat == opp:
                holdings = list(after)
                holdings[opp] |= 1 << move.card.index
                probs = brute_play_probs(fields, match.rules, opp, table, holdings, move.to_core(), infer_t)
                w = {kind: x * probs[kind] for kind, x in w.items()}
            after[seat] |= 1 << move.card.index
    return w


def brute_likelihood(match: Match, opp: int, opp_cards: tuple[int, ...], infer_t: float,
                     mix: float = 0.0, program: float = 0.0) -> float:
    """The weight the inference from plays gives a world where opp's hidden
    cards are opp_cards: for each of opp's card plays this round, the position
    as the inference rebuilds it (today's state with the table before that
    play, each seat holding what it holds in the world plus what it played
    since), the probability of the play for each kind of player; the kinds'
    products mixed by brute_types' weights, over the same with each play's
    probability among the moves of the cards known then (see play_likelihood)."""
    if not infer_t:
        return 1.0
    now = match.core.export()
    true_hidden = match.core.hand(opp) & ~match.core.public(opp)
    sampled = mask_of(Card(c) for c in opp_cards)
    product = brute_types(match, opp, infer_t, mix, program)
    bound = dict(product)
    after = [0] * len(now["hand"])
    for _, seat, table, move in reversed(match.view(1 - opp).round_plays()):     # the latest first
        assert move.card is not None
        if seat == opp:
            holdings = [h | a for h, a in zip(now["hand"], after, strict=True)]
            holdings[opp] = (holdings[opp] & ~true_hidden | sampled) | 1 << move.card.index
            args = (now, match.rules, opp, table, holdings, move.to_core(), infer_t)
            probs, known = brute_play_probs(*args), brute_play_probs(*args, among=~sampled)
            product = {kind: x * probs[kind] for kind, x in product.items()}
            bound = {kind: x * known[kind] for kind, x in bound.items()}
        after[seat] |= 1 << move.card.index
    return sum(product.values()) / sum(bound.values())


def brute_expected(match: Match, seat: int, *, holds_no_buona: bool = False, infer_t: float = 0.0,
                   mix: float = INFER_MIX, program: float = INFER_PROGRAM,
                   value: Callable[[Any, int], int] = brute_value) -> dict[Move, float]:
    """Every world of the view (the opponent's hidden cards x the split of the
    stock between the two seats of the last deal), each solved by `value`
    (minimax, or against_greedy), weighted by brute_likelihood (uniformly
    with infer_t 0)."""
    view = match.view(seat)
    opp = 1 - seat
    unseen = [c.index for c in view.unseen()]
    fields = match.core.export()
    pos = fields["stock_pos"]
    ns = 40 - pos
    values: dict[tuple, list[tuple[float, int]]] = {}
    for opp_cards in itertools.combinations(unseen, view.hidden_count(opp)):
        if holds_no_buona and makes_buona([Card(c) for c in opp_cards] + list(view.played_this_round[opp]),
                                          match.rules.matta_card):
            continue                                    # R-DECL-CHOICE
        weight = brute_likelihood(match, opp, opp_cards, infer_t, mix, program)
        rest = [c for c in unseen if c not in opp_cards]
        for first in itertools.combinations(rest, ns // 2):
            world = dict(fields)
            world["hand"] = list(fields["hand"])
            world["hand"][opp] = mask_of(view.public[opp]) | mask_of(Card(c) for c in opp_cards)
            world["stock"] = fields["stock"][:pos] + list(first) + [c for c in rest if c not in first]
            core = _core.CoreState.restore(match.rules.core, world)
            for mv in core.legal_moves():
                child = core.copy()
                child.apply(*mv)
                values.setdefault(mv, []).append((weight, value(child, seat)))
    matta = match.rules.matta_card
    return {Move.from_core(mv, matta): sum(w * x for w, x in v) / sum(w for w, _ in v)
            for mv, v in values.items()}


def _find(rules: Rules, seed: int, ok) -> Match:
    """The first position of a greedy self-play match where ok(match) holds."""
    match = Match(rules, seed=seed)
    while not match.is_over:
        if ok(match):
            return match
        match.play(greedy_move(match))
    raise AssertionError("no such position")


def _endgame(rules: Rules, seed: int, stock: int, cards_in_hand: int) -> Match:
    return _find(rules, seed, lambda m: m.stock_size == stock and len(m.legal_moves) > 1
                 and len(m.hand(m.to_move)) == cards_in_hand)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_last_round_is_solved_exactly(seed):
    """An empty stock: the opponent holds exactly the unseen cards, one world."""
    match = _endgame(Rules(), seed, 0, 3)
    seat = match.to_move
    res = search(match.view(seat), SearchBudget(seed=1))
    assert res.method == "exact" and res.info["worlds"] == 1
    want = brute_expected(match, seat)
    assert {m.move: m.expected_points for m in res.moves} == pytest.approx(want, abs=1e-9)
    assert res.moves[0].expected_points == max(want.values())
    assert all(m.expected_points_stderr == 0 and m.diff_to_best_stderr == 0 for m in res.moves)


@pytest.mark.parametrize("seed", [4, 5])
def test_last_two_rounds_average_every_world(seed):
    """A stock of 6: every opponent holding x every split of the last deal,
    weighted by how well it explains the opponent's plays this round."""
    match = _endgame(Rules(), seed, 6, 2)
    seat = match.to_move
    res = search(match.view(seat), SearchBudget(seed=1))
    want = brute_expected(match, seat, infer_t=INFER_T)
    assert res.method == "exact"
    assert res.info["worlds"] == math.comb(len(match.view(seat).unseen()),
                                           match.view(seat).hidden_count(1 - seat)) * 20
    assert {m.move: m.expected_points for m in res.moves} == pytest.approx(want, abs=1e-9)
    two = search(match.view(seat), SearchBudget(seed=9, threads=2))       # weighted sums in another order
    assert [m.move for m in two.moves] == [m.move for m in res.moves]
    assert [m.expected_points for m in two.moves] == pytest.approx([m.expected_points for m in res.moves], abs=1e-9)


def against_greedy(core, me: int) -> int:
    """The hand margin of side `me` playing its best against an opponent who
    plays the greedy move (brute_value's walk, the other seat fallible)."""
    if core.phase == _core.PHASE_OVER:
        return hand_margin(core, me)
    if core.phase == _core.PHASE_DEAL:
        core = core.copy()
        core.deal()
    moves = core.legal_moves()
    if core.turn != me:
        child = core.copy()
        child.apply(*moves[core.greedy_choice(moves)])
        return against_greedy(child, me)
    values = []
    for mv in moves:
        child = core.copy()
        child.apply(*mv)
        values.append(against_greedy(child, me))
    return max(values)


ROLLOUT_EPS = 0.1       # the rollout policy's random moves (_core.EPS_MILLI_DEFAULT): flat Monte Carlo's


def rollout_expectation(core, me: int) -> float:
    """The margin of side `me` expected over every line of the rollout policy
    (greedy's move, or any at random one time in ten) on both sides."""
    if core.phase == _core.PHASE_OVER:
        return hand_margin(core, me)
    moves = core.legal_moves()
    g = core.greedy_choice(moves) if len(moves) > 1 else 0
    total = 0.0
    for i, mv in enumerate(moves):
        child = core.copy()
        child.apply(*mv)
        p = (ROLLOUT_EPS / len(moves) + (1 - ROLLOUT_EPS) * (i == g)) if len(moves) > 1 else 1.0
        total += p * rollout_expectation(child, me)
    return total


def against_rollout_player(core, me: int, program: float = 0.0) -> tuple[int, float]:
    """(the minimax margin, the margin against a player whose every move is
    greedy's with weight `program`, else the best by rollout_expectation) of
    side `me` in the last round, its own moves the best by minimax first, then
    against that player: brute_value's walk."""
    if core.phase == _core.PHASE_OVER:
        margin = hand_margin(core, me)
        return margin, float(margin)
    moves = core.legal_moves()
    kids = []
    for mv in moves:
        child = core.copy()
        child.apply(*mv)
        kids.append(child)
    values = [against_rollout_player(k, me, program) for k in kids]
    if len(moves) == 1:
        return values[0]
    if core.turn == me:
        best = max(v for v, _ in values)
        return best, max(a for v, a in values if v == best)
    theirs = min(range(len(kids)), key=lambda i: rollout_expectation(kids[i], me))    # its best, the first
    greedy = core.greedy_choice(moves)
    return min(v for v, _ in values), program * values[greedy][1] + (1 - program) * values[theirs][1]


def program_weight(view: SeatView) -> float:
    """The other seat's weight as the greedy program, as the search reads it."""
    know = Knowledge.of(view)
    return know.searcher(1, _search.StopFlag(), **searcher_knobs(view.rules)).type_weights[1 - view.seat][0]


@pytest.mark.parametrize("seed", [1, 6, 9, 13])
def test_equal_exact_moves_are_ordered_by_a_fallible_opponent(seed):
    """Minimax rates several last-round moves alike (a perfect opponent
    answers each as well); the engine recommends among them the one that does
    best against a real opponent: by default the other seat as the search
    reads it, the greedy program by its weight and else one who plays the
    last round by rollouts, as flat Monte Carlo does
    (Searcher.vs_rollout_player), and with `exact_rollout_player` off the
    rollouts' own opponent, here the greedy one (the first of the tied did
    worse in each of these positions)."""
    match = _endgame(Rules(), seed, 0, 3)
    seat = match.to_move
    program = program_weight(match.view(seat))
    worth, against = {}, {}
    for mv in match.core.legal_moves():
        child = match.core.copy()
        child.apply(*mv)
        move = Move.from_core(mv, match.rules.matta_card)
        worth[move] = against_greedy(child, seat)
        against[move] = against_rollout_player(child, seat, program)[1]
    res = search(match.view(seat), SearchBudget(seed=1))
    tied = [m.move for m in res.moves if m.expected_points == res.moves[0].expected_points]
    assert len(tied) > 1 and res.best in tied
    assert against[res.best] == max(against[m] for m in tied)
    assert [m.move for m in res.moves[:len(tied)]] == tied      # the equal moves lead the ranking
    by_rollouts = run_search(Knowledge.of(match.view(seat)), SearchBudget(seed=1), Tuning(exact_rollout_player=False))
    assert by_rollouts.best in tied
    assert worth[by_rollouts.best] == max(worth[m] for m in tied) > min(worth[m] for m in tied)


def _last_round_after_loose_play(seed: int) -> Match:
    """The last round's first decision, every move before it greedy's or at
    random by turns of a coin (an opponent that does not read as the program)."""
    match, coin = Match(Rules(), seed=seed), random.Random(seed)
    while not (match.stock_size == 0 and len(match.hand(match.to_move)) == 3):
        match.play(match.greedy_move() if coin.random() < 0.5 else coin.choice(match.legal_moves))
    return match


@pytest.mark.parametrize("seed", [132, 197])
def test_the_last_round_answers_a_player_who_plays_it_by_rollouts(seed):
    """Where the other seat does not read as the program, the engine's move
    among those minimax rates alike is the one a player who plays the round by
    rollouts answers worst (with its weight as the program, greedy's move
    beside), where the rollouts that ordered them before chose one it answers
    better (in these positions)."""
    match = _last_round_after_loose_play(seed)
    seat = match.to_move
    program = program_weight(match.view(seat))
    assert program < 0.5
    against = {}
    for mv in match.core.legal_moves():
        child = match.core.copy()
        child.apply(*mv)
        against[Move.from_core(mv, match.rules.matta_card)] = against_rollout_player(child, seat, program)[1]
    know = Knowledge.of(match.view(seat))
    res = run_search(know, SearchBudget(seed=1), Tuning())
    tied = [m.move for m in res.moves if m.expected_points == res.moves[0].expected_points]
    assert res.method == "exact" and res.best in tied
    assert against[res.best] == pytest.approx(max(against[m] for m in tied), abs=1e-9)
    before = run_search(know, SearchBudget(seed=1), Tuning(exact_rollout_player=False))
    assert before.best in tied and against[before.best] < against[res.best] - 1.0


def test_a_last_round_too_large_to_walk_falls_back_to_the_rollouts():
    """With optional captures and a large table the last round has too many
    lines to walk within a hint (it took 0.12 s here): vs_rollout_player gives
    no figure, and the search orders its equal moves by rollouts as before."""
    match, coin = Match(Rules.preset("relaxed").replace(hands=1), seed=991_120, dealer=0), random.Random(1120)
    while not (match.stock_size == 0 and len(match.legal_moves) > 20):
        match.play(coin.choice(match.legal_moves) if coin.random() < 0.8 else match.greedy_move())
    know = Knowledge.of(match.view(match.to_move))
    assert know.searcher(1, _search.StopFlag()).vs_rollout_player(0.3) is None
    res = run_search(know, SearchBudget(seed=1), Tuning())
    assert res.method == "exact" and {m.move for m in res.moves} == set(match.legal_moves)


@pytest.mark.parametrize("seed", [1, 2, 3, 6, 9, 13])
@pytest.mark.parametrize("program", [0.0, 0.7])
def test_the_last_round_against_a_rollout_player_is_its_brute_force(seed, program):
    """Searcher.vs_rollout_player: every root move's margin against a player
    who plays the last round by rollouts (or greedy's move by the program's
    weight), as a walk of every line in Python gives it; no figure where a
    stock remains, an error for a weight out of 0..1."""
    match = _endgame(Rules(), seed, 0, 3)
    seat = match.to_move
    searcher = Knowledge.of(match.view(seat)).searcher(1, _search.StopFlag())
    want = []
    for mv in searcher.root_moves:
        child = match.core.copy()
        child.apply(*mv)
        want.append(against_rollout_player(child, seat, program)[1])
    assert searcher.vs_rollout_player(program) == pytest.approx(want, abs=1e-9)
    with pytest.raises(ValueError, match="program"):
        searcher.vs_rollout_player(1.5)
    earlier = _endgame(Rules(), seed, 6, 2)
    assert Knowledge.of(earlier.view(earlier.to_move)).searcher(1, _search.StopFlag()).vs_rollout_player() is None


def _last_two_rounds_after_loose_play(seed: int) -> Match:
    """The second-to-last round's first decision, every move before it greedy's
    or at random by turns of a coin (an opponent that does not read as the program)."""
    match, coin = Match(Rules(), seed=seed), random.Random(seed)
    while not (match.stock_size == 6 and all(len(match.hand(s)) == 3 for s in range(2))):
        match.play(match.greedy_move() if coin.random() < 0.5 else coin.choice(match.legal_moves))
    return match


@pytest.mark.parametrize("seed", [26, 28, 31])
def test_a_slack_lets_rollouts_order_the_exact_moves_near_the_best(seed):
    """Tuning.exact_slack: where minimax solves the last two rounds, the moves
    within the slack of the best are ordered by rollouts as equal ones are; the
    exact figures stay, the recommended move leads the ranking. Against the
    program (its best response, not minimax) the slack changes nothing."""
    match = _last_two_rounds_after_loose_play(seed)
    know = Knowledge.of(match.view(match.to_move))
    plain = run_search(know, SearchBudget(seed=1), Tuning())
    slack = run_search(know, SearchBudget(seed=1), Tuning(exact_slack=0.3))
    assert plain.method is slack.method is SearchMethod.EXACT
    top = max(m.expected_points for m in plain.moves)
    assert plain.best == plain.moves[0].move and plain.moves[0].expected_points == top
    assert slack.best != plain.best and slack.moves[0].move == slack.best
    assert top - 0.3 <= {m.move: m.expected_points for m in slack.moves}[slack.best] < top
    assert {m.move: m.expected_points for m in slack.moves} == {m.move: m.expected_points for m in plain.moves}
    program = Tuning(exact_program=0.0)
    assert run_search(know, SearchBudget(seed=1), dataclasses.replace(program, exact_slack=0.3)).best == \
        run_search(know, SearchBudget(seed=1), program).best


@pytest.mark.parametrize(("seed", "stock", "cards"), [(1, 0, 3), (2, 0, 2), (4, 6, 2)])
def test_against_the_program_the_last_rounds_are_its_best_response(seed, stock, cards):
    """An opponent read as the greedy program (here by the knob, whatever its
    weight): every world solved with the opponent playing greedy's move at
    each of its turns and the asking side its best (against_greedy), the
    worlds weighted as for minimax. Minimax values the same moves lower where
    greedy's answer is not the strongest."""
    match = _endgame(Rules(), seed, stock, cards)
    seat = match.to_move
    know = Knowledge.of(match.view(seat))
    res = run_search(know, SearchBudget(seed=1), Tuning(exact_program=0.0, exact_respond=True))
    assert res.method == "exact" and res.stopped_because == "exact"
    want = brute_expected(match, seat, infer_t=INFER_T, value=against_greedy)
    assert {m.move: m.expected_points for m in res.moves} == pytest.approx(want, abs=1e-9)
    minimax = run_search(know, SearchBudget(seed=1))
    assert all(m.expected_points <= want[m.move] + 1e-9 for m in minimax.moves)


def against_greedy_side(core, side: int, rules: Rules) -> int:
    """against_greedy with two sides: the other side's seats play the greedy
    move, the asking side's two seats their side's best (the partner's too)."""
    if core.phase == _core.PHASE_OVER:
        return hand_margin(core, side)
    moves = core.legal_moves()
    if rules.side_of(core.turn) != side:
        child = core.copy()
        child.apply(*moves[core.greedy_choice(moves)])
        return against_greedy_side(child, side, rules)
    values = []
    for mv in moves:
        child = core.copy()
        child.apply(*mv)
        values.append(against_greedy_side(child, side, rules))
    return max(values)


@pytest.mark.parametrize("seed", [1, 2])
def test_with_4_players_the_last_round_against_the_program_is_its_best_response(seed):
    """4 players, an empty stock, the other side read as the greedy program
    (here by the knob): every way the unseen cards lie in the three other hands
    solved with the other side playing greedy's move and the asking side (the
    partner too) its best, averaged (uniformly without the inference)."""
    rules = Rules(players=4)
    match = _endgame(rules, seed, 0, 2)
    seat = match.to_move
    view = match.view(seat)
    know = Knowledge.of(view)
    res = run_search(know, SearchBudget(seed=1), Tuning(exact_program=0.0, knobs={"infer_t": 0.0}))
    others = [s for s in range(4) if s != seat]
    unseen = [c.index for c in view.unseen()]
    counts = [view.hidden_count(s) for s in others]
    fields = match.core.export()
    values: dict[tuple, list[int]] = {}
    worlds = 0
    for first in itertools.combinations(unseen, counts[0]):
        rest = [c for c in unseen if c not in first]
        for second in itertools.combinations(rest, counts[1]):
            deal = (first, second, tuple(c for c in rest if c not in second))
            world = dict(fields)
            world["hand"] = list(fields["hand"])
            for s, cards in zip(others, deal, strict=True):
                world["hand"][s] = mask_of(view.public[s]) | mask_of(Card(c) for c in cards)
            core = _core.CoreState.restore(rules.core, world)
            worlds += 1
            for mv in core.legal_moves():
                child = core.copy()
                child.apply(*mv)
                values.setdefault(mv, []).append(against_greedy_side(child, rules.side_of(seat), rules))
    assert res.method == "exact" and res.stopped_because == "exact" and res.info["worlds"] == worlds > 1
    want = {Move.from_core(mv, rules.matta_card): sum(v) / len(v) for mv, v in values.items()}
    assert {m.move: m.expected_points for m in res.moves} == pytest.approx(want, abs=1e-9)
    # a side whose weight is short of the threshold is searched by the tree, as before, and so is the
    # last round with optional captures (R-MUST), where the partners' choices make the solve costly
    assert run_search(know, SearchBudget(iterations=200, seed=1),
                      Tuning(exact_program=1.0)).method == "ismcts"
    relaxed = _endgame(Rules.preset("relaxed").replace(players=4), seed, 0, 2)
    assert run_search(Knowledge.of(relaxed.view(relaxed.to_move)), SearchBudget(iterations=200, seed=1),
                      Tuning(exact_program=0.0)).method == "ismcts"


def test_without_the_inference_the_kinds_of_player_are_the_prior():
    """infer_t 0 (worlds drawn uniformly, as flat Monte Carlo draws them): no
    play is read, so every seat is each kind by the prior, not NaN from a
    softmax at temperature 0."""
    match = _endgame(Rules(players=4), 1, 0, 2)
    know = Knowledge.of(match.view(match.to_move))
    kinds = know.searcher(1, _search.StopFlag(), infer_t=0.0, infer_program=0.3).type_weights
    assert all(w == pytest.approx([0.3, 0.7, 0.0]) for w in kinds)


def test_a_time_budget_cuts_the_exact_solve_short_with_a_fair_sample():
    """The exact solve of the last two rounds takes tens of ms; a shorter time
    budget stops it in time, and the worlds solved by then (the opponent's
    holdings, visited in a shuffled order) estimate the full average, with
    standard errors. Without a time budget it solves every world."""
    match = _endgame(Rules(), 2, 6, 3)
    view = match.view(match.to_move)
    search(view, SearchBudget(iterations=100))                            # the per-rules tables, before timing
    cpu = time.thread_time()
    full = search(view, SearchBudget(seed=1))                             # no budget given: every world
    cpu = time.thread_time() - cpu
    # a third of the full solve's CPU time as wall time: never enough to solve every world, however
    # busy or quiet the machine (a thread gets no more CPU time than wall time)
    short = search(view, SearchBudget(time_ms=cpu * 1000 / 3, seed=1))
    assert full.method == short.method == "exact"
    assert (full.stopped_because, short.stopped_because) == ("exact", "budget")     # the time cap, not a deadline
    assert not full.cut_short and not short.cut_short
    assert 0 < short.info["worlds"] < full.info["worlds"]
    assert all(m.expected_points_stderr > 0 for m in short.moves)
    assert all(m.expected_points_stderr == 0 for m in full.moves)
    want = {m.move: m.expected_points for m in full.moves}
    for m in short.moves:
        assert abs(m.expected_points - want[m.move]) < 6 * m.expected_points_stderr + 0.25


def test_optional_captures_leave_the_last_two_rounds_to_ismcts():
    """R-MUST `optional` makes the two-round trees about 6 times larger: the
    engine solves only the last round exactly there."""
    rules = Rules.preset("relaxed")
    two = _endgame(rules, 1, 6, 3)
    assert search(two.view(two.to_move), SearchBudget(iterations=500)).method == "ismcts"
    last = _endgame(rules, 1, 0, 2)
    assert search(last.view(last.to_move)).method == "exact"


def test_exact_worlds_honour_the_declaration_inference():
    """R-DECL-CHOICE with mandatory declarations: the opponent played twice this
    round without declaring, so its holding (1 hidden card + the 2 played) made no buona."""
    rules = Rules.preset("online")

    def ok(m: Match) -> bool:
        opp = 1 - m.to_move
        view = m.view(m.to_move)
        played = list(view.played_this_round[opp])
        return (m.stock_size == 6 and len(m.legal_moves) > 1 and len(view.hand) == 2
                and len(played) == 2 and not view.declared[opp]
                and any(makes_buona([c] + played, m.rules.matta_card) for c in view.unseen()))

    match = _find(rules, 1, ok)
    seat = match.to_move
    view = match.view(seat)
    res = search(view, SearchBudget(seed=1))
    want = brute_expected(match, seat, holds_no_buona=True, infer_t=INFER_T)
    assert res.method == "exact"
    assert {m.move: m.expected_points for m in res.moves} == pytest.approx(want, abs=1e-9)
    every = brute_expected(match, seat, infer_t=INFER_T)
    assert res.info["worlds"] < 7 * 20 and want != every


# --- 5. match equity -------------------------------------------------------------------

def test_equity_table_shape_and_symmetry():
    rules = Rules()
    table = equity_table(rules)
    assert table is not None and table.target == 51
    assert equity_table(Rules(players=3)) is None                   # 3 sides: not modelled
    assert equity_table(Rules(hands=4)) is None                     # R-HANDS-LIMIT
    assert 0.4 < table.win0(0, 0, 0) < 0.6
    assert table.win0(50, 0, 1) > 0.97 and table.win0(0, 50, 0) < 0.03
    for a, b, d in [(0, 0, 0), (10, 30, 1), (45, 49, 0), (50, 50, 1), (60, 55, 0)]:
        # the same match seen from the other side (R-TARGET is symmetric)
        assert table.win0(a, b, d) == pytest.approx(1 - table.win0(b, a, 1 - d), abs=1e-5)
    for b in (0, 20, 40):
        row = [table.win0(a, b, 0) for a in range(0, 51, 5)]
        assert row == sorted(row)                                   # more points, more wins
    assert win_chance(rules, (55, 40), 0) == 1.0                    # past the target, ahead: won
    assert win_chance(Rules(players=3), (0, 0), 0) is None


def test_equity_dynamic_programming_against_a_plain_recursion():
    """The table for a small target from the same hand distribution, recomputed
    by memoised recursion over (scores, dealer side)."""

    counts, cd, co = _equity.hand_distribution(Rules().core, 20000, 7)
    target = 9
    table = _equity.EquityTable(counts, cd, co, target)
    pairs = [(x, y, k) for x, row in enumerate(counts) for y, k in enumerate(row) if k and (x or y)]
    total = sum(k for _, _, k in pairs) + cd + co
    p_tie_hand = {d: 0.0 for d in (0, 1)}

    def hand_outcomes(d):           # (side 0 points, side 1 points, p), side d dealing
        for x, y, k in pairs:
            yield (x, y, k / total) if d == 0 else (y, x, k / total)

    for d in (0, 1):
        p_tie_hand[d] = sum(p for a, b, p in hand_outcomes(d) if a == b)

    def p_side0_hand(d):
        return sum(p for a, b, p in hand_outcomes(d) if a > b) + (cd if d == 0 else co) / total

    e0, e1 = p_tie_hand[0], p_tie_hand[1]
    tie = {0: (p_side0_hand(0) + e0 * p_side0_hand(1)) / (1 - e0 * e1)}
    tie[1] = (p_side0_hand(1) + e1 * p_side0_hand(0)) / (1 - e0 * e1)

    @functools.cache
    def w(a, b, d):
        if a >= target or b >= target:
            return 1.0 if a > b else 0.0 if a < b else tie[d]
        return (cd if d == 0 else co) / total + sum(p * w(a + x, b + y, 1 - d)
                                                    for x, y, p in hand_outcomes(d))

    for a in range(target):
        for b in range(target):
            for d in (0, 1):
                assert table.win0(a, b, d) == pytest.approx(w(a, b, d), abs=1e-5)


def _lexicographic(core, me: int, scores, table, next_dealer_side: int):
    """Brute force of the match objective: the chance of winning, then the margin."""
    if core.phase == _core.PHASE_OVER:
        pts = [sum(row) for row in core.score()]
        capp = core.cappotto()
        if capp >= 0:
            win = 1.0 if capp == me else 0.0
        else:
            w0 = table.win0(scores[0] + pts[0], scores[1] + pts[1], next_dealer_side)
            win = w0 if me == 0 else 1 - w0
        return (round(win * 10000), pts[me] - pts[1 - me], win)
    values = []
    for mv in core.legal_moves():
        child = core.copy()
        child.apply(*mv)
        values.append(_lexicographic(child, me, scores, table, next_dealer_side))
    return max(values) if core.turn == me else min(values)


def test_near_the_target_moves_are_ranked_by_the_chance_of_winning():
    rules = Rules()
    match = _endgame(rules, 2, 0, 3)
    seat = match.to_move
    match.scores = [44, 46] if seat == 0 else [46, 44]      # the hand decides the match
    res = search(match.view(seat), SearchBudget(seed=1))
    assert res.method == "exact" and res.ranked_by == "win_chance"
    table = equity_table(rules)
    core = match.core
    want = {}
    for mv in core.legal_moves():
        child = core.copy()
        child.apply(*mv)
        want[Move.from_core(mv, rules.matta_card)] = _lexicographic(
            child, seat, match.scores, table, rules.side_of((core.dealer + 1) % 2))
    got = {m.move: m for m in res.moves}
    for move, (_, margin, win) in want.items():
        assert got[move].win_chance == pytest.approx(win, abs=1e-6)
        assert got[move].expected_points == margin
    assert res.best == max(want, key=lambda m: want[m][:2])
    # far from the target: ranked by points
    match.scores = [0, 0]
    assert search(match.view(seat), SearchBudget(seed=1)).ranked_by == "expected_points"


def test_ismcts_reports_win_chance_near_the_target():
    match = advance_greedy(Match(Rules(), seed=31), 4)
    match.scores = [40, 45]
    res = search(match.view(match.to_move), SearchBudget(iterations=3000, seed=2))
    assert res.method == "ismcts" and res.ranked_by == "win_chance"
    assert res.moves[0].win_chance == max(m.win_chance for m in res.moves)
    assert all(0 <= m.win_chance <= 1 for m in res.moves)


def _dropped_endgame(rules: Rules) -> SeatView:
    """The last two rounds with a card the opponent dropped still on the table."""
    greedy = GreedyPlayer()
    for seed in range(100):
        match = Match(rules, seed=seed)
        while not match.is_over and match.hand_number == 0:
            v = match.view(match.to_move)
            if v.stock_size == 6 and len(match.legal_moves) > 1 and \
                    any(c in v.table for c in v.played_this_round[1 - v.seat]):
                return v
            match.play(greedy.choose(match))
    raise AssertionError("no such position")


@pytest.mark.parametrize("preset", ["classic", "online"])   # online: the R-DECL-CHOICE retry runs once
def test_exact_search_of_a_view_no_world_fits_stops(preset):
    """A view that lost a played card (replaced on the table by an unseen one)
    admits no world: the exact solver says so, instead of retrying without end."""
    view = _dropped_endgame(Rules.preset(preset, players=2))
    card = next(c for c in view.played_this_round[1 - view.seat] if c in view.table)
    bad = dataclasses.replace(view, table=tuple(view.unseen()[0] if c == card else c for c in view.table),
                              history=())
    assert bad.problems()          # validation refuses it; run_search is called past it on purpose
    with pytest.raises(StateError, match="no world"):
        run_search(Knowledge.of(bad), SearchBudget(iterations=200), Tuning(method=SearchMethod.EXACT))


def test_the_tables_built_in_the_background_are_not_remembered_as_building():
    """Each option set the server had not seen left an entry in the builder's
    book for ever: a client naming new option sets grew the server's memory."""
    from cirulla.solver import search

    option_sets = [Rules(target=t) for t in (41, 43, 47)]      # targets no other test uses
    for rules in option_sets:
        assert not search.tables_ready(rules)
    deadline = time.monotonic() + 30
    while not all(search.tables_ready(r) for r in option_sets):
        assert time.monotonic() < deadline, "tables not built within 30 s"
        time.sleep(0.02)
    deadline = time.monotonic() + 5
    while any(search.tables_building(r) for r in option_sets):
        assert time.monotonic() < deadline, \
            f"still booked: {[r for r in option_sets if search.tables_building(r)]}"
        time.sleep(0.01)
    builders = [t for t in threading.enumerate() if t.name.startswith("cirulla-tables")]
    assert builders and all(os.getpriority(os.PRIO_PROCESS, t.native_id) >= search.BUILDER_NICENESS
                            for t in builders), "the searches answering calls must come first"
