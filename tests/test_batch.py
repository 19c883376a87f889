"""`cirulla analyze RECORDS... --out FILE`: many games on a Dask cluster (a
LocalCluster of 2 worker processes) or through a server: a line per good
record, bad records reported and counted, a rerun resuming an interrupted run
(Ctrl-C, or a line cut short by a crash) without losing or repeating a game,
a dead worker's game retried, the table per player, the flags it refuses."""
from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import cloudpickle
import pytest
from google.protobuf import json_format

from cirulla.cli import batch
from cirulla.cli.main import build_parser, main
from cirulla.solver import Match, Rules, Turn, record
from cirulla.solver.cards import Card, ordered
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import analysis_service_pb2 as apb

ITERATIONS = ("--iterations", "200")        # tiny budgets: the file runs in well under a minute
NAMES = (["[/]Ada", "Bea"], ["Bea", "<b>Cy</b>"])   # names the terminal ([/]: markup) and the page must escape


def one_hand(seed: int) -> Match:
    m = Match(Rules(hands=1), seed=seed, names=NAMES[seed % 2])
    greedy = GreedyPlayer()
    while not m.is_over:
        m.play(greedy.choose(m))
    return m


@pytest.fixture(scope="module")
def games() -> list[Match]:
    return [one_hand(seed) for seed in range(8)]


@pytest.fixture(scope="module")
def expected(games) -> dict[str, Match]:
    """game id -> the game, computed independently of the command's reading."""
    return {batch.game_id(record.to_proto(m)): m for m in games}


def illegal(m: Match) -> tuple[str, int]:
    """The record of `m` with a move its seat cannot play, and that event's index."""
    data = json.loads(record.dumps(m))
    turn = next(i for i, e in enumerate(data["events"]) if "turn" in e)
    data["events"][turn]["turn"]["move"] = {"card": "KD", "captured": ["AS"]}
    return json.dumps(data), turn


