"""The arena: duplicate matches between engines."""
from __future__ import annotations

import pickle

import pytest

from cirulla.solver import CirullaError, HandEnd, Match, Rules, StateError, record
from cirulla.solver.arena import EngineSpec, arena, compare, make_player, play_pair, summarize
from server_support import running


def test_engine_specs_parse_and_print_back():
    assert EngineSpec.parse("greedy") == EngineSpec("greedy")
    assert EngineSpec.parse("ismcts") == EngineSpec("ismcts", time_ms=100.0)
    assert EngineSpec.parse("flatmc:2500it") == EngineSpec("flatmc", iterations=2500)
    spec = EngineSpec.parse("ismcts:50ms:c=3,eps=0")
    assert spec.time_ms == 50 and dict(spec.params) == {"c_ucb": 3.0, "eps_milli": 0}
    for text in ("greedy", "cheat:20ms", "ismcts:50ms:c=3.0,eps=0"):
        assert str(EngineSpec.parse(text)) == text
    for bad in ("alphazero", "greedy:10ms", "ismcts:fast", "ismcts:0it", "ismcts:10ms:zz=1"):
        with pytest.raises(CirullaError):
            EngineSpec.parse(bad)


def test_a_knob_out_of_its_range_is_the_specs_error_before_any_game():
    """The Searcher's and the stopping rule's own checks, run when the spec is
    read: the error names the engine and the knob's field, not a traceback
    from the first search."""
    for bad, field in (("ismcts:100it:isoft=3", "infer_soft"), ("ismcts:100it:eps=5000", "eps_milli"),
                       ("ismcts:100it:g=-1", "min_gain"), ("flatmc:100it:isplit=2", "infer_split"),
                       ("ismcts:100it:share=-1", "paired_share"), ("ismcts:100it:share=1.5", "paired_share"),
                       ("ismcts:100it:xprog=nan", "exact_program"), ("ismcts:100it:xslack=-0.1", "exact_slack"),
                       ("ismcts:100it:pick=most", "pick"), ("ismcts:100it:c=-1", "c_ucb"),
                       ("ismcts:100it:c=nan", "c_ucb"), ("ismcts:100it:inf=-1", "infer_t"),
                       ("ismcts:100it:inf=inf", "infer_t"), ("ismcts:100it:follow=-1", "follow_min")):
        with pytest.raises(CirullaError, match=f"engine '{bad}': ({field}|stopping rule: {field}|tuning: {field})"):
            EngineSpec.parse(bad)
    assert dict(EngineSpec.parse("ismcts:100it:isplit=1,xresp=1").params) == {"infer_split": 1, "exact_respond": True}
    assert dict(EngineSpec.parse("ismcts:100it:xroll=0").params) == {"exact_rollout_player": False}
    for bad, why in (("xresp=5", "xresp=5 is not 1 or 0"), ("xroll=2", "xroll=2 is not 1 or 0"),
                     ("c=abc", "c=abc is not a number"),
                     ("follow=1.5", "follow=1.5 is not a whole number"),
                     ("pol=clever", "pol=clever is not a policy: greedy, learned, sample")):
        with pytest.raises(CirullaError, match=f"engine 'ismcts:100it:{bad}': {why}$"):
            EngineSpec.parse(f"ismcts:100it:{bad}")
    for fine in ("c=0", "inf=0", "follow=0"):                   # the edges of the ranges
        EngineSpec.parse(f"ismcts:100it:{fine}")


