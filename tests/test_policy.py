"""The learned rollout policy: its features in the core, its
choices, the knob that selects it, and the scripts that make its data and fit
it (bench/policy/)."""
from __future__ import annotations

import dataclasses
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import pytest

from cirulla.solver import Card, CirullaError, Match, Move, Rules, _core
from cirulla.solver.arena import EngineSpec
from cirulla.solver.cards import mask_of
from cirulla.solver.events import Turn
from cirulla.solver.search import (
    Knowledge,
    Policy,
    SearchBudget,
    SearchMethod,
    Tuning,
    _search,
    run_search,
    searcher_knobs,
)
from rules_support import position

POLICY = Path(__file__).resolve().parents[1] / "bench" / "policy"
F = {name: i for i, name in enumerate(_core.POLICY_FEATURES)}


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"policy_{name}", POLICY / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def features(match, text: str) -> dict[str, int]:
    """The features of the legal move `text` at the match's position, by name."""
    moves = match.core.legal_moves()
    legal = [str(Move.from_core(t, match.rules.matta_card)) for t in moves]
    row = match.core.move_features(moves)[legal.index(text)]
    assert row is not None
    return dict(zip(_core.POLICY_FEATURES, row, strict=True))


def test_feature_names_match_the_core():
    assert len(_core.POLICY_FEATURES) == _core.N_POLICY_FEATURES == len(set(_core.POLICY_FEATURES))
    assert _core.POLICY_FEATURES[0] == "greedy"


def test_features_of_a_scopa_with_the_settebello():
    m = position(Rules(), ["7D 3C KS", "AH 2H 5H"], "4H 3S")
    f = features(m, "7D x 3S 4H")
    assert f["took"] == 1 and f["cards"] == 3 and f["diamonds"] == 1 and f["settebello"] == 1
    assert f["sevens"] == 1 and f["scopa"] == 1 and f["drop"] == 0 and f["table_cards"] == 0
    assert f["sweepers"] == 0 and f["sweepable"] == 0 and f["last_round_took"] == 0
    assert f["prim_gain"] == 21 + 13 + 14        # 7D, 3S, 4H: the first card of three suits
    greedy = m.core.greedy_worths(m.core.legal_moves())
    assert f["greedy"] in greedy


def test_features_of_a_drop_and_of_what_it_leaves():
    m = position(Rules(), ["7D 3C KS", "AH 2H 5H"], "4H 3S")
    # the king stays: the other kings are unseen to seat 0 (seat 1's cards are
    # not counted as seen), and any of the four aces sweeps a table with no ace
    f = features(m, "KS")
    assert f["drop"] == 1 and f["drop_value"] == 10 and f["drop_diamond"] == 0 and f["drop_seven"] == 0
    assert f["drop_matchable"] == 3
    assert f["took"] == 0 and f["cards"] == 0 and f["table_cards"] == 3
    assert f["sweepers"] == 4 and f["sweepable"] == 1       # 4H 3S KS make 17: only an ace
    g = features(m, "3C x 3S")
    assert g["cards"] == 2 and g["table_cards"] == 1
    assert g["sweepers"] == 3 + 4                           # the other 4s, and the aces


def test_seen_cards_are_not_counted_as_sweepers():
    # two aces in seat 0's pile, one on the table: the fourth unseen
    m = position(Rules(), ["5C JC", "2H 6H"], "AD QS", piles={0: "AH AC"})
    f = features(m, "JC")
    # AD QS JC: an ace on an ace takes only the ace (R-ACE-ACE), the sum 18 sweeps nothing
    assert f["sweepers"] == 0 and f["table_settebello"] == 0 and f["table_diamonds"] == 1


def test_last_round_capture_feature():
    m = position(Rules(), ["5C", "6H"], "5D QS", rest_to=0)
    f = features(m, "5C x 5D")
    assert f["last_round_took"] == 1 and f["diamonds"] == 1


