"""bench/value_screen.py: the records a learned value would be fitted on, and
what it would be fitted from."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from cirulla.solver import Match, Rules, _core

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


def test_features_put_every_card_in_one_place() -> None:
    vs = load()
    m = Match(Rules(hands=1), seed=3)
    f = vs.features(m.core.export())
    cards = f[:vs.N_CARDS * vs.PLACES].reshape(vs.N_CARDS, vs.PLACES)
    assert (cards.sum(axis=1) == 1).all()
    hand0 = m.core.hand(0)
    assert [c for c in range(40) if cards[c, 2]] == [c for c in range(40) if hand0 >> c & 1]
    assert cards[:, 5].sum() == 40 - m.core.stock_pos


def test_the_ridge_and_the_network_fit_what_they_are_given() -> None:
    vs = load()
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4000, 5))
    y = x @ np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    assert np.allclose(vs.ridge(x, y, lam=1e-9), [1.0, -2.0, 0.5, 0.0, 3.0], atol=1e-6)
    assert vs.mlp_mse(x[:3000], y[:3000], x[3000:], y[3000:], seed=1, epochs=20) < 0.1 * y.var()
