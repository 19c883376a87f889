"""The `cirulla` command line: play driven through its terminal
input, hint and analyze locally and through a server, arena, serve, JSON
output, help, and the exit codes of missing files, broken records and
unreachable servers."""
from __future__ import annotations

import gettext
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf import json_format

from cirulla.cli import remote
from cirulla.cli.main import main
from cirulla.cli.play import help_text, move_in_menu_words
from cirulla.server.convert import view_to_proto
from cirulla.solver import Deal, Match, Move, Rules, Turn, record
from cirulla.solver.cards import Card, sort_key
from cirulla.solver.i18n import LANGUAGES, translator
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import arena_pb2, game_pb2
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1.embedded_engine_pb2 import Failure
from rules_support import drawn

CLI = [sys.executable, "-m", "cirulla.cli.main"]
ENV = {**os.environ, "NO_COLOR": "1"}


def run(*args, stdin: str = "", timeout: float = 90, columns: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], input=stdin, capture_output=True, text=True,
                          timeout=timeout, env={**ENV, "COLUMNS": str(columns)})


def cli(capsys, *args) -> tuple[int, str, str]:
    """main() in this process: exit code, stdout, stderr."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err



@pytest.fixture(scope="module")
def game(tmp_path_factory) -> Path:
    """A finished one-hand match between greedy players, saved as a record."""
    m = Match(Rules(hands=1), seed=21, names=["Ada", "Bea"])
    g = GreedyPlayer()
    while not m.is_over:
        m.play(g.choose(m))
    path = tmp_path_factory.mktemp("records") / "game.json"
    record.save(m, path)
    return path


# --- play ---------------------------------------------------------------------------

def first_moves_replayed(path: Path, human: int = 0) -> tuple[Match, int]:
    """Replay a saved record; count the human's turns that played the first
    legal move (what the input "1" chose)."""
    saved = record.load(path)
    replay = Match(saved.rules, dealer=saved.first_dealer, manual_deal=True)
    chose_first = 0
    for e in saved.events:
        if isinstance(e, Turn):
            if e.seat == human:
                chose_first += e.move == replay.legal_moves[0]
            replay.play(e.move)
        elif isinstance(e, Deal):
            replay.deal(e.hands, e.table)
    return saved, chose_first


def test_play_a_hand_through_the_terminal_input(tmp_path):
    save = tmp_path / "played.json"
    # the same seed deals the same cards: the first decision's last move, by its text
    preview = Match(Rules(hands=1), seed=3)
    while preview.to_move != 0:
        preview.play(GreedyPlayer().choose(preview))
    text_move = str(preview.legal_moves[-1])
    lines = ["help", "hint", "99", "ZZ x 1", text_move] + ["1"] * 40
    done = run("play", "--hands", "1", "--seed", 3, "--level", "greedy", "--save", save, "--hint-ms", 50,
               stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Commands:" in out                                     # help
    assert "The engine's ranking of your moves" in out and "expected" in out   # hint, with figures
    assert re.search(r"why\s+\d+\s+\S.*the runner-up", " ".join(out.split()))     # ... and the reasons
    assert "there is no move 99: the moves are 1 to" in out       # a bad move is refused, play goes on
    assert "'ZZ x 1' is not a move: type its number" in out
    assert re.search(r"Hand 1\s", out) and "The match is over" in out and f"Record saved to {save}" in out
    assert re.search(r"This hand: You \d+.* – Engine( 1)? \d+", out)           # the hand's points so far
    saved, chose_first = first_moves_replayed(save)
    assert saved.is_over and saved.hand_number == 0
    human = [e for e in saved.events if isinstance(e, Turn) and e.seat == 0]
    assert str(human[0].move) == text_move
    assert chose_first >= len(human) - 1 and len(human) >= 17     # every other move was "1"


def test_play_refuses_a_bad_move_in_the_players_language_and_reads_no_markup_in_it(tmp_path):
    """What a player types is never rich markup (a stray [/] ended play with a
    traceback), a refused move is explained in the player's language, the
    rule's id beside it, and the commands have their words in it."""
    save = tmp_path / "it.json"
    preview = Match(Rules(hands=1), seed=3)
    while preview.to_move != 0:
        preview.play(GreedyPlayer().choose(preview))
    foreign = next(str(c) for c in ("KD", "KH", "KS", "KC") if Card.parse(c) not in preview.hand(0))
    lines = ["[/]", "[bold]x", "0", "²", foreign, "Aiuto", "esci"]        # the commands in Italian too
    done = run("play", "--hands", "1", "--seed", 3, "--level", "greedy", "--save", save, "--lang", "it",
               stdin="\n".join(lines) + "\n")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    out = " ".join(done.stdout.split())
    assert "'[/]' non è una mossa: scrivi il suo numero" in out and "'[bold]x' non è una mossa" in out
    assert "non c'è la mossa 0" in out and "'²' non è una mossa" in out      # a digit int() does not read
    assert f"{foreign}: il posto 0 non ha in mano {foreign} (si gioca una carta che si ha in mano, R-TURN)" in out
    assert "Scrivi aiuto per i comandi" in out and "consiglio (la classifica delle tue mosse" in out
    assert record.load(save).events and f"Partita salvata in {save}" in out