def test_the_learned_policy_takes_a_scopa():
    m = position(Rules(), ["5S QC 6H", "AH 2H 4H"], "2C 3H")
    moves = m.core.legal_moves()
    pick = Move.from_core(moves[m.core.learned_choice(moves)], None)
    assert str(pick) == "5S x 2C 3H"


def test_the_learned_policy_declares_like_the_greedy_one():
    m = position(Rules(), ["AC 2C 3S", "KH QH JH"], "5D QS")
    moves = m.core.legal_moves()
    assert any(t[0] < 0 for t in moves)
    assert m.core.learned_choice(moves) == m.core.greedy_choice(moves)
    assert moves[m.core.learned_choice(moves)][0] < 0


def test_declarations_have_no_features():
    m = position(Rules(), ["AC 2C 3S", "KH QH JH"], "5D QS")
    moves = m.core.legal_moves()
    rows = m.core.move_features(moves)
    assert all((row is None) == (t[0] < 0) for t, row in zip(moves, rows, strict=True))


def test_playouts_with_the_learned_policy():
    r = Rules().core
    learned = _core.bench_playouts(r, 200, 3, True, Policy.LEARNED)
    assert learned == _core.bench_playouts(r, 200, 3, True, Policy.LEARNED)
    assert _core.bench_playouts(r, 200, 3, True) == _core.bench_playouts(r, 200, 3, True, Policy.GREEDY) != learned
    # the softmax draws: seeded too
    assert _core.bench_playouts(r, 200, 3, True, Policy.SAMPLE) == _core.bench_playouts(r, 200, 3, True, Policy.SAMPLE)
    with pytest.raises(ValueError, match="must be a Policy"):
        _core.bench_playouts(r, 200, 3, True, 3)


def test_the_search_with_the_learned_rollout_is_seeded():
    m = position(Rules(), ["5S QC 6H", "AH 2H 4H"], "2C 3H")
    know = Knowledge.of(m.view(0))
    a = run_search(know, SearchBudget(iterations=2000, seed=4), Tuning(knobs={"policy": Policy.LEARNED}))
    b = run_search(know, SearchBudget(iterations=2000, seed=4), Tuning(knobs={"policy": Policy.LEARNED}))
    assert a.best == b.best and [x.expected_points for x in a.moves] == [x.expected_points for x in b.moves]
    assert str(a.best) == "5S x 2C 3H"
    # the rollouts are the learned policy's: the same seed, other playouts
    g = run_search(know, SearchBudget(iterations=2000, seed=4))
    assert [x.expected_points for x in g.moves] != [x.expected_points for x in a.moves]
    assert [x.expected_points for x in g.moves] == [
        x.expected_points for x in run_search(know, SearchBudget(iterations=2000, seed=4),
                                              Tuning(knobs={"policy": Policy.GREEDY})).moves]
    with pytest.raises(ValueError, match="policy must be a Policy"):
        run_search(know, SearchBudget(iterations=100, seed=4), Tuning(knobs={"policy": 3}))


def test_the_arena_knobs_name_every_policy():
    """pol= and ipol= take a Policy by its name in lower case, and print it back
    so; the inference reads plays by a model that gives each move a score, so
    ipol= takes greedy and learned only, and says so when the spec is read."""
    for policy in Policy:
        for knob, param in (("pol", "policy"), ("ipol", "infer_policy")):
            if knob == "ipol" and policy not in (Policy.GREEDY, Policy.LEARNED):
                with pytest.raises(CirullaError, match="infer_policy"):
                    EngineSpec.parse(f"ismcts:1000it:{knob}={policy.name.lower()}")
                continue
            spec = EngineSpec.parse(f"ismcts:1000it:{knob}={policy.name.lower()}")
            assert dict(spec.params) == {param: policy} and type(dict(spec.params)[param]) is Policy
            assert str(spec) == f"ismcts:1000it:{knob}={policy.name.lower()}"
    with pytest.raises(Exception, match="pol"):
        EngineSpec.parse("ismcts:1000it:pol=clever")


