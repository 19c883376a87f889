"""The server's pieces without a network: views on the wire, the core's
answers for a view, the settings, and the schema's lint."""
from __future__ import annotations

import dataclasses
import inspect
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf.message import Message

from cirulla.server import convert
from cirulla.server.config import ServerConfig, parse_config, unknown_variables
from cirulla.server.errors import BadRequest
from cirulla.solver import Deal, HandEnd, Match, Move, Rules, SideScore, StateError, Turn
from cirulla.solver.analysis import DealLuck, Decision, PlayerSummary, Position, SideSummary, Summary, TimelinePoint
from cirulla.solver.arena import ArenaResult
from cirulla.solver.players import GreedyPlayer, Level
from cirulla.solver.puzzles import Puzzle, PuzzleMove, PuzzleSource
from cirulla.solver.search import MoveStats, SearchResult
from cirulla.solver.view import SeatView
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import arena_pb2
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import puzzle_pb2 as zpb
from cirulla.v1 import rules_service_pb2 as rpb
from server_support import choice_position, position, view_msg

ROOT = Path(__file__).resolve().parents[1]


def _views(match: Match, rng: random.Random):
    """Every decision of a random match, as (match, view of the seat to move)."""
    while not match.is_over:
        yield match, match.view(match.to_move)
        match.play(rng.choice(match.legal_moves))


@pytest.mark.parametrize("preset,players", [("classic", 2), ("classic", 3), ("online", 4),
                                            ("relaxed", 2), ("cirullone", 2), ("five", 5)])
def test_view_moves_are_the_matchs(preset, players):
    """The legal moves and the greedy move computed from a seat's view alone are
    those of the full match (R-MOVE, R-DECL-WHEN, R-V5, ...): the hidden cards
    placed in the core's world change nothing the seat can do."""
    rules = Rules.preset(preset, players=players)
    rng = random.Random(players)
    greedy = GreedyPlayer()
    for match, view in _views(Match(rules, seed=11), rng):
        assert view.legal_moves() == match.legal_moves
        assert view.greedy_move() == greedy.choose(match) == match.greedy_move()


def test_view_round_trip():
    rng = random.Random(3)
    for match, _ in _views(Match(Rules.preset("classic", players=4), seed=5), rng):
        for seat in range(4):
            v = match.view(seat)
            assert convert.view_from_proto(convert.view_to_proto(v)) == v


def _violations(msg) -> list[tuple[str, str]]:
    with pytest.raises(BadRequest) as e:
        convert.view_from_proto(msg)
    return e.value.violations


def test_unknown_card_names_its_field():
    msg = view_msg(choice_position())
    msg.hand[2] = "ZZ"
    msg.table.append("1X")
    fields = dict(_violations(msg))
    assert "'ZZ'" in fields["view.hand[2]"] and "'1X'" in fields[f"view.table[{len(msg.table) - 1}]"]


def test_card_seen_twice():
    msg = view_msg(choice_position())
    msg.table.append(msg.hand[0])
    [(field, problem)] = _violations(msg)
    assert field == "view.table" and msg.hand[0] in problem and "also in hand" in problem


def test_holding_of_the_wrong_size():
    msg = view_msg(choice_position())
    del msg.hand[-1]                        # the history shows it was dealt and not played
    [(field, problem)] = _violations(msg)
    assert field == "view.hand" and "holds 3" in problem
    msg.ClearField("history")               # hand_sizes still counts it
    [(field, problem)] = _violations(msg)
    assert field == "view.hand" and "hand_sizes" in problem


def test_counts_that_do_not_add_up_to_the_deck():
    msg = view_msg(choice_position())
    msg.stock_size -= 1
    assert _violations(msg) == [("view.stock_size", "29, but the history gives 30 (JSON: view.stockSize)")]
    msg.ClearField("history")
    [(field, problem)] = _violations(msg)
    assert field == "view" and "40" in problem