@pytest.fixture(scope="module")
def folder(tmp_path_factory, games) -> tuple[Path, int]:
    """8 records, one not JSON, one with an illegal move (and that move's event)."""
    d = tmp_path_factory.mktemp("games")
    for i, m in enumerate(games):
        record.save(m, d / f"g{i}.json")
    (d / "broken.json").write_text("{ not json")
    text, event = illegal(games[0])
    (d / "illegal.json").write_text(text)
    (d / "notes.txt").write_text("not a record: not *.json")
    return d, event


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of 2 worker processes, as the command starts one, shared by the tests that
    pass --scheduler (starting one takes seconds)."""
    c = batch.local_cluster(2)
    yield c.scheduler_address
    c.close()


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ids(path: Path) -> list[str]:
    return [line["gameId"] for line in lines(path)]


CARD_RUN = re.compile(r"\b[A2-7JQK][DHCS](?:=[A2-7JQK])?(?: [A2-7JQK][DHCS](?:=[A2-7JQK])?)*\b")


def runs_out_of_order(text: str) -> list[str]:
    """The runs of cards a text names ("takes 4C AD") that are not in the order a Move prints them."""
    runs = CARD_RUN.findall(text)
    return [r for r in runs if (cards := [Card.parse(w[:2]) for w in r.split()]) != ordered(cards)]


def without_timing(line: dict) -> dict:
    line = json.loads(json.dumps(line))
    line["analysis"]["summary"].pop("elapsedMs")
    return line


# --- a folder on a LocalCluster the command starts ------------------------------------

def test_a_folder_gives_a_line_per_good_record_and_reports_the_bad_ones(capsys, folder, expected, tmp_path):
    d, event = folder
    out, page = tmp_path / "results.jsonl", tmp_path / "players.html"
    code, stdout, err = cli(capsys, "analyze", d, "--out", out, *ITERATIONS, "--jobs", 2, "--html", page)
    assert code == 1                                        # some records were bad
    assert sorted(ids(out)) == sorted(expected)              # each good game once
    assert f"{d / 'broken.json'}: not JSON" in err
    assert f"{d / 'illegal.json'}: event {event}:" in err and "R-TURN" in err
    assert "2 bad records" in err and "8 games analysed" in err
    for line in out.read_text().splitlines():               # each a GameAnalysisLine, whole
        msg = json_format.Parse(line, apb.GameAnalysisLine())
        m = expected[msg.game_id]
        assert msg.source.startswith(str(d / "g")) and msg.analysis.summary.iterations == 200
        assert len(msg.analysis.decisions) == sum(isinstance(e, Turn) for e in m.events)
        assert [p.name for p in msg.analysis.summary.players] == list(m.names)
    # the table per player: every name, its games; the page escapes what the records hold
    for name, games in (("[/]Ada", 4), ("Bea", 8), ("<b>Cy</b>", 4)):
        assert any(row.split("│")[1].strip() == name and row.split("│")[2].strip() == str(games)
                   for row in stdout.splitlines() if "│" in row)
    html = page.read_text()
    assert html.startswith("<!doctype html>") and "&lt;b&gt;Cy&lt;/b&gt;" in html and "<b>Cy" not in html
    assert "<script" not in html and "http" not in html.replace("http://www.w3.org", "")


# --- resuming ----------------------------------------------------------------------------

def analyze_args(d: Path, out: Path, iterations: int) -> list[str]:
    """The command of the interrupted run and of the run that resumes it."""
    return ["analyze", str(d), "--out", str(out), "--iterations", str(iterations), "--seed", "3"]


def interrupted_run(d: Path, out: Path, iterations: int) -> tuple[int, str, bool]:
    """`cirulla analyze` on `d` stopped by a Ctrl-C once its first line is out: its exit
    code, its stderr, and whether every game was already out as the Ctrl-C went."""
    command = [sys.executable, "-m", "cirulla.cli.main", *analyze_args(d, out, iterations), "--jobs", "2"]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        while proc.poll() is None and not (out.exists() and out.read_text().count("\n") >= 1):
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)                  # a terminal's Ctrl-C: the whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err, re.search(r"\d+ games? analysed, \d+ already in", err) is not None  # its totals


def test_an_interrupted_run_resumes_with_every_game_once(folder, expected, cluster, tmp_path, capsys):
    d, _ = folder
    out = tmp_path / "results.jsonl"
    # each game takes long enough (4000 iterations: about a second) that Ctrl-C comes while the
    # others run; on a starved machine the whole run could still end first (CI saw it print its
    # totals and exit 1 once), and then the same run with a larger budget is tried
    for iterations in (4000, 16000, 64000):
        code, err, finished = interrupted_run(d, out, iterations)
        if not finished:
            break
        out.unlink()
    assert code == 130 and "stopped" in err and "Traceback" not in err, err     # err: why, if not
    args = analyze_args(d, out, iterations)
    first = out.read_text()
    assert first.endswith("\n") and 1 <= first.count("\n")
    assert len(set(ids(out))) == len(ids(out))
    code, _, err = cli(capsys, *args, "--scheduler", cluster)  # the same command, on the shared cluster
    assert code == 1 and "already in" in err
    assert out.read_text().startswith(first)                # appended to, never rewritten
    assert sorted(ids(out)) == sorted(expected)


def test_a_line_cut_short_by_a_crash_is_analysed_again(games, expected, cluster, tmp_path, capsys):
    """A JSON-lines input (with a bad line, a blank one and a repeated game); then its output's
    last line cut in the middle, as a crash mid-write leaves it."""
    source = tmp_path / "games.jsonl"
    text, event = illegal(games[1])
    records = [json.dumps(json.loads(record.dumps(m))) for m in games]
    source.write_text("\n".join([*records[:2], text, "", *records[2:], records[0]]) + "\n")
    out = tmp_path / "results.jsonl"
    code, _, err = cli(capsys, "analyze", source, "--out", out, *ITERATIONS, "--scheduler", cluster)
    assert code == 1 and f"{source}:3: event {event}:" in err and "1 bad records" in err
    assert sorted(ids(out)) == sorted(expected)
    assert {line["source"] for line in lines(out)} == {f"{source}:{n}" for n in (1, 2, 5, 6, 7, 8, 9, 10)}
    whole = out.read_text()
    complete = whole[:whole.rindex("\n", 0, len(whole) - 1) + 1]
    out.write_text(whole[:len(complete) + 100])             # the last line cut short
    lost = json.loads(whole[len(complete):])["gameId"]
    code, _, err = cli(capsys, "analyze", source, "--out", out, *ITERATIONS, "--scheduler", cluster)
    assert code == 1 and "incomplete last line" in err and "1 game analysed" in err
    assert out.read_text().startswith(complete) and ids(out)[-1] == lost
    assert sorted(ids(out)) == sorted(expected)


def test_the_same_game_in_other_files_is_not_analysed_twice(folder, games, cluster, tmp_path, capsys):
    d, _ = folder
    out = tmp_path / "results.jsonl"
    files = [d / f"g{i}.json" for i in range(3)]
    code, _, _ = cli(capsys, "analyze", *files, "--out", out, *ITERATIONS, "--scheduler", cluster)
    assert code == 0 and len(ids(out)) == 3
    again = tmp_path / "again.jsonl"                         # the same games, formatted otherwise
    again.write_text("".join(json.dumps(json.loads(record.dumps(m))) + "\n" for m in games[:3]))
    code, stdout, err = cli(capsys, "analyze", again, "--out", out, *ITERATIONS, "--scheduler", cluster)
    assert code == 0 and len(ids(out)) == 3 and "0 games analysed, 3 already in" in err
    assert "Players over 3 games" in stdout                 # the table covers the lines of earlier runs
    code, stdout, err = cli(capsys, "analyze", again, "--out", out, *ITERATIONS, "--scheduler", cluster,
                            "--lang", "it")                 # the counts in the reader's language, as the table
    assert code == 0 and f"0 partite analizzate, 3 già in {out} (o ripetute), 0 record non validi" in err
    assert "Giocatori su 3 partite" in stdout


# --- through a server ------------------------------------------------------------------------

def test_a_server_gives_the_same_lines_as_the_cluster(folder, expected, cluster, tmp_path, capsys):
    from test_server_process import Process
    d, _ = folder
    local, remote = tmp_path / "local.jsonl", tmp_path / "remote.jsonl"
    code, _, _ = cli(capsys, "analyze", d, "--out", local, *ITERATIONS, "--seed", 5, "--scheduler", cluster)
    assert code == 1
    server = Process("--warm-presets", "")
    try:
        code, _, err = cli(capsys, "analyze", d, "--out", remote, *ITERATIONS, "--seed", 5,
                           "--server", f"127.0.0.1:{server.port}", "--jobs", 2)
    finally:
        server.stop()
    assert code == 1 and "2 bad records" in err and "illegal.json: event" in err
    assert sorted(ids(remote)) == sorted(expected)
    by_id = {line["gameId"]: without_timing(line) for line in lines(local)}
    assert all(without_timing(line) == by_id[line["gameId"]] for line in lines(remote))   # the same seed
    # whatever order a set of cards iterates in, in whichever process: the reasons name them as a Move prints them
    reasons = [d["reason"] for path in (local, remote) for line in lines(path)
               for d in line["analysis"]["decisions"] if d.get("reason")]
    assert reasons and [r for r in reasons if runs_out_of_order(r)] == []


# --- a worker that dies --------------------------------------------------------------------

def crash_once(*args, marker: str) -> str:
    """analyze_task, but the first task to run kills its worker process."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return batch.analyze_task(*args)
    os._exit(1)