def test_play_reads_a_move_typed_as_the_menu_writes_it(tmp_path):
    """The menu writes "dichiara 6♦ 6♥ 7♥" and "6♦ prende 2♠ 4♠" for an Italian
    player; typed back so (or in English, or with the hint table's ×) they
    were refused as no move."""
    preview = Match(Rules(hands=1), seed=25)
    assert str(preview.legal_moves[0]) == "declare 6D 6H 7H=6" and preview.to_move == 0
    save = tmp_path / "words.json"
    done = run("play", "--hands", "1", "--seed", 25, "--level", "greedy", "--save", save, "--lang", "it",
               stdin="Dichiara 6♦ 6♥ 7♥=6\n6♦ PRENDE 2♠ 4♠\nesci\n")
    assert done.returncode == 0 and "non è una mossa" not in done.stdout, done.stdout
    human = [str(e.move) for e in record.load(save).events if isinstance(e, Turn) and e.seat == 0]
    assert human == ["declare 6D 6H 7H=6", "6D x 2S 4S"]
    out = " ".join(done.stdout.split())
    assert "Le tue carte: 6♦ 6♥ 7♥*" in out and "1 dichiara 6♦ 6♥ 7♥* (matta come 6)" in out   # the matta starred
    tr = translator("it")
    assert [move_in_menu_words(text, tr).split() for text in ("5♣ sul tavolo", "5C on the table", "7C × 2C 5S",
                                                              "7C takes 2C", "prendere")] == \
        [["5♣"], ["5C"], ["7C", "x", "2C", "5S"], ["7C", "x", "2C"], ["prendere"]]
    class Bare(gettext.NullTranslations):           # a language whose capture has no word between the cards
        def gettext(self, message: str) -> str:
            return "%(card)s %(cards)s" if message == "%(card)s takes %(cards)s" else message
    assert move_in_menu_words("7♣ 2♣", Bare()) == "7♣ 2♣"     # (an empty word matched between the symbols)
    for lang in LANGUAGES:                          # the help's examples are moves play reads
        examples = re.search(r"\((.*?)\)", help_text(translator(lang))).group(1).split(", ")
        assert all(Move.of(move_in_menu_words(text, translator(lang)), matta=Card.parse("7H")) for text in examples)


def test_play_takes_a_level_by_its_name_in_italian_too(tmp_path):
    """play names its level in the player's language (motori al livello
    amatore): that name is a --level too; an unknown one is the flag's error."""
    done = run("play", "--hands", "1", "--seed", 3, "--level", "Amatore", "--save", tmp_path / "a.json",
               stdin="quit\n")
    assert done.returncode == 0 and "engines at level casual" in " ".join(done.stdout.split()), done.stderr
    done = run("play", "--level", "esperto", stdin="quit\n")
    assert done.returncode == 2 and "argument --level: 'esperto' is no level: random, greedy, beginner" in done.stderr