def test_match_0_ranks_by_expected_points_where_the_match_is_in_reach(monkeypatch):
    """match=0 turns off the ranking by the chance of winning the match (the
    measurement of what that ranking is worth); without it, a match whose
    target a hand can reach is ranked by that chance."""
    from cirulla.solver import arena as arena_module
    seen: list[bool] = []
    real = arena_module.run_search

    def spy(know, budget, tuning):
        seen.append(tuning.sensitive)
        return real(know, budget, tuning)

    monkeypatch.setattr(arena_module, "run_search", spy)
    assert dict(EngineSpec.parse("ismcts:50it:match=0").params) == {"sensitive": False}
    for spec in ("ismcts:50it", "ismcts:50it:match=0"):
        match = Match(Rules(target=11), seed=4)
        while len(match.legal_moves) < 2:
            match.play(match.greedy_move())
        make_player(EngineSpec.parse(spec), 1)(match)
    assert seen == [True, False]
    with pytest.raises(CirullaError, match="match=2 is not 1 or 0"):
        EngineSpec.parse("ismcts:100it:match=2")


def test_remote_engine_specs_name_a_server_and_a_level_or_budget():
    assert EngineSpec.parse("remote:127.0.0.1:50051") == EngineSpec("remote", address="127.0.0.1:50051")
    assert EngineSpec.parse("remote:cirulla.internal:443:casual").level == "casual"
    assert EngineSpec.parse("remote:localhost:50051:10000it").iterations == 10_000
    for text in ("remote:127.0.0.1:50051", "remote:127.0.0.1:50051:full", "remote:h:1:100ms",
                 "remote:h:1:300it"):
        assert str(EngineSpec.parse(text)) == text
    for bad, why in (("remote", "remote:HOST:PORT"), ("remote:127.0.0.1", "remote:HOST:PORT"),
                     ("remote:h:99999", "remote:HOST:PORT"), ("remote:h:²", "remote:HOST:PORT"),
                     ("remote:h:1:fast", "a budget is like"),
                     ("remote:h:1:greedy", "searching levels")):
        with pytest.raises(CirullaError, match=why):
            EngineSpec.parse(bad)
    with pytest.raises(CirullaError, match="through a server"):
        make_player(EngineSpec.parse("remote:h:1"), 1)


def test_a_remote_engine_plays_as_the_same_engine_here():
    """remote:HOST:PORT:300it is the server's GetHint at 300 iterations spent
    whole, seeded as the arena seeds ismcts:300it: the same move at every turn
    of a match (the view's trip through the service loses nothing); its level
    form asks ChooseMove and gets a legal move."""
    from cirulla.cli.remote import arena_player
    with running() as server:
        address = f"127.0.0.1:{server.port}"
        remote = arena_player(EngineSpec.parse(f"remote:{address}:300it"), 7)
        here = arena_player(EngineSpec.parse("ismcts:300it"), 7)
        casual = arena_player(EngineSpec.parse(f"remote:{address}:casual"), 7)
        match, turns = Match(Rules(hands=1), seed=4), 0
        while not match.is_over:
            move = here(match)
            assert remote(match) == move, f"turn {turns}"
            assert casual(match) in match.legal_moves
            match.play(move)
            turns += 1
        assert turns > 30
        res = arena(f"remote:{address}", "greedy", rules=Rules(hands=1), pairs=1, seed=2, players=arena_player)
        assert res.a == f"remote:{address}" and res.hands == 2


def test_the_command_says_when_a_remote_engine_cannot_be_reached(capsys, monkeypatch):
    from cirulla.cli import remote
    from cirulla.cli.main import main
    monkeypatch.setattr(remote, "CONNECT_SECONDS", 0.2)
    assert main(["arena", "remote:127.0.0.1:1", "greedy", "--pairs", "1", "--hands", "1"]) == remote.UNREACHABLE
    assert "cannot reach the server at 127.0.0.1:1" in capsys.readouterr().err


def test_a_pair_plays_the_same_deals_with_seats_swapped():
    """Greedy against itself in duplicate: the second game is the first with the
    sides swapped, card for card, so the pair's margin is exactly 0."""
    g = EngineSpec("greedy")
    first, second = play_pair(g, g, Rules(target=21), 5)
    assert first.hands and first.hands == [(b, a) for a, b in second.hands]
    assert first.a_won + second.a_won == 1.0
    assert summarize(g, g, [(first, second)]).margin == 0.0