def test_the_game_of_a_worker_that_dies_is_retried(folder, expected, cluster, tmp_path, capsys):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])   # the workers cannot import this file
    d, _ = folder
    out, marker = tmp_path / "results.jsonl", tmp_path / "crashed"
    args = build_parser().parse_args(["analyze", *(str(d / f"g{i}.json") for i in range(8)), "--out", str(out),
                                      *ITERATIONS, "--scheduler", cluster])
    code = batch.run_batch(args, task=functools.partial(crash_once, marker=str(marker)))
    _, err = capsys.readouterr()
    assert marker.exists()                                   # a worker died under a game ...
    assert code == 0 and "0 failed" in err
    assert sorted(ids(out)) == sorted(expected)              # ... and that game ran again elsewhere


# --- refused -----------------------------------------------------------------------------------

def test_bad_flags_are_named_and_exit_2(capsys, folder, tmp_path):
    d, _ = folder
    out = tmp_path / "r.jsonl"
    for flags, named in ((["--scheduler", "tcp://127.0.0.1:1", "--server", "127.0.0.1:1"], "--scheduler and --server"),
                         (["--all"], "--all"), (["--json"], "--json"),
                         (["--scheduler", "tcp://127.0.0.1:1", "--jobs", "2"], "--jobs"),
                         (["--scheduler", "nowhere"], "--scheduler nowhere: must be HOST:PORT"),
                         (["--scheduler", "tcp://h:99999"], "with a port from 0 to 65535")):
        code, _, err = cli(capsys, "analyze", d, "--out", out, *flags)
        assert code == 2 and named in err, flags
    for flag in ("--iterations", "--jobs"):
        with pytest.raises(SystemExit) as stop:                 # refused by the parser itself
            cli(capsys, "analyze", d, "--out", out, flag, "0")
        assert stop.value.code == 2 and f"argument {flag}: 0 is not a positive integer" in capsys.readouterr().err
    code, _, err = cli(capsys, "analyze", d, tmp_path / "nowhere", "--out", out)
    assert code == 5 and "nowhere: no such file or folder" in err
    code, _, err = cli(capsys, "analyze", d, "--out", tmp_path)
    assert code == 2 and "--out" in err
    with out.open("a") as held:                              # another run writing the same file
        fcntl.flock(held, fcntl.LOCK_EX)
        code, _, err = cli(capsys, "analyze", d, "--out", out)
    assert code == 2 and "another `cirulla analyze` is writing to it" in err
    assert not out.read_text()                               # no cluster, no line


def test_an_output_line_that_is_no_analysis_line_is_a_value_error():
    """The lines a run finds in --out are read again: whatever they hold, a bad
    one is reported and ignored (ValueError), never a crash of the run."""
    for text, why in (("[" * 100_000, "nested too deeply"), ('{"gameId": 5}', "not a cirulla.v1.GameAnalysisLine"),
                      ("[1]", "not a cirulla.v1.GameAnalysisLine"), ("{ not json", "Expecting property name")):
        with pytest.raises(ValueError, match=why):
            batch.read_line(text)