def test_counts_the_deal_cannot_give():
    """Views that hold 40 cards but whose counts no deal gives (R-DEAL): a stock
    of the wrong size (cards moved from it to a pile), a round past the last,
    holdings out of turn order (R-DEALER, R-SEATS). The core would deal past
    the deck or wait for a card nobody holds."""
    match = choice_position()
    view = dataclasses.replace(match.view(match.to_move), history=())     # the counts alone
    unseen = view.unseen()
    piles = (view.piles[0], tuple(view.piles[1]) + tuple(unseen[:view.stock_size - 2]))
    moved = convert.view_to_proto(dataclasses.replace(view, piles=piles, stock_size=2))
    assert [f for f, _ in _violations(moved)] == ["view.stock_size"]
    late = convert.view_to_proto(dataclasses.replace(view, round=6))
    [(field, problem)] = _violations(late)
    assert field == "view.round" and "R-DEAL" in problem
    # seat 1 played first, as the dealer's left; named as the dealer, it would play last
    assert (view.dealer, view.to_move, view.hand_sizes) == (0, 0, (3, 2))
    skewed = convert.view_to_proto(dataclasses.replace(view, dealer=1))
    [(field, problem)] = _violations(skewed)
    assert field == "view.hand_sizes[1]" and "R-DEALER" in problem
    # with the hand's history, the replay names the fields it contradicts
    msg = view_msg(match)
    msg.round = 2
    assert _violations(msg) == [("view.round", "2, but the history gives 0")]


def test_view_cannot_carry_other_seats_dealt_cards():
    match = choice_position()
    msg = view_msg(match)
    deal = next(e for e in match.events if hasattr(e, "hands"))
    other = 1 - msg.seat
    msg.history[0].deal.hands[other].cards[:] = [str(c) for c in deal.hands[other]]
    fields = [f for f, _ in _violations(msg)]
    assert fields == [f"view.history[0].deal.hands[{other}]"]


def test_bad_numbers_are_named():
    msg = view_msg(choice_position())
    msg.dealer, msg.scores[1], msg.round, msg.matta_as = 7, -3, 99, "X"
    fields = {f for f, _ in _violations(msg)}
    assert fields == {"view.dealer", "view.scores[1]", "view.round", "view.matta_as"}


def test_bad_rules_and_bad_moves_in_history():
    msg = view_msg(choice_position())
    msg.rules.preset = "poker"
    assert [f for f, _ in _violations(msg)] == ["view.rules.preset"]
    msg = view_msg(position(1, 3))
    turn = next(i for i, e in enumerate(msg.history) if e.HasField("turn"))
    msg.history[turn].turn.move.captured.append("7X")
    [(field, problem)] = _violations(msg)
    assert field == f"view.history[{turn}].turn.move" and "'7X'" in problem


def test_a_history_that_does_not_fit_the_table_is_named():
    """The search reads this round's plays from the history (the inference
    from plays): one that the table cannot have followed is refused."""
    match = position(1, 3)
    msg = view_msg(match)
    view = match.view(msg.seat)
    plays = view.round_plays()
    assert plays
    index, _, table, move = plays[-1]
    if move.is_capture:                             # make it a drop that left nothing on the table
        msg.history[index].turn.move.ClearField("captured")
    else:                                           # make it a capture of a card still on the table
        msg.history[index].turn.move.captured.append(str(next(c for c in view.table if c != move.card)))
    [(field, problem)] = _violations(msg)
    assert field == f"view.history[{index}].turn.move" and "does not fit the table" in problem


def test_only_the_seat_to_move_has_moves():
    match = choice_position()
    view = match.view(1 - match.to_move)
    with pytest.raises(StateError) as e:
        view.legal_moves()
    assert e.value.field == "to_move" and "R-TURN" in e.value.reason


