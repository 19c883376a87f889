"""The documentation's examples work as written: every Python block of the
README and the client guide runs, their shell commands for reflection and
the embedded engine run against a live server (its address put for
127.0.0.1:50051), and the smallest view of the client guide is the view the
rules give for that position."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from cirulla.server.convert import view_from_proto
from cirulla.solver import Match, Rules
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import engine_service_pb2 as epb
from server_support import running

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/client-guide.md")
ADDRESS = "127.0.0.1:50051"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
# the shell commands a test can run against a server: reflection clients and the engine
RUNNABLE = ("grpcurl ", "buf curl ", "printf ")


def _blocks(doc: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall((ROOT / doc).read_text(encoding="utf-8")) if lang == language]


def _commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = re.sub(r"\\\n\s*", "", block)
    return [line.split("  #")[0].strip() for line in joined.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def server():
    with running() as s:
        yield s


@pytest.fixture()
def workdir(tmp_path):
    """A folder holding the repository's examples, as a reader's checkout would."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("node_modules"))
    return tmp_path


PYTHON_BLOCKS = [(doc, i) for doc in DOCS for i, _ in enumerate(_blocks(doc, "python"))]


@pytest.mark.parametrize("doc,index", PYTHON_BLOCKS, ids=[f"{d}:{i}" for d, i in PYTHON_BLOCKS])
def test_python_examples_run(doc, index, server, workdir):
    code = _blocks(doc, "python")[index].replace(ADDRESS, f"127.0.0.1:{server.port}")
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, f"{doc}, python block {index}:\n{code}\n{done.stdout}\n{done.stderr}"


def test_there_are_examples_to_run():
    assert len(PYTHON_BLOCKS) >= 3
    assert sum(c.startswith(RUNNABLE) for d in DOCS for b in _blocks(d, "sh") for c in _commands(b)) >= 5


SHELL = [(doc, c) for doc in DOCS for b in _blocks(doc, "sh") for c in _commands(b) if c.startswith(RUNNABLE)]


@pytest.mark.parametrize("doc,command", SHELL, ids=[f"{d}:{c[:40]}" for d, c in SHELL])
def test_shell_examples_run(doc, command, server, workdir):
    if command.startswith("grpcurl ") and shutil.which("grpcurl") is None:
        pytest.skip("grpcurl is not installed")
    line = command.replace(ADDRESS, f"127.0.0.1:{server.port}")
    done = subprocess.run(line, shell=True, cwd=workdir, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"})
    assert done.returncode == 0 and done.stdout.strip(), f"{doc}: {line}\n{done.stdout}\n{done.stderr}"
    if "cirulla engine" in command:
        answers = [json.loads(x) for x in done.stdout.splitlines()]
        assert all("failure" not in a for a in answers), answers
        assert {a["id"] for a in answers if a.get("final")} >= {"h1"} or \
            {a["id"] for a in answers if a.get("final")} >= {"q1"}


def test_the_smallest_view_is_the_rules_view_of_its_position():
    """examples/view.json, built from seat, dealer, hand, table, scores and the
    plays alone, completes to exactly the view the match gives that seat."""
    match = Match(Rules(), seed=0, dealer=0)
    greedy = GreedyPlayer()
    for _ in range(7):
        match.play(greedy.choose(match))
    request = json_format.Parse((ROOT / "examples/view.json").read_text(), epb.GetHintRequest())
    completed = view_from_proto(request.view)
    assert dataclasses.replace(completed, scores=(0, 0)) == match.view(1)
    assert completed.scores == (12, 30) and completed.scope == (1, 0) and completed.stock_size == 24