def test_data_is_reproducible_and_fits(tmp_path):
    pytest.importorskip("numpy", reason="numpy is not installed (pip install -e '.[test]')")
    make_data, fit = load("make_data"), load("fit")
    a, b = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    args = ["--hands", "2", "--iterations", "300", "--seed", "5"]
    assert make_data.main([*args, "--out", str(a)]) == 0
    b.write_bytes(b"")
    assert make_data.main([*args, "--out", str(b)]) == 0
    header, recs = fit.load(str(a))
    _, recs_b = fit.load(str(b))
    assert recs == recs_b and recs
    assert header["features"] == list(_core.POLICY_FEATURES)
    for r in recs:
        assert len(r["features"]) == len(r["values"]) >= 2
        assert 0 <= r["chosen"] < len(r["features"]) and 0 <= r["greedy"] < len(r["features"])
        assert all(len(row) == _core.N_POLICY_FEATURES for row in r["features"])
    assert fit.main([str(a), "--steps", "20"]) == 0


def test_card_features_agree_with_python():
    """The captured-card counts against a recount from the move's cards."""
    m = position(Rules(), ["7C 6D AS", "KH 2H"], "AD 6S 7S 5D 2C")
    moves = m.core.legal_moves()
    for t, row in zip(moves, m.core.move_features(moves), strict=True):
        assert row is not None
        mv = Move.from_core(t, None)
        assert mv.card is not None
        got = set(mv.captured) | ({mv.card} if mv.captured else set())
        assert row[F["cards"]] == len(got)
        assert row[F["diamonds"]] == sum(c.suit == 0 for c in got)
        assert row[F["sevens"]] == sum(c.rank == 6 for c in got)
        assert row[F["sixes"]] == sum(c.rank == 5 for c in got)
        assert row[F["aces"]] == sum(c.rank == 0 for c in got)
        assert row[F["settebello"]] == (Card.parse("7D") in got)


def test_the_inference_can_weigh_plays_by_the_learned_score():
    m = position(Rules(), ["5S QC 6H", "AH 2H 4H"], "2C 3H")
    know = Knowledge.of(m.view(0))
    a = run_search(know, SearchBudget(iterations=1000, seed=4),
                   Tuning(knobs={"infer_policy": Policy.LEARNED, "policy": Policy.LEARNED}))
    b = run_search(know, SearchBudget(iterations=1000, seed=4),
                   Tuning(knobs={"infer_policy": Policy.LEARNED, "policy": Policy.LEARNED}))
    assert a.best == b.best
    with pytest.raises(ValueError, match="infer_policy"):
        run_search(know, SearchBudget(iterations=100, seed=4), Tuning(knobs={"infer_policy": Policy.SAMPLE}))


def test_the_model_knobs_parse_and_are_checked():
    """spol= (the asking side's own rollout moves), imix= (the learned model's
    weight in the inference) and isoft= (a play's likelihood as its softmax
    share): parsed, printed back, and out-of-range values named."""
    spec = EngineSpec.parse("ismcts:1000it:spol=learned,imix=0.25,isoft=1")
    assert dict(spec.params) == {"own_policy": Policy.LEARNED, "infer_mix": 0.25, "infer_soft": 1}
    assert EngineSpec.parse(str(spec)) == spec
    m = position(Rules(), ["5S QC 6H", "AH 2H 4H"], "2C 3H")
    know = Knowledge.of(m.view(0))
    with pytest.raises(ValueError, match="infer_mix"):
        run_search(know, SearchBudget(iterations=100, seed=4), Tuning(knobs={"infer_mix": 1.5}))
    with pytest.raises(ValueError, match="infer_soft"):
        run_search(know, SearchBudget(iterations=100, seed=4), Tuning(knobs={"infer_soft": 2}))