def test_greedy_beats_random():
    res = arena("greedy", "random", rules=Rules(hands=1), pairs=30, seed=1)
    assert res.pairs == 30 and res.hands >= 60
    lo, hi = res.margin_ci
    assert lo > 0 and lo < res.margin < hi
    assert res.hand_win > 0.6 and res.match_win > 0.6


def test_search_engines_play_whole_matches():
    res = arena("ismcts:300it", "flatmc:300it", rules=Rules(target=11), pairs=2, seed=3)
    assert res.hands >= 4 and 0 <= res.match_win <= 1
    assert res.ms_per_move[0] > 0 and res.ms_per_move[1] > 0
    cheat = arena("cheat:300it", "greedy", rules=Rules(hands=1, players=4), pairs=2, seed=3)
    assert cheat.hands >= 4
    peek = arena("peek:300it", "greedy", rules=Rules(hands=1), pairs=2, seed=3)
    assert peek.hands >= 4 and peek.a == "peek:300it"


def test_a_comparison_is_the_two_runs_paired_deal_by_deal():
    """compare(A, B, C) plays A against C and B against C on the arena's deals,
    and its difference is paired by deal: two engines that play alike differ
    by nothing, to the interval, where each run's own interval is points wide."""
    rules = Rules(hands=1)
    c = compare("random", "greedy", "greedy", rules=rules, pairs=20, seed=4)
    for got, alone in ((c.a, arena("random", "greedy", rules=rules, pairs=20, seed=4)),
                       (c.b, arena("greedy", "greedy", rules=rules, pairs=20, seed=4))):
        assert (got.a, got.b, got.pairs, got.hands, got.margin, got.margin_ci, got.match_win) == \
            (alone.a, alone.b, alone.pairs, alone.hands, alone.margin, alone.margin_ci, alone.match_win)
    assert c.margin_diff == pytest.approx(c.a.margin - c.b.margin) and c.margin_diff < 0
    lo, hi = c.margin_diff_ci
    assert lo < c.margin_diff < hi < 0
    pooled = compare("random", "greedy", "greedy", rules=rules, pairs=20, seed=4, jobs=2)   # A's, B's pairs interleaved
    assert (pooled.margin_diff, pooled.margin_diff_ci, pooled.a.margin, pooled.b.margin) == \
        (c.margin_diff, c.margin_diff_ci, c.a.margin, c.b.margin)
    alike = compare("greedy", "greedy", "random", rules=rules, pairs=20, seed=4)
    assert alike.margin_diff == 0 and alike.margin_diff_ci == (0, 0) and alike.match_win_diff_ci == (0, 0)
    run_lo, run_hi = alike.a.margin_ci
    assert run_hi - run_lo > 1
    with pytest.raises(StateError, match="compare: pairs must be positive"):
        compare("greedy", "greedy", "random", pairs=0)


def test_rules_used_in_this_process_still_go_to_the_worker_processes():
    """Rules pickled their cached core rules (`Rules.core`, a C struct that does
    not pickle): an arena of 2 jobs on Rules that an arena of 1 had used ended
    in a TypeError."""
    rules = Rules(hands=1)
    one = arena("greedy", "random", rules=rules, pairs=4, seed=9)
    two = arena("greedy", "random", rules=rules, pairs=4, seed=9, jobs=2)
    assert (one.margin, one.margin_ci) == (two.margin, two.margin_ci)
    again = pickle.loads(pickle.dumps(rules))
    assert again == rules and again.core.n_sides == rules.core.n_sides == 2


def test_two_sides_only():
    with pytest.raises(StateError, match="two sides"):
        arena("greedy", "random", rules=Rules(players=3), pairs=1)