def test_view_with_own_declaration():
    """A seat that declared (R-DECL-WHEN) still holds its declared cards."""
    for seed in range(300):
        match = Match(Rules(), seed=seed)
        declaration = next((m for m in match.legal_moves if m.is_declaration), None)
        if declaration is not None:
            match.play(declaration)                 # the declaring seat is still to move
            view = match.view(match.to_move)
            assert view.public[view.seat]
            assert convert.view_from_proto(convert.view_to_proto(view)) == view
            return
    pytest.skip("no declaration in the seeds tried")


# --- settings ---

def test_config_defaults_are_safe():
    c = parse_config([], env={})
    assert c.listen == "127.0.0.1:50051" and c.token is None and not c.tls


def test_flags_win_over_environment():
    env = {"CIRULLA_MAX_BUDGET_MS": "500", "CIRULLA_LISTEN": "127.0.0.1:6000", "CIRULLA_TOKEN": "s3"}
    c = parse_config(["--listen", "0.0.0.0:7000", "--default-budget-ms", "100"], env=env)
    assert (c.listen, c.max_budget_ms, c.default_budget_ms, c.token) == ("0.0.0.0:7000", 500, 100, "s3")


@pytest.mark.parametrize("argv", [["--listen", "nowhere"], ["--tls-cert", "a.pem"],
                                  ["--max-concurrent-searches", "0"], ["--grace-seconds", "x"],
                                  ["--warm-presets", "classic,poker"]])
def test_bad_settings_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as e:
        parse_config(argv, env={})
    assert e.value.code == 2 and "error" in capsys.readouterr().err


def test_bad_environment_value_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_config([], env={"CIRULLA_MAX_BUDGET_MS": "lots"})
    assert "CIRULLA_MAX_BUDGET_MS: 'lots' is not an integer" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_config([], env={"CIRULLA_GRACE_SECONDS": "soon"})
    assert "CIRULLA_GRACE_SECONDS: 'soon' is not a number" in capsys.readouterr().err


def test_a_variable_that_names_no_setting_is_reported_with_the_likely_one():
    """A typo in a pod's environment would leave a setting at its default
    unnoticed: the server warns of each such CIRULLA_ variable as it starts."""
    env = {"CIRULLA_MAX_BUDGET": "5", "CIRULLA_LISTN": "x", "CIRULLA_NOPE": "1", "CIRULLA_TOKEN": "t",
           "CIRULLA_REQUIRE_ALL": "1", "PATH": "/bin"}
    assert unknown_variables(env) == ["CIRULLA_LISTN (CIRULLA_LISTEN?)", "CIRULLA_MAX_BUDGET (CIRULLA_MAX_BUDGET_MS?)",
                                      "CIRULLA_NOPE"]


@pytest.mark.parametrize(("argv", "env", "named"), [
    (["--max-budget-ms", "0"], {}, "--max-budget-ms 0: must be at least 1"),
    ([], {"CIRULLA_MAX_BUDGET_MS": "-5"}, "CIRULLA_MAX_BUDGET_MS=-5: must be at least 1"),
    (["--max-budget-ms", "100"], {}, "--max-budget-ms 100: the default budget (1000 ms) is larger"),
    (["--grace-seconds", "-1"], {}, "--grace-seconds -1.0: must be a finite number, not negative"),
    (["--grace-seconds", "nan"], {}, "--grace-seconds nan: must be a finite number, not negative"),
    ([], {"CIRULLA_GRACE_SECONDS": "inf"}, "CIRULLA_GRACE_SECONDS=inf: must be a finite number, not negative"),
    ([], {"CIRULLA_TLS_KEY": "k.pem"}, "CIRULLA_TLS_KEY=k.pem: TLS needs both"),
    ([], {"CIRULLA_LOG_LEVEL": "LOUD"}, "CIRULLA_LOG_LEVEL=LOUD: must be DEBUG, INFO, WARNING or ERROR"),
    (["--log-level", "debug"], {"CIRULLA_LOG_FORMAT": "xml"}, "CIRULLA_LOG_FORMAT=xml: must be text or json")])