def test_own_policy_changes_only_the_asking_sides_rollouts():
    m = position(Rules(), ["5S QC 6H", "AH 2H 4H"], "2C 3H")
    know = Knowledge.of(m.view(0))

    def points(**knobs) -> list[float]:
        res = run_search(know, SearchBudget(iterations=1500, seed=4), Tuning(knobs=knobs))
        return [x.expected_points for x in res.moves]

    assert points(own_policy=Policy.GREEDY) == points()                 # the rollout policy's own
    assert points(own_policy=Policy.LEARNED) != points()
    # both sides learned: the same as the learned rollouts for every seat
    assert points(policy=Policy.LEARNED, own_policy=Policy.LEARNED) == points(policy=Policy.LEARNED)


def test_the_inference_mixes_its_two_models():
    """infer_mix 0 is the greedy model alone and 1 the learned one alone (the
    same worlds as infer_policy); between them, other worlds."""
    m = Match(Rules(), seed=3)
    while not (m.stock_size > 6 and any(p[1] != m.to_move for p in m.view(m.to_move).round_plays())
               and m.view(m.to_move).hidden_count(1 - m.to_move) == 2):
        m.play(m.greedy_move())                             # until the other seat has played: something to read
    seat = m.to_move
    know = Knowledge.of(m.view(seat))

    def worlds(**knobs) -> list[int]:
        s = know.searcher(7, _search.StopFlag(), infer_t=50.0, **knobs)
        return [s.sample()["hand"][1 - seat] for _ in range(200)]

    assert worlds(infer_mix=0.0) == worlds(infer_policy=Policy.GREEDY)
    assert worlds(infer_mix=1.0) == worlds(infer_policy=Policy.LEARNED)
    assert worlds(infer_mix=0.5) != worlds(infer_mix=0.0)
    assert worlds(infer_mix=0.5, infer_soft=1) != worlds(infer_mix=0.5)


def test_four_players_keep_the_greedy_regret_inference():
    """With 4 players the default inference is greedy's regret (the mixed
    model's cost grows with the plays of three other seats); with 2, the mix."""
    for players, mixed in ((4, False), (2, True)):
        m = Match(Rules(players=players), seed=5)
        while not (m.stock_size > 6 and any(p[1] != m.to_move for p in m.view(m.to_move).round_plays())):
            m.play(m.greedy_move())
        know = Knowledge.of(m.view(m.to_move))

        def points(know: Knowledge, **knobs) -> list[float]:
            res = run_search(know, SearchBudget(iterations=600, seed=2), Tuning(knobs=knobs))
            return [x.expected_points for x in res.moves]

        default, regret = points(know), points(know, infer_mix=0.0, infer_soft=0)
        assert (default != regret) == mixed
        assert (default == points(know, infer_mix=0.5, infer_soft=1)) == mixed
        assert default != points(know, infer_program=0.0)      # the greedy program a kind with any count


# --- the kinds of player the inference reads the others as -------------------------

def _play_hand_until(rules: Rules, seed: int, rounds: int, other) -> Match:
    """A hand where seat 0 plays greedy's move and seat 1 `other(match)`, up to
    seat 0's first choice of round `rounds`."""
    m = Match(rules, seed=seed)
    while not (m.round >= rounds and m.to_move == 0 and len(m.legal_moves) > 1):
        m.play(m.greedy_move() if m.to_move == 0 else other(m))
    return m


def _worst(m: Match) -> Move:
    """The move of least greedy worth: a player no one would take for greedy."""
    worths = m.core.greedy_worths(m.core.legal_moves())
    return m.legal_moves[worths.index(min(worths))]


def _type_weights(m: Match, **knobs) -> list[float]:
    know = Knowledge.of(m.view(0))
    knobs = {"infer_t": 50.0, "infer_mix": 0.5, "infer_soft": 1, "infer_program": 0.3} | knobs
    weights = know.searcher(1, _search.StopFlag(), **knobs).type_weights
    prior = knobs["infer_program"]
    assert weights[0] == pytest.approx([prior, (1 - prior) / 2, (1 - prior) / 2])     # seat 0's own
    return weights[1]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_finished_rounds_tell_a_greedy_program_from_other_players(seed):
    """The plays of the hand's finished rounds, where every holding is known,
    move the weights of the kinds of player from their prior: towards the
    greedy program for a seat that plays greedy's best move, away from it for
    one that plays the worst; none before any round is finished."""
    first = _play_hand_until(Rules(), seed, 0, Match.greedy_move)
    assert _type_weights(first) == pytest.approx([0.3, 0.35, 0.35])
    program = _type_weights(_play_hand_until(Rules(), seed, 4, Match.greedy_move))
    assert program[0] > 0.8 and sum(program) == pytest.approx(1.0)
    other = _type_weights(_play_hand_until(Rules(), seed, 4, _worst))
    assert other[0] < 0.01 and sum(other) == pytest.approx(1.0)
    assert _type_weights(_play_hand_until(Rules(), seed, 4, Match.greedy_move), infer_program=0.0)[0] == 0.0