def test_pairs_and_jobs_out_of_range_are_named():
    """A count below 1 is an error naming it, not a run of one process."""
    from cirulla.solver.arena import ladder
    for call, text in ((lambda: arena("greedy", "random", pairs=0), "arena: pairs"),
                       (lambda: arena("greedy", "random", pairs=1, jobs=0), "arena: jobs must be positive, got 0"),
                       (lambda: ladder(pairs=1, jobs=-1), "ladder: jobs must be positive, got -1")):
        with pytest.raises(StateError, match=text):
            call()


def test_command_line(capsys):
    """`cirulla arena` is the arena's one command line."""
    from cirulla.cli.main import main
    assert main(["arena", "greedy", "random", "--pairs", "3", "--hands", "1", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "margin:" in out and "points/hand (95% CI" in out and "match_win:" in out
    assert main(["arena", "greedy", "nobody", "--pairs", "1"]) == 3
    assert "engines are" in capsys.readouterr().err


def test_the_command_compares_two_engines_against_a_third(capsys, tmp_path):
    from google.protobuf import json_format

    from cirulla.cli.main import main
    from cirulla.v1 import arena_pb2
    args = ["arena", "greedy", "random", "--against", "greedy", "--pairs", "3", "--hands", "1", "--seed", "2"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "against greedy, 3 duplicate pairs each" in out and "margin_diff: +" in out and "paired by deal" in out
    assert main([*args, "--json"]) == 0
    got = json_format.Parse(capsys.readouterr().out, arena_pb2.ArenaComparison())
    assert (got.a.a, got.a.b, got.b.a, got.b.b, got.a.pairs) == ("greedy", "greedy", "random", "greedy", 3)
    assert got.margin_diff == pytest.approx(got.a.margin - got.b.margin) and len(got.margin_diff_ci) == 2
    assert main([*args, "--save", str(tmp_path)]) == 2
    assert "--save with --against" in capsys.readouterr().err


def test_saved_games_are_the_records_of_the_games_played(tmp_path):
    """Every game the arena plays, saved: its record replays, names the engines
    as its players, and the records give the margin the arena measured."""
    res = arena("greedy", "random", rules=Rules(hands=1), pairs=3, seed=4, save=tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == sorted(f"seed{s}-{order}.json" for s in (4, 5, 6) for order in ("AB", "BA"))
    margin = hands = 0
    for f in files:
        m = record.load(tmp_path / f)
        a_side = 0 if f.endswith("-AB.json") else 1
        assert m.is_over and m.side_names[a_side] == "greedy" and m.side_names[1 - a_side] == "random"
        for e in m.events:
            if isinstance(e, HandEnd):
                margin += e.sides[a_side].total - e.sides[1 - a_side].total
                hands += 1
    assert hands == res.hands and margin / hands == pytest.approx(res.margin)
    # the two games of a pair deal the same cards
    first, second = (record.load(tmp_path / f"seed4-{order}.json") for order in ("AB", "BA"))
    assert first.events[0] == second.events[0]


def test_the_command_saves_the_games_with_the_engines_names(tmp_path, capsys):
    """`cirulla arena --save DIR`, the games played in worker processes; the same
    engine twice is told apart as A and B."""
    from cirulla.cli.main import main
    folder = tmp_path / "games"
    assert main(["arena", "greedy", "greedy", "--pairs", "2", "--hands", "1", "--jobs", "2",
                 "--save", str(folder)]) == 0
    assert f"records: 4 games in {folder}" in capsys.readouterr().out
    for f in sorted(folder.iterdir()):
        m = record.load(f)
        assert sorted(m.names) == ["greedy (A)", "greedy (B)"] and m.is_over
    (tmp_path / "file").write_text("")
    assert main(["arena", "greedy", "random", "--pairs", "1", "--save", str(tmp_path / "file" / "games")]) == 1
    assert "--save" in capsys.readouterr().err
    assert main(["arena", "greedy", "random", "--pairs", "1", "--save", str(tmp_path / "file")]) == 2
    assert f"--save {tmp_path / 'file'}: a file, not a folder" in capsys.readouterr().err
