"""The learned value (the core's value_features and learned_value, the
search's learned_value knob) and bench/value_screen.py, which fits it."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from cirulla.solver import CATEGORIES, Match, Rules, _core
from cirulla.solver.arena import EngineSpec
from cirulla.solver.search import Knowledge, SearchBudget, Tuning, run_search

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "value_screen.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("value_screen", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_hand_gives_each_rounds_first_state_its_playout_and_the_hands_margin() -> None:
    vs = load()
    recs = vs.hand_records(7)
    rounds = [r["round"] for r in recs]
    assert rounds == sorted(set(rounds)) and rounds[0] == 0 and len(rounds) >= 5
    assert len({r["margin"] for r in recs}) == 1
    assert len({tuple(r["categories"]) for r in recs}) == 1 and sum(recs[0]["categories"]) == recs[0]["margin"]
    core_rules = Match(Rules(hands=1), seed=7).core.rules
    for r in recs:
        st = r["state"]
        places = [st["pile"][0], st["pile"][1], st["hand"][0], st["hand"][1], st["table"]]
        assert sum(bin(m).count("1") for m in places) + 40 - st["stock_pos"] == 40   # each card once
        again = _core.CoreState.restore(core_rules, st)
        again.playout(700, True)
        score = again.score()
        assert r["greedy"] == sum(score[0]) - sum(score[1])
    # the last round's playout plays the same cards the hand did not: its margin is near the real one
    assert abs(recs[-1]["greedy"] - recs[-1]["margin"]) <= 20


def test_four_player_hands_are_fitted_on_the_cores_features_for_four(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """--players 4: the hand's three rounds, every card in one of eight places (the side
    piles, the four hands, the table, the stock), the side margins; written into the
    model's own 4-player section, the 2-player one kept."""
    vs = load()
    recs = vs.hand_records(3, players=4)
    assert [r["round"] for r in recs] == [0, 1, 2] and sum(recs[0]["categories"]) == recs[0]["margin"]
    for r in recs:
        st = r["state"]
        assert vs.players_of(st) == 4
        f = vs.features(st)
        assert len(f) == 40 * 8 + 10
        cards = f[:320].reshape(40, 8)
        assert (cards.sum(axis=1) == 1).all() and cards[:, 7].sum() == 40 - st["stock_pos"]
        for seat in range(4):
            held = st["hand"][seat]
            assert [c for c in range(40) if cards[c, 2 + seat]] == [c for c in range(40) if held >> c & 1]
        assert list(f[322:325]) == [st["turn"] == seat for seat in range(3)] and f[-1] == 1
    assert vs.players_of(vs.hand_records(3)[0]["state"]) == 2
    model = tmp_path / "value_model.json"
    model.write_text(vs.MODEL.read_text())
    monkeypatch.setattr(vs, "MODEL", model)
    vs.write([dict(r, seed=s) for s in (3, 4) for r in recs], "python bench/value_screen.py --players 4")
    written = json.loads(model.read_text())
    assert written["players"]["2"] == _core.VALUE_MODEL["players"]["2"]
    four = written["players"]["4"]
    assert four["fitted_by"] == "python bench/value_screen.py --players 4" and four["hands"] == 2
    assert sorted(four["rounds"]) == ["1", "2"] and len(four["rounds"]["1"]) == 331
    _core._load_value_model(written)                # what it wrote, the core loads
    _core._load_value_model()


def _played(seed: int, moves: int, players: int = 2) -> Match:
    m = Match(Rules(players=players, hands=1), seed=seed)
    for _ in range(moves):
        m.play(m.greedy_move())
    return m