@pytest.mark.parametrize("other", [Match.greedy_move, _worst])
def test_infer_split_keeps_the_two_softmax_kinds_at_their_prior_split(other):
    """infer_split 1 judges the two softmax kinds together against the
    program: the finished rounds move the program's weight as before, but the
    greedy and learned softmaxes keep the prior's half and half; and this
    round's plays weigh the worlds on each kind's own scale, so other worlds
    are drawn."""
    m = _play_hand_until(Rules(), 2, 4, other)
    apart, split = _type_weights(m), _type_weights(m, infer_split=1)
    assert split[1] == pytest.approx(split[2]) and sum(split) == pytest.approx(1.0)
    assert apart[1] != pytest.approx(apart[2])
    if other is _worst:
        assert split[0] < 0.01
    know = Knowledge.of(m.view(0))

    def worlds(**knobs) -> list[int]:
        s = know.searcher(7, _search.StopFlag(), infer_t=50.0, infer_mix=0.5, infer_soft=1, infer_program=0.3,
                          **knobs)
        return [s.sample()["hand"][1] for _ in range(200)]

    assert worlds(infer_split=1) != worlds()


def test_own_eps_milli_sets_the_asking_sides_random_moves_apart_from_the_others():
    """own_eps_milli is the asking side's share of random moves in the
    rollouts, the others keeping eps_milli: -1 is eps_milli for both; another
    value changes the asking side's playouts alone. The search's default with
    2 players is the others 20% random, its own 10%; with 4 players the
    other way round, the asking side's (both partners') 20%, the others' 10%;
    in flat Monte Carlo (the yardstick it was) every seat 10%."""
    m = _play_hand_until(Rules(), 1, 2, Match.greedy_move)
    know = Knowledge.of(m.view(m.to_move))

    def figures(**knobs) -> list[float]:
        result = run_search(know, SearchBudget(iterations=400, seed=4), Tuning(knobs=knobs))
        return [s.expected_points for s in result.moves]

    assert figures(eps_milli=200, own_eps_milli=-1) == figures(eps_milli=200, own_eps_milli=200)
    assert figures() == figures(eps_milli=200, own_eps_milli=100) != figures(eps_milli=200, own_eps_milli=-1)
    assert figures(own_eps_milli=0) != figures()
    with pytest.raises(ValueError, match="own_eps_milli"):
        figures(own_eps_milli=1001)
    knobs = searcher_knobs(Rules())
    assert (knobs["eps_milli"], knobs["own_eps_milli"]) == (200, 100)
    knobs = searcher_knobs(Rules(players=4))
    assert "eps_milli" not in knobs and knobs["own_eps_milli"] == 200
    for rules in (Rules(), Rules(players=4), Rules(players=3)):
        assert not {"eps_milli", "own_eps_milli"} & set(searcher_knobs(rules, Tuning(method=SearchMethod.FLAT)))
    assert "own_eps_milli" not in searcher_knobs(Rules(players=3))
    assert dict(EngineSpec.parse("ismcts:100it:eps=200,oeps=100").params) == {"eps_milli": 200, "own_eps_milli": 100}