def test_a_refused_setting_is_named_by_its_flag_or_variable(argv, env, named, capsys):
    """The service's own names (max_budget_ms) are neither what the operator
    typed nor what the pod's environment holds."""
    with pytest.raises(SystemExit) as e:
        parse_config(argv, env=env)
    assert e.value.code == 2 and named in capsys.readouterr().err


def test_config_checks_itself():
    with pytest.raises(ValueError, match="default_budget_ms"):
        ServerConfig(default_budget_ms=20_000, max_budget_ms=1_000)
    for address, why in (("nowhere", "must be HOST:PORT, got 'nowhere'"), (":50051", "must be HOST:PORT"),
                         ("127.0.0.1:²", "must be HOST:PORT"),
                         ("127.0.0.1:99999", "with a port from 0 to 65535, got '127.0.0.1:99999'")):
        with pytest.raises(ValueError, match=why):
            ServerConfig(listen=address)
    with pytest.raises(ValueError, match="metrics_listen"):
        ServerConfig(metrics_listen="127.0.0.1:70000")


# --- the schema ---

def test_buf_lint_standard():
    buf = shutil.which("buf")
    if buf is None:
        pytest.skip("buf is not on the PATH (pip install -e '.[test]' in an active venv)")
    done = subprocess.run([buf, "lint"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "STANDARD" in (ROOT / "buf.yaml").read_text()


CONTRACT = ROOT / "proto" / "cirulla.v1.binpb"     # the v1 schema as released: a change must not break it


def test_buf_breaking_against_the_v1_contract():
    buf = shutil.which("buf")
    if buf is None:
        pytest.skip("buf is not on the PATH (pip install -e '.[test]' in an active venv)")
    done = subprocess.run([buf, "breaking", "--against", str(CONTRACT)], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_buf_breaking_catches_a_breaking_change(tmp_path):
    """The check can fail: a field renumbered in a copy of the schema breaks the contract."""
    buf = shutil.which("buf")
    if buf is None:
        pytest.skip("buf is not on the PATH (pip install -e '.[test]' in an active venv)")
    shutil.copytree(ROOT / "proto", tmp_path / "proto", ignore=shutil.ignore_patterns("*.py", "*.pyi", "*.binpb"))
    shutil.copy(ROOT / "buf.yaml", tmp_path)
    game = tmp_path / "proto" / "cirulla" / "v1" / "game.proto"
    game.write_text(game.read_text().replace("int32 to_move = 6 ", "int32 to_move = 21 "))
    done = subprocess.run([buf, "breaking", "--against", str(CONTRACT)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and "to_move" in done.stdout + done.stderr


# --- every domain value and its message carry the same fields ---------------------------

@dataclasses.dataclass(frozen=True)
class Mirror:
    """A domain type and the message(s) its converter writes it to or reads it
    from, by same-named fields (convert.to_message and from_message; record's
    and engine info's converters by hand); what differs is listed, with why."""
    domain: type
    messages: tuple[type[Message], ...]
    not_sent: dict[str, str] = dataclasses.field(default_factory=dict)     # domain field: why it stays home
    given: dict[str, str] = dataclasses.field(default_factory=dict)        # wire field the converter spells out
    renamed: dict[str, str] = dataclasses.field(default_factory=dict)      # domain field: its wire name


MIRRORS = [
    Mirror(SeatView, (pb.SeatView,)),
    Mirror(Move, (pb.Move,), not_sent={"matta": "which card the matta is comes with the rules (R-MATTA): "
                                                "the reader passes it"},
           given={"text": "the move's text form, str(move)"}),
    Mirror(Rules, (pb.Rules,), renamed={"name": "preset"}),
    Mirror(Deal, (pb.Deal,)), Mirror(Turn, (pb.Turn,)), Mirror(HandEnd, (pb.HandEnd,)),
    Mirror(SideScore, (pb.SideScore,)),
    Mirror(Match, (rpb.MatchState,),
           not_sent={"rules": "the client sent them", "names": "the client sent them, in the record",
                     "events": "the client sent them: the record", "first_dealer": "the record's first deal says",
                     "manual_deal": "how the replay was dealt, no state of the match", "is_over": "phase OVER says",
                     "side_names": "the names joined", "core": "the core's own struct, no message",
                     "matta_as": "the declaration that named it says, in the record"},
           given={"hands": "hand(seat) by seat", "public": "public(seat) by seat", "piles": "pile(side) by side",
                  "hand_points": "hand_points(), a SideScore by side"}),
    Mirror(SearchResult, (epb.Hint, epb.EngineStats),
           not_sent={"info": "the search's own counts (worlds, nodes, rejected draws), for logs and benches"},
           given={"seed": "the request's seed", "stats": "the EngineStats beside the Hint, nested"}),
    Mirror(MoveStats, (epb.MoveEvaluation,),
           given={"reason": "the hint's reasons (reasons.hint_reasons), in the request's language: words from the "
                            "figures, no figure of their own"}),
    Mirror(Level, (epb.StrengthInfo,),
           not_sent={"temperature": "how the level plays", "slip": "how the level plays",
                     "grab": "how the level plays",
                     "settles": "the default budget's stopping rule (GetEngineInfoResponse.stopping_rule)"},
           given={"strength": "the Strength the level is served as",
                  "label": "the name, translated into the request's language", "rating": "players.RATINGS",
                  "rating_low": "players.RATINGS", "rating_high": "players.RATINGS",
                  "rating_pairs": "players.RATINGS"}),
    Mirror(Decision, (apb.DecisionAnalysis,)), Mirror(Position, (apb.DecisionPosition,)),
    Mirror(Summary, (apb.AnalysisSummary,)), Mirror(PlayerSummary, (apb.PlayerSummary,)),
    Mirror(SideSummary, (apb.SideSummary,)), Mirror(DealLuck, (apb.DealLuck,)),
    Mirror(TimelinePoint, (apb.TimelinePoint,)),
    Mirror(ArenaResult, (arena_pb2.ArenaResult,), given={"rules": "the rules the arena played, the caller's"}),
    Mirror(Puzzle, (zpb.Puzzle,)), Mirror(PuzzleMove, (zpb.PuzzleMove,)), Mirror(PuzzleSource, (zpb.PuzzleSource,)),
]


def _fields(cls: type) -> set[str]:
    """What a value of `cls` holds: a dataclass's fields; a match's public
    attributes and properties (Match is no dataclass)."""
    if cls is Match:
        return {name for name in vars(Match(Rules(), seed=1)) if not name.startswith("_")} | _properties(Match)
    return {f.name for f in dataclasses.fields(cls)}


def _properties(cls: type) -> set[str]:
    """What to_message also copies: the values a type derives (accuracy, total)."""
    return {name for name, _ in inspect.getmembers(cls, lambda v: isinstance(v, property)) if not name.startswith("_")}


@pytest.mark.parametrize("mirror", MIRRORS, ids=lambda m: f"{m.domain.__name__}-{m.messages[0].__name__}")
def test_every_domain_field_travels_and_every_wire_field_is_filled(mirror):
    """Renaming or adding a field on one side and not the other would drop it
    from the wire without a word (to_message skips what it does not find)."""
    domain = _fields(mirror.domain)
    wire = set().union(*(m.DESCRIPTOR.fields_by_name for m in mirror.messages))
    assert domain - wire - set(mirror.renamed) == set(mirror.not_sent), "domain fields with no wire field"
    assert wire - domain - _properties(mirror.domain) - set(mirror.renamed.values()) == set(mirror.given), \
        "wire fields that no domain field fills"
    assert set(mirror.renamed) <= domain and set(mirror.renamed.values()) <= wire
    assert all(mirror.not_sent.values()) and all(mirror.given.values())     # each with its why