def test_names_and_paths_are_shown_as_given_never_read_as_markup(tmp_path, capsys):
    """A record's player names and a command's arguments are the user's text:
    "[/]" in them crashed analyze, hint and play (rich markup) before."""
    m = Match(Rules(hands=1), seed=3, names=["[/]", "[bold]B"])
    while not m.is_over:
        m.play(m.greedy_move())
    path = tmp_path / "names.json"
    record.save(m, path)
    code, out, _ = cli(capsys, "analyze", path, "--iterations", 200, "--all")
    assert code == 0 and "[/] " in out and "[bold]B" in out
    code, _, err = cli(capsys, "hint", "[/]")
    assert code == 5 and "[/]: no such file" in err
    code, _, err = cli(capsys, "arena", "greedy:[/]", "greedy")
    assert code == 3 and "engine 'greedy:[/]'" in err
    done = run("play", "--hands", "1", "--seed", 3, "--name", "[/]", "--save", tmp_path / "p.json", stdin="1\nquit\n")
    assert done.returncode == 0 and "You are [/] (seat 0)" in " ".join(done.stdout.split()), done.stderr
    assert record.load(tmp_path / "p.json").names[0] == "[/]"             # kept as given
    (tmp_path / "[").mkdir()                                 # paths: "[/]p.json" is "]p.json" in the folder "["
    done = run("play", "--hands", "1", "--seed", 3, "--save", tmp_path / "[/]p.json", stdin="quit\n")
    assert done.returncode == 0 and f"Record saved to {tmp_path}/[/]p.json" in done.stdout, done.stderr
    code, out, _ = cli(capsys, "analyze", tmp_path / "[/]p.json", "--iterations", 100, "--html", tmp_path / "[/]r.html")
    assert code == 0 and f"Report written to {tmp_path}/[/]r.html" in " ".join(out.split())
    code, out, _ = cli(capsys, "arena", "greedy", "greedy", "--pairs", 1, "--hands", 1, "--save", tmp_path / "[/]g")
    assert code == 0 and f"records: 2 games in {tmp_path}/[/]g" in " ".join(out.split())
    assert "rules: classic, 2 players, 1 hand a match" in out     # (it read "1 hand(s) per match")