def test_the_features_put_every_card_in_one_place_then_say_what_places_do_not() -> None:
    m = _played(3, 9)                           # into the second round: piles, a last capturer
    core = m.core
    f = core.value_features()
    cards = np.array(f[:240]).reshape(40, 6)
    assert (cards.sum(axis=1) == 1).all()
    for place, mask in enumerate((core.pile(0), core.pile(1), core.hand(0), core.hand(1), core.table)):
        assert [c for c in range(40) if cards[c, place]] == [c for c in range(40) if mask >> c & 1]
    assert cards[:, 5].sum() == 40 - core.stock_pos
    taken = bin(core.pile(0)).count("1") - bin(core.pile(1)).count("1")
    assert f[240:] == [core.scope(0) - core.scope(1), core.decl(0) - core.decl(1), core.turn == 0,
                       core.last_capturer == 0, core.last_capturer == 1,
                       core.dealer_buona * (1 if core.dealer == 0 else -1), taken, 1]


@pytest.mark.parametrize("players", [2, 4])
def test_the_learned_value_is_the_models_dot_product_from_the_second_round(players: int) -> None:
    """The margin's own fit gives the margin; each category's fit its category, the
    weights' rounding spread so that the categories add up to the margin; each player
    count by its own weights."""
    section = _core.VALUE_MODEL["players"][str(players)]
    weights, by_category = section["rounds"], section["categories"]
    rounds = 6 if players == 2 else 3
    assert sorted(weights) == sorted(by_category) == [str(r) for r in range(1, rounds)]
    assert _core.VALUE_MODEL["categories_order"] == list(CATEGORIES)
    m = _played(5, 7 if players == 2 else 13, players)
    assert m.core.round == 1
    w, wc = np.array(weights["1"]), np.array(by_category["1"])
    assert wc.shape == (len(CATEGORIES), len(w)) and np.allclose(wc.sum(axis=0), w, atol=1e-5)
    f = np.array(m.core.value_features())
    assert len(f) == len(w) - 1
    for cats in ([0, 0, 0, 0, 0, 0, 0, 0, 0], [-2, 1, 1, 0, -1, 1, 0, 0, 0], [3, 0, -1, 1, 1, -1, 4, 0, 0]):
        g = float(sum(cats))
        margin, corrected = m.core.learned_value(cats)
        assert margin == pytest.approx(float(np.dot(w[:-1], f) + w[-1] * g))
        assert sum(corrected) == pytest.approx(margin, abs=1e-9)
        assert corrected == pytest.approx(list(wc[:, :-1] @ f + wc[:, -1] * g), abs=1e-4)
    first = Match(Rules(players=players, hands=1), seed=5).core
    cats = [3, 0, 0, 0, 0, 0, 0, 0, 0.5]
    assert first.round == 0 and first.learned_value(cats) == (3.5, cats)      # no weights: the playout's own
    with pytest.raises(ValueError, match="9 category margins"):
        m.core.learned_value([1.0, 2.0])


def test_three_players_have_no_learned_value() -> None:
    three = _played(5, 10, 3)
    assert three.core.round == 1 and three.core.learned_value([1, 0, 0, 0, 0, 0, 0, 0, 2]) == (3, [1, 0, 0, 0, 0, 0,
                                                                                                  0, 0, 2])
    with pytest.raises(ValueError, match="2- and 4-player layouts, not 3 players"):
        three.core.value_features()