def test_the_kinds_of_player_are_checked():
    m = _play_hand_until(Rules(), 1, 2, Match.greedy_move)
    know = Knowledge.of(m.view(0))
    with pytest.raises(ValueError, match="infer_program"):
        run_search(know, SearchBudget(iterations=100, seed=4), Tuning(knobs={"infer_program": 1.5}))
    spec = EngineSpec.parse("ismcts:1000it:iprog=0.5,xprog=0.9")
    assert dict(spec.params) == {"infer_program": 0.5, "exact_program": 0.9}


def test_finished_round_plays_are_whole_rounds_with_the_tables_they_found():
    m = _play_hand_until(Rules(), 4, 3, Match.greedy_move)
    view = m.view(0)
    rounds = view.finished_round_plays()
    assert len(rounds) == 3 and all(len(rows) == 6 for rows in rounds)
    assert [seat for rows in rounds for _, seat, _, _ in rows][:2] == [(view.dealer + 1) % 2, view.dealer]
    played = {seat: [move.card for rows in rounds for _, s, _, move in rows if s == seat] for seat in (0, 1)}
    assert all(len(cards) == 9 for cards in played.values())
    # the table each play found, replayed forwards from the first
    table = rounds[0][0][2]
    for rows in rounds:
        for _, _, found, move in rows:
            assert found == table
            took = mask_of(move.captured)
            table = table & ~took if took else table | 1 << move.card.index
    # a history without the first round's first play: that round is left out
    first_play = next(i for i, e in enumerate(view.history) if isinstance(e, Turn) and e.move.card is not None)
    cut = dataclasses.replace(view, history=view.history[first_play + 1:])
    assert [[row[1:] for row in rows] for rows in cut.finished_round_plays()] == [
        [row[1:] for row in rows] for rows in rounds[1:]]


def test_an_opponent_read_as_the_greedy_program_gets_the_best_response_to_it():
    """exact_program: from that weight of the greedy program the last two
    rounds are solved with its every move greedy's (the best response to it),
    not by minimax against a perfect opponent, which values every move as
    low or lower; exact_respond False searches them by rollouts (which play
    greedy's moves for it) instead."""
    m = Match(Rules(), seed=4)
    while not (m.stock_size == 6 and len(m.legal_moves) > 1):
        m.play(m.greedy_move())
    know = Knowledge.of(m.view(m.to_move))
    assert know.searcher(1, _search.StopFlag(), infer_t=50.0, infer_mix=0.5, infer_soft=1,
                         infer_program=0.3).type_weights[1 - m.to_move][0] > 0.9
    budget = SearchBudget(iterations=2000, seed=1)

    def points(tuning: Tuning) -> dict[Move, float]:
        res = run_search(know, budget, tuning)
        assert res.method == "exact"
        return {r.move: r.expected_points for r in res.moves}

    respond, minimax = points(Tuning()), points(Tuning(exact_program=math.inf))      # the default, then minimax
    assert all(minimax[mv] <= respond[mv] + 1e-9 for mv in respond)
    assert any(minimax[mv] < respond[mv] - 0.01 for mv in respond)
    assert points(Tuning(knobs={"infer_program": 0.0})) == minimax                     # not read as the program
    assert run_search(know, budget, Tuning(exact_respond=False)).method == "ismcts"


def test_each_seat_is_read_as_its_own_kind_of_player():
    """4 players: the partner (seat 2) plays the worst moves, the opponents
    greedy's best; after two rounds (of three) the opponents read likelier
    the program than the prior (0.3) had it, the partner as anything but."""
    m = Match(Rules(players=4), seed=6)
    while not (m.round >= 2 and m.to_move == 0 and len(m.legal_moves) > 1):
        m.play(_worst(m) if m.to_move == 2 else m.greedy_move())
    know = Knowledge.of(m.view(0))
    kinds = know.searcher(1, _search.StopFlag(), infer_t=50.0, infer_program=0.3).type_weights
    assert kinds[1][0] > 0.5 and kinds[3][0] > 0.5 and kinds[2][0] < 0.01
    assert kinds[0] == pytest.approx([0.3, 0.7, 0.0])        # the observer's own: the prior (greedy's regret)