def test_a_terminal_without_utf8_reads_the_game_in_plain_ascii(tmp_path):
    """Under LC_ALL=C the streams are ASCII: the suits, dashes and accents are
    written in plain letters (7S, -, e), where the first line raised
    UnicodeEncodeError."""
    env = {k: v for k, v in ENV.items() if k != "PYTHONIOENCODING"}
    done = subprocess.run([*CLI, "play", "--seed", "3", "--lang", "it", "--save", str(tmp_path / "c.json")],
                          input=b"1\nesci\n", capture_output=True, timeout=90,
                          env={**env, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"})
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr.decode("ascii", "replace")
    out = done.stdout.decode("ascii")                        # ASCII all through
    assert "Cirulla - classic" in out and "Le tue carte: " in out and "Partita salvata" in out
    assert re.search(r"Le tue carte: [A2-7JQK][SHDC] [A2-7JQK][SHDC] [A2-7JQK][SHDC]", out)
    # data keeps its every character: JSON goes out in UTF-8, as JSON is, whatever the terminal's encoding
    done = subprocess.run([*CLI, "hint", str(tmp_path / "c.json"), "--json", "--lang", "it", "--iterations", "300"],
                          capture_output=True, timeout=90, env={**env, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0"})
    assert done.returncode == 0, done.stderr.decode("ascii", "replace")
    reasons = [m["reason"] for m in json.loads(done.stdout.decode("utf-8"))["hint"]["moves"] if m.get("reason")]
    assert reasons and any(c in "".join(reasons) for c in "èàùò")       # the Italian's accents, as given


def test_five_players_play_their_variant_and_a_preset_for_five_names_the_clash(tmp_path, capsys):
    """--players 5 is the five-player variant (R-V5), as five at a table play;
    the preset five with another count, or with cirullone, is a usage error."""
    done = run("play", "--players", 5, "--save", tmp_path / "five.json", stdin="quit\n")
    assert done.returncode == 0 and "5 players" in done.stdout, done.stderr
    assert record.load(tmp_path / "five.json").rules.five_players
    code, _, err = cli(capsys, "play", "--preset", "five", "--players", 4)
    assert code == 2 and "--players 4: the five_players variant (R-V5) is for 5 players, got 4" in err
    code, _, err = cli(capsys, "play", "--preset", "cirullone", "--players", 5)
    assert code == 2 and "--players 5: cirullone (R-VC) and five_players (R-V5) do not combine" in err


def test_quitting_saves_a_record_that_replays_and_analyses(tmp_path, capsys):
    save = tmp_path / "quit.json"
    done = run("play", "--seed", 5, "--players", 3, "--level", "beginner", "--save", save,
               stdin="1\n1\nquit\n")
    assert done.returncode == 0 and "Record saved" in done.stdout
    saved = record.load(save)
    assert not saved.is_over and sum(isinstance(e, Turn) and e.seat == 0 for e in saved.events) == 2
    code, out, _ = cli(capsys, "analyze", save, "--iterations", 500, "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["decisions"]) == sum(isinstance(e, Turn) for e in saved.events)


def test_play_json_reports_the_record(tmp_path):
    save = tmp_path / "j.json"
    done = run("play", "--seed", 1, "--save", save, "--json", stdin="quit\n")
    assert done.returncode == 0 and "Cirulla" in done.stderr      # the game's text on stderr
    printed = json_format.Parse(done.stdout, game_pb2.Record())      # stdout: the record alone
    assert printed == record.to_proto(record.load(save))


# --- hint ---------------------------------------------------------------------------

def test_hint_on_a_record_at_an_event(capsys, game):
    m = record.load(game)
    event = next(i for i, e in enumerate(m.events) if isinstance(e, Turn) and i > 8)
    code, out, _ = cli(capsys, "hint", game, "--event", event, "--iterations", 2000, "--json")
    assert code == 0
    answer = json_format.Parse(out, epb.GetHintResponse())
    from cirulla.cli.records import position_at
    at = position_at(m, event)
    assert answer.view == view_to_proto(at.view(m.events[event].seat))
    assert sorted(x.move.text for x in answer.hint.moves) == sorted(str(x) for x in at.legal_moves)
    code, out, _ = cli(capsys, "hint", game, "--event", event, "--iterations", 2000)
    assert code == 0 and f"Seat {answer.view.seat} to move before event {event}" in out and "scopa risk" in out


def test_a_hints_reasons_draw_their_cards_in_the_readers_terms(capsys):
    """The service's reasons name cards by code (3C x 4S JS); in the terminal
    they are drawn as cards (3♣ × 4♠ J♠), as the table draws them: an Italian
    reader would take the C of 3C for cuori (hearts)."""
    view = Path(__file__).parents[1] / "examples" / "view.json"
    code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2000, "--lang", "it", "--json")
    assert code == 0
    reasons = [m["reason"] for m in json.loads(out)["hint"]["moves"] if m.get("reason")]
    assert reasons and all(re.search(r"\b[A2-7JQK][DHCS]\b", r) for r in reasons)     # the wire keeps codes
    code, out, _ = cli(capsys, "hint", "--view", view, "--iterations", 2000, "--lang", "it")
    why = " ".join(out[out.index("perché"):].split())
    assert code == 0 and all(drawn(r).split()[0] in why for r in reasons)
    assert not re.search(r"\b[A2-7JQK][DHCS]\b", why), why


def test_hint_defaults_to_the_last_decision_and_checks_the_seat(capsys, game):
    m = record.load(game)
    turns = [(i, e.seat) for i, e in enumerate(m.events) if isinstance(e, Turn)]
    code, out, _ = cli(capsys, "hint", game, "--seat", 1, "--iterations", 500, "--json")
    from cirulla.cli.records import position_at
    last = position_at(m, max(i for i, s in turns if s == 1))
    assert code == 0 and json_format.Parse(out, epb.GetHintResponse()).view == view_to_proto(last.view(1))
    first = turns[0][0]
    code, _, err = cli(capsys, "hint", game, "--event", first, "--seat", 1 - turns[0][1])
    assert code == 3 and "is to move there" in err


def test_hint_for_a_view_file(capsys, tmp_path):
    m = Match(Rules(), seed=2)
    path = tmp_path / "view.json"
    path.write_text(json_format.MessageToJson(view_to_proto(m.view(m.to_move))))
    code, out, _ = cli(capsys, "hint", "--view", path, "--iterations", 1000, "--json")
    assert code == 0
    assert sorted(x["move"]["text"] for x in json.loads(out)["hint"]["moves"]) == \
        sorted(str(x) for x in m.legal_moves)
    bad = json.loads(path.read_text())
    bad["hand"][0] = "ZZ"
    path.write_text(json.dumps(bad))
    code, _, err = cli(capsys, "hint", "--view", path)
    assert code == 3 and "hand[0]" in err and "ZZ" in err
    code, out, err = cli(capsys, "hint", "--view", path, "--json")      # the failure, as a message
    failure = json_format.Parse(out, Failure())
    assert code == 3 and failure.code == "INVALID_ARGUMENT" and "ZZ" in err
    assert [v.field for v in failure.field_violations] == ["view.hand[0]"]


def test_a_files_violations_give_the_json_name_too(capsys, game, tmp_path):
    """A record is JSON: a violation of `events[i].hand_end.leftover_side`
    names `events[i].handEnd.leftoverSide` too, as the server's answers do."""
    data = json.loads(game.read_text())
    i = next(i for i, e in enumerate(data["events"]) if "handEnd" in e)
    data["events"][i]["handEnd"]["leftoverSide"] = 3
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    code, out, _ = cli(capsys, "hint", broken, "--json")
    violation = json_format.Parse(out, Failure()).field_violations[0]
    assert code == 3 and violation.field == f"events[{i}].hand_end.leftover_side"
    assert violation.description.endswith(f"(JSON: events[{i}].handEnd.leftoverSide)")


# --- analyze ------------------------------------------------------------------------

def test_analyze_prints_tables_and_json(capsys, game):
    code, out, _ = cli(capsys, "analyze", game, "--iterations", 1000, "--all")
    assert code == 0
    for title in ("Players", "Where the result came from", "Luck of each deal", "Every decision"):
        assert title in out
    assert "Ada" in out and "Bea" in out
    code, out, _ = cli(capsys, "analyze", game, "--iterations", 1000, "--json", "--seed", 4)
    json_format.Parse(out, apb.GameAnalysis())                       # one named message
    data = json.loads(out)
    m = record.load(game)
    assert len(data["decisions"]) == sum(isinstance(e, Turn) for e in m.events)
    s0, s1 = data["summary"]["sides"]
    assert s0["result"] == m.scores[0] - m.scores[1]
    assert abs(s0["start"] + s0["luck"] + s0["play"] + s0["rest"] - s0["result"]) < 1e-9


def test_analyze_at_80_columns_shows_every_move_whole(game):
    """The decisions table stacks each row's moves, so a terminal of 80 columns
    cuts none of them short with an ellipsis (a long one, a declaration with
    the starred matta, goes on to the next line)."""
    from rich.text import Text

    from cirulla.cli.render import move_text
    done = run("analyze", game, "--iterations", 300, "--seed", 1, "--all", columns=80)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "…" not in out and max(map(len, out.splitlines())) <= 80
    table = out[out.index("Every decision"):out.index("h.r: hand.round")].splitlines()
    shown: list[str] = []                   # the moves column's moves, a line that goes on joined to its own
    for line in table:
        cells = line.split("│")
        if len(cells) > 4:
            label, move = cells[4][:12].strip(), cells[4][12:].strip()
            if label:
                shown.append(move)
            elif move and shown:
                shown[-1] += " " + move
    m = record.load(game)
    played = [Text.from_markup(move_text(str(e.move), m.rules.matta_card)).plain      # the matta starred: 7♥*
              for e in m.events if isinstance(e, Turn)]
    assert [p for p in played if not any(s.startswith(p) for s in shown)] == []


def test_analyze_writes_the_html_report(capsys, game, tmp_path):
    page = tmp_path / "r.html"
    code, out, _ = cli(capsys, "analyze", game, "--iterations", 800, "--html", page)
    assert code == 0 and f"Report written to {page}" in out
    text = page.read_text()
    assert text.startswith("<!doctype html>") and '<svg id="evaluation"' in text
    assert "http://" not in text.replace("http://www.w3.org", "")                            # self-contained
    assert not re.search(r"<script[^>]*\bsrc=", text) and "Content-Security-Policy" in text


def test_analyze_shows_each_errors_position_and_why(capsys, tmp_path):
    """The terminal output: after the table, each error's position (table,
    hand, unseen cards, scores) and why it lost, in words."""
    sys.path.insert(0, str(Path(__file__).parent))
    from test_analysis import drop_handing_a_scopa, record_where

    from cirulla.solver.analysis import analyze_all
    match, event = record_where(drop_handing_a_scopa)
    path = tmp_path / "blunder.json"
    record.save(match, path)
    code, out, _ = cli(capsys, "analyze", path, "--iterations", 1500, "--seed", 1)
    assert code == 0
    decisions, _ = analyze_all(match, iterations=1500, seed=1)
    errors = [d for d in decisions if d.judgement]
    blunder = next(d for d in errors if d.event_index == event)
    assert f"Positions ({len(errors)})" in out and "the matta (wild card)" in out
    panels = out[out.index("Positions ("):]
    flat = " ".join(panels.replace("│", " ").split())
    for d in errors:
        assert f"#{d.number + 1} · hand {d.hand + 1}, round {d.round + 1}" in flat
        assert drawn(d.reason, match.rules.matta_card) in flat
    one = flat[flat.index(f"#{blunder.number + 1} · hand"):]
    cards = lambda cs: " ".join(c.symbol for c in sorted(cs, key=lambda c: (c.rank, c.suit)))   # noqa: E731
    assert one.index("table " + cards(blunder.position.table)) < one.index("hand " + cards(blunder.position.hand))
    assert f"unseen ({len(blunder.position.unseen)})" in one and "score " in one
    assert "played " + blunder.played.card.symbol in one


class Backwards(frozenset):
    """A set of cards that iterates against the order a Move prints them (as a set
    may in another process, its cards' hashes being their addresses)."""

    def __iter__(self):
        return iter(sorted(frozenset.__iter__(self), key=sort_key, reverse=True))


def test_a_reason_names_cards_as_a_move_prints_them(game):
    from cirulla.solver.analysis import ErrorKind, analyze_all, explain
    decisions, _ = analyze_all(record.load(game), iterations=200, seed=1)
    d = next(d for d in decisions if not d.forced)
    two, queen, ace, five = (Card.parse(c) for c in ("2H", "QH", "AD", "5S"))
    missed = replace(d, kind=ErrorKind.MISSED_CAPTURE, played=Move(card=five),
                     best=Move(card=Card.parse("4D"), captured=Backwards({queen, two})))
    assert "5S takes nothing, where 4D x 2H QH takes 2H QH" in explain(missed)
    gave = replace(d, kind=ErrorKind.GAVE_SCOPA, played=Move(card=five),
                   position=replace(d.position, table=(queen, two, ace)))
    assert explain(gave).startswith("5S leaves AD 2H 5S QH (17) on the table")


def test_cards_in_the_terminal_are_in_colour_with_the_matta_marked():
    from rich.console import Console

    from cirulla.cli import render
    from cirulla.solver.cards import Card
    seven, king = Card.parse("7H"), Card.parse("KS")
    console = Console(force_terminal=True, color_system="standard", width=80)
    with console.capture() as got:
        console.print(render.cards([king, seven], matta=seven), highlight=False)
    text = got.get()
    assert "\x1b[31m7♥\x1b[0m\x1b[1;33m*" in text           # hearts red, the matta starred
    assert "\x1b[1mK♠" in text
    with console.capture() as got:
        console.print(render.move_text("7D x 7H", matta=seven), highlight=False)
    assert "\x1b[1;31m7♦" in got.get()


def test_the_live_line_shows_the_hands_points_so_far():
    from cirulla.cli.play import hand_points_line
    m = Match(Rules(hands=1), seed=3, names=["You", "Engine"])
    g = GreedyPlayer()
    line = hand_points_line(m)
    while not m.is_over and not any(p["scope"] for p in m.hand_points()):
        m.play(g.choose(m))
        line = hand_points_line(m)
    points = m.hand_points()
    for name, p in zip(m.side_names, points, strict=True):
        assert f"{name} [bold]{p['scope'] + p['declarations']}[/]" in line
    assert re.search(r"\(1 scopa\b|\(\d+ scope\b", line)


# --- errors and exit codes ------------------------------------------------------------

def test_a_missing_file_exits_5(capsys, tmp_path):
    for args in (("analyze", tmp_path / "nope.json"), ("hint", tmp_path / "nope.json"),
                 ("hint", "--view", tmp_path / "nope.json")):
        code, _, err = cli(capsys, *args)
        assert code == 5 and "no such file" in err
    for args in (("hint", tmp_path), ("hint", "--view", tmp_path)):     # (analyze reads a folder of records)
        code, _, err = cli(capsys, *args)
        assert code == 5 and f"{tmp_path}: a folder, not a file" in err


def test_a_broken_record_exits_3_naming_the_event(capsys, game, tmp_path):
    data = json.loads(game.read_text())
    turn = next(i for i, e in enumerate(data["events"]) if "turn" in e)
    data["events"][turn]["turn"]["move"] = {"card": "KD", "captured": ["AS"]}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    for command in ("analyze", "hint"):             # the file named, then the event
        code, _, err = cli(capsys, command, broken)
        assert code == 3 and f"{broken}: event {turn}" in err
    broken.write_text("{ not json")
    code, _, err = cli(capsys, "analyze", broken)
    assert code == 3 and f"{broken}: not JSON" in err
    code, out, _ = cli(capsys, "hint", broken, "--json")       # the failure's field for programs too
    assert code == 3 and str(broken) in json.loads(out)["message"]


def test_a_file_that_is_no_json_object_is_named_not_a_traceback(capsys, tmp_path):
    """A file that is not UTF-8, JSON nested past the parser, or JSON that is no
    object: exit 3 naming the file (each raised a traceback before)."""
    binary, deep, number, array = (tmp_path / n for n in ("b.json", "deep.json", "n.json", "a.json"))
    binary.write_bytes(b'{"view": "\xf0\x28\x8c\x28"}')
    deep.write_text("[" * 100_000)
    number.write_text('{"view": 5}')
    array.write_text("[1, 2]")
    for args, why in ((("hint", binary), "not JSON: not UTF-8 text"), (("analyze", binary), "not JSON: not UTF-8 text"),
                      (("hint", "--view", binary), "not a cirulla.v1.SeatView in JSON"),
                      (("hint", "--view", deep), "nested too deeply"), (("hint", deep), "nested too deeply"),
                      (("hint", "--view", number), "a SeatView is a JSON object"),
                      (("hint", "--view", array), "a SeatView is a JSON object")):
        code, _, err = cli(capsys, *args)
        assert code == 3 and f"{args[-1]}: " in err and why in err, (args, err)


def test_an_unreachable_server_exits_4(capsys, game, monkeypatch):
    monkeypatch.setattr(remote, "CONNECT_SECONDS", 0.5)
    with socket.socket() as s:                      # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for command in ("analyze", "hint"):
        code, _, err = cli(capsys, command, game, "--server", f"127.0.0.1:{port}")
        assert code == 4 and "cannot reach the server" in err
    for bad in ("nowhere", "h:²", "h:70000"):
        code, _, err = cli(capsys, "hint", game, "--server", bad)
        assert code == 2 and "HOST:PORT" in err, bad


def test_usage_errors_exit_2_and_help_has_examples(capsys):
    with pytest.raises(SystemExit) as e:
        main(["analyze"])
    assert e.value.code == 2
    for command in ("play", "hint", "analyze", "arena"):
        with pytest.raises(SystemExit) as e:
            main([command, "--help"])
        out = capsys.readouterr().out
        assert e.value.code == 0 and "examples:" in out and "--json" in out
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "--max-budget-ms" in out          # ours, then the server's flags
    done = run("--help")
    assert done.returncode == 0 and "exit codes" in done.stdout


def test_numbers_out_of_range_are_refused_by_flag_not_read_as_the_default(capsys):
    """--iterations 0 used to mean the default budget, --seed -1 ended in a
    traceback (a request's seed is a uint64) and arena --progress -1 was taken
    as "never": each is now its flag's error."""
    view = str(Path(__file__).parent.parent / "examples" / "view.json")
    for args, said in ((["hint", "--view", view, "--seed", "-1"], "argument --seed: -1 is out of range"),
                       (["hint", "--view", view, "--iterations", "0"], "argument --iterations: 0 is not a positive"),
                       (["hint", "--view", view, "--time-ms", "nan"], "argument --time-ms: nan is not a positive"),
                       (["hint", "--view", view, "--threads", "0"], "argument --threads: 0 is not a positive"),
                       (["play", "--seed", str(2**64)], "argument --seed:"),
                       (["play", "--hint-ms", "-5"], "argument --hint-ms:"),
                       (["arena", "greedy", "greedy", "--seed", "x"], "argument --seed: 'x' is not an integer"),
                       (["arena", "greedy", "greedy", "--pairs", "0"], "argument --pairs: 0 is not a positive"),
                       (["arena", "greedy", "greedy", "--jobs", "0"], "argument --jobs: 0 is not a positive"),
                       (["arena", "greedy", "greedy", "--progress", "-1"], "argument --progress: -1 is negative"),
                       (["analyze", "game.json", "--jobs", "-2"], "argument --jobs: -2 is not a positive"),
                       (["puzzles", "results.jsonl", "--seed", "-2"], "argument --seed:")):
        with pytest.raises(SystemExit) as e:
            main(args)
        err = capsys.readouterr().err
        assert e.value.code == 2 and said in err and "Traceback" not in err, (args, err)
    assert main(["hint", "--view", view, "--seed", str(2**64 - 1), "--iterations", "200", "--json"]) == 0


def test_engine_settings_out_of_range_are_named_by_their_flags(capsys):
    """The engine's settings are the service's: their errors used to name the
    service's field (max-budget-ms), not the flag, and blamed the default
    budget for a --max-budget-ms below it."""
    for flags, said in ((("--max-budget-ms", -1), "--max-budget-ms -1: must be at least 1"),
                        (("--max-budget-ms", 100), "--max-budget-ms 100: the default budget (1000 ms) is larger"),
                        (("--warm-presets", "poker"), "--warm-presets poker: unknown preset(s) poker")):
        code, out, err = cli(capsys, "engine", *flags)
        assert code == 2 and said in err and not out, (flags, err)


# --- through a server, arena, serve ---------------------------------------------------

def test_hint_and_analyze_through_a_server_match_the_local_engine(capsys, game):
    from server_support import running
    with running(max_threads=2, max_concurrent_searches=4, grace_seconds=1) as server:
        target = f"127.0.0.1:{server.port}"
        for args in (("hint", game, "--seat", 0, "--iterations", 1500, "--seed", 2),
                     ("analyze", game, "--iterations", 600, "--seed", 2)):
            code, local, _ = cli(capsys, *args, "--json")
            assert code == 0
            code, remote_out, _ = cli(capsys, *args, "--json", "--server", target)
            assert code == 0
            a, b = json.loads(local), json.loads(remote_out)
            if args[0] == "hint":
                for stats in (a["hint"]["stats"], b["hint"]["stats"]):
                    stats.pop("elapsedMs"), stats.pop("cpuMs")
            else:
                a["summary"].pop("elapsedMs"), b["summary"].pop("elapsedMs")
            assert a == b


def test_arena_json(capsys):
    code, out, err = cli(capsys, "arena", "random", "greedy", "--pairs", 2, "--hands", 1, "--json")
    result = json_format.Parse(out, arena_pb2.ArenaResult())
    assert code == 0 and result.pairs == 2 and result.a == "random" and result.margin < 0
    assert re.search(r"machine_load: [\d.]+ before, [\d.]+ after .*cores", err)    # how busy it was
    assert result.rules.hands == 1 and len(result.margin_ci) == 2
    code, _, err = cli(capsys, "arena", "nonsense", "greedy")
    assert code == 3 and "engines are" in err


@pytest.mark.parametrize(("flags", "named"), [
    (("--hands", 0), "--hands 0: hands"), (("--target", 0), "--target 0: target"),
    (("--hands", -2), "--hands -2: hands")])
def test_arena_names_a_flag_out_of_range_rather_than_ignoring_it(capsys, flags, named):
    """0 is a value, not "not given": --hands 0 used to play whole matches."""
    code, out, err = cli(capsys, "arena", "random", "greedy", "--pairs", 1, *flags)
    assert code == 2 and named in err and not out


def test_serve_runs_the_server_and_stops_on_sigterm():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([*CLI, "serve", "--json", "--listen", f"127.0.0.1:{port}", "--warm-presets", ""],
                            stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        line = proc.stderr.readline()
        deadline = time.monotonic() + 30
        while "listening" not in line and time.monotonic() < deadline and line:
            line = proc.stderr.readline()
        entry = json.loads(line)
        assert entry["level"] == "INFO" and f"127.0.0.1:{port}" in entry["message"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