def test_a_bad_model_is_refused_by_its_field_before_any_weight_is_set() -> None:
    """The core's model loader names what is wrong (a player count without a layout, a round
    that is none, a round without its categories' weights) and sets nothing then: the
    search's value is the shipped one after."""
    m = _played(5, 7)
    before = m.core.learned_value([1, 0, 0, 0, 0, 0, 0, 0, 0])
    two = _core.VALUE_MODEL["players"]["2"]
    good = {"rounds": {"1": two["rounds"]["1"]}, "categories": {"1": two["categories"]["1"]}}
    with pytest.raises(ValueError, match="players: '3' has no layout"):
        _core._load_value_model({"players": {"3": good}})
    with pytest.raises(ValueError, match="players 2: rounds: '9' is not a round"):
        _core._load_value_model({"players": {"2": {"rounds": {"9": two["rounds"]["1"]}}}})
    with pytest.raises(ValueError, match="players 4: rounds: '3' is not a round"):
        _core._load_value_model({"players": {"4": {"rounds": {"3": two["rounds"]["1"]}}}})
    with pytest.raises(ValueError, match="round 1 wants 249 weights for the margin and for each of 9 categories"):
        _core._load_value_model({"players": {"2": {"rounds": {"1": two["rounds"]["1"]}}}})
    with pytest.raises(ValueError, match="players 4: rounds and categories: round 1 wants 331 weights"):
        _core._load_value_model({"players": {"2": good, "4": good}})
    assert m.core.learned_value([1, 0, 0, 0, 0, 0, 0, 0, 0]) == before
    try:                                            # a model replaces the one before: none, no correction
        _core._load_value_model({"players": {}})
        assert m.core.learned_value([1, 0, 0, 0, 0, 0, 0, 0, 0]) == (1, [1, 0, 0, 0, 0, 0, 0, 0, 0])
    finally:
        _core._load_value_model()
    assert m.core.learned_value([1, 0, 0, 0, 0, 0, 0, 0, 0]) == before


def test_the_search_knob_corrects_the_rollouts_with_two_and_four_players() -> None:
    """learned_value 1 changes a 2-player search's figures; 2 (the default with 2
    players) weighs the value by the chance that the other side is not the greedy
    program (a prior of 1 for the program: the rollouts as they are); with 4 players
    it is a knob (off by default); with 3 there is no model, and asking for it is an error."""
    def figures(m: Match, **knobs: float) -> list[float]:
        result = run_search(Knowledge.of(m.view(m.to_move)), SearchBudget(iterations=600, seed=4),
                            Tuning(knobs=knobs))
        return [s.expected_points for s in result.moves]

    m = _played(11, 2)
    assert figures(m, learned_value=1) != figures(m, learned_value=0) != figures(m) == figures(m, learned_value=2)
    assert figures(m, learned_value=2, infer_program=1.0) == figures(m, infer_program=1.0)
    assert figures(m, learned_value=2, infer_program=0.0) == figures(m, learned_value=1, infer_program=0.0)
    four = _played(11, 1, 4)
    assert figures(four, learned_value=1) != figures(four, learned_value=0) == figures(four)
    three = _played(11, 1, 3)
    assert figures(three, learned_value=0) == figures(three)
    with pytest.raises(ValueError, match="models for 2 and 4 players, not 3"):
        figures(three, learned_value=1)
    with pytest.raises(ValueError, match="learned_value"):
        figures(m, learned_value=3)
    assert dict(EngineSpec.parse("ismcts:100it:val=2").params) == {"learned_value": 2}


def test_the_categories_add_up_to_the_corrected_expected_points() -> None:
    """With the value on, a move's points by category still add up to its expected
    points (the categories corrected by their own fits), in the tree's figures and
    in the paired phase's."""
    m = _played(11, 2)
    for share in (0.0, 1.0):
        result = run_search(Knowledge.of(m.view(m.to_move)), SearchBudget(iterations=800, seed=2),
                            Tuning(paired_share=share, knobs={"learned_value": 1}))
        plain = run_search(Knowledge.of(m.view(m.to_move)), SearchBudget(iterations=800, seed=2),
                           Tuning(paired_share=share, knobs={"learned_value": 0}))
        for s in result.moves:
            assert sum(s.categories.values()) == pytest.approx(s.expected_points, abs=1e-9)
        assert [s.categories for s in result.moves] != [s.categories for s in plain.moves]


def test_the_ridge_and_the_network_fit_what_they_are_given() -> None:
    vs = load()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4000, 5))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    assert np.allclose(vs.ridge(x, y, lam=1e-9), [1.0, -2.0, 0.5, 0.0, 3.0], atol=1e-6)
    assert vs.mlp_mse(x[:3000], y[:3000], x[3000:], y[3000:], seed=1, epochs=20) < 0.1 * y.var()
