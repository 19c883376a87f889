"""The strength ladder: the levels in the arena play as ChooseMove plays them,
a small seeded ladder orders clearly separated levels, and GetEngineInfo
reports every strength's measured rating."""
from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import pytest

from cirulla.server import convert
from cirulla.server.config import ServerConfig
from cirulla.server.service import STRENGTHS, Service
from cirulla.solver import CirullaError, Match, Rules
from cirulla.solver.arena import EngineSpec, ladder, ladder_matchups, make_player
from cirulla.solver.players import LEVEL_NAMES, LEVELS, RATINGS, choose_move, level
from cirulla.v1 import engine_service_pb2 as epb
from server_support import Call


def test_levels_parse_as_arena_engines():
    assert EngineSpec.parse("level:casual") == EngineSpec.parse("casual") == EngineSpec("level", level="casual")
    assert str(EngineSpec.parse("level:full")) == "full" and EngineSpec.parse(str(EngineSpec.parse("advanced")))
    assert EngineSpec.parse("level:greedy") == EngineSpec("greedy")
    assert EngineSpec.parse("level:random") == EngineSpec("random")
    for bad in ("level:expert", "level:", "casual:100ms", "beginner:300it"):
        with pytest.raises(CirullaError):
            EngineSpec.parse(bad)


@pytest.mark.parametrize("name", ["beginner", "casual", "full"])
def test_arena_level_engines_play_what_choose_move_answers(name):
    """The arena's level engine, seat 0, against greedy: at every decision of
    seat 0 ChooseMove, given the seed the engine drew, answers the same move."""
    service = Service(ServerConfig())
    number = next(n for n, lv in STRENGTHS.items() if lv.name == name)
    seed = 11
    engine = make_player(EngineSpec.parse(name), seed)
    seeds = random.Random(seed)             # the engine's draws, one per decision with a choice
    match = Match(Rules(hands=1), seed=4)
    decisions = 0
    while not match.is_over and decisions < (6 if name == "full" else 18):
        if match.to_move == 0:
            view = match.view(0)
            move = engine(match)
            if len(match.legal_moves) > 1:
                s = seeds.getrandbits(63)
                got = service.choose_move(epb.ChooseMoveRequest(
                    view=convert.view_to_proto(view), strength=number, seed=s), Call())
                assert got.move == convert.move_to_proto(move)
                assert choose_move(view, name, s) == move
                decisions += 1
        else:
            move = match.greedy_move()
        match.play(move)
    assert decisions >= 6


def test_ladder_pairings():
    assert ladder_matchups(["greedy", "beginner", "casual"]) == [
        ("greedy", "random"), ("beginner", "greedy"), ("casual", "beginner"), ("casual", "greedy")]
    assert len(ladder_matchups()) == 10
    with pytest.raises(CirullaError):
        ladder_matchups(["random"])


def test_a_quick_ladder_orders_clearly_separated_levels():
    """random < greedy < intermediate. Safe at 30 pairs: greedy's margin over
    random (RATINGS: +6.9) is some 9 standard errors at this size (about 0.75),
    intermediate's over greedy (+2.0, a standard error of about 0.6) more than
    3, so the signs hold for all but about 1 seed in 2,000 (seed 100: +6.8
    and +0.85)."""
    res = ladder(matchups=[("greedy", "random"), ("intermediate", "greedy")], pairs=30, seed=100)
    assert list(res) == [("greedy", "random"), ("intermediate", "greedy")]
    assert all(r.pairs == 30 and r.margin > 0 for r in res.values()), [r.lines() for r in res.values()]
    assert res["greedy", "random"].margin_ci[0] > 0


def test_ratings_for_every_level():
    assert set(RATINGS) == set(LEVEL_NAMES) and RATINGS["greedy"].points == 0
    for lv in LEVELS:
        r = RATINGS[lv.name]
        assert r.low <= r.points <= r.high
    searching = [RATINGS[lv.name].points for lv in LEVELS]
    assert searching == sorted(searching), "the ladder is measured in order"


def test_engine_info_reports_a_rating_for_each_strength():
    info = Service(ServerConfig()).get_engine_info(epb.GetEngineInfoRequest(), Call())
    assert [s.strength for s in info.strength_info] == list(info.strengths) == list(STRENGTHS)
    for s in info.strength_info:
        lv, r = level(s.name), RATINGS[s.name]
        assert STRENGTHS[s.strength] == lv and s.about == lv.about and s.iterations == lv.iterations
        assert (s.rating, s.rating_low, s.rating_high, s.rating_pairs) == (r.points, r.low, r.high, r.pairs)
        assert s.rating_pairs > 0 and s.rating_low < s.rating < s.rating_high


def test_the_readme_ladder_shows_the_ratings():
    """The README's ladder table is RATINGS (the one place the ratings live) and LEVELS."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = {m[0]: m[1:] for m in re.findall(r"^\| (\w+) \| ([\d,–]+) \| ([\d.–]+) \| ([\d%–]+) \| ([^|]+) \|",
                                            readme, re.M)}
    assert set(rows) == set(LEVEL_NAMES)
    for lv in LEVELS:
        iterations, temperature, slips, rating = rows[lv.name]
        r = RATINGS[lv.name]
        shown = "0" if lv.name == "greedy" else f"{r.points:+.2f} ({r.low:+.2f} .. {r.high:+.2f})"
        assert rating.strip() == shown.replace("-", "\u2212"), lv.name
        if lv.searches:
            assert iterations == f"{lv.iterations:,}" and float(temperature) == lv.temperature
            assert slips == f"{lv.slip:.0%}" or (slips == "0" and lv.slip == 0)


def test_the_readme_play_table_is_levels():
    """The README's table of `cirulla play --level` is LEVELS, in order: each
    level's search iterations and description, and the command's default."""
    from cirulla.cli.main import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    play = readme.split("### Play\n", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `(\w+)`( \(default\))? \| ([\d,]+|–) \| ([^|]+) \|$", play, re.M)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    default = sub.choices["play"].get_default("level")
    assert rows == [(lv.name, " (default)" if lv.name == default else "",
                     f"{lv.iterations:,}" if lv.searches else "–", lv.about) for lv in LEVELS]
