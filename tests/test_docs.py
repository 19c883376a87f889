"""The documentation's examples work as written: every Python block of the
README and the client guide runs, their shell commands for reflection and
the embedded engine run against a live server (its address put for
127.0.0.1:50051), and the smallest view of the client guide is the view the
rules give for that position. And the docs cannot drift from the code: every
docstring example of the packages runs, the schema's comments say what the
server does where a test can see it, and no code cites a tracker's issue
number instead of saying what it does."""
from __future__ import annotations

import dataclasses
import doctest
import importlib
import io
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from test_rules_book import _text, _tracked

from cirulla.server.convert import view_from_proto
from cirulla.server.service import DEFAULT_INTERVAL_MS
from cirulla.solver import Match, Rules, analysis
from cirulla.solver.players import GreedyPlayer
from cirulla.v1 import engine_service_pb2 as epb
from server_support import choice_position, failure, running, stubs, view_msg

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
        pytest.skip("grpcurl is not on the PATH (pip install -e '.[test]' in an active venv)")
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


# --- docs that cannot drift ------------------------------------------------------------

PACKAGES = ("cirulla.solver", "cirulla.server", "cirulla.cli")


def _docstring_examples() -> list[doctest.DocTest]:
    """The docstring examples of every module of the packages, as installed.
    (pytest's --doctest-modules would import an editable install's folders a
    second time, as `server.convert` beside `cirulla.server.convert`.)"""
    finder = doctest.DocTestFinder()
    found = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            found += [test for test in finder.find(importlib.import_module(module.name)) if test.examples]
    return found


DOCTESTS = _docstring_examples()


@pytest.mark.parametrize("test", DOCTESTS, ids=[test.name for test in DOCTESTS])
def test_docstring_examples_run(test):
    runner, out = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS), io.StringIO()
    runner.run(test, out=out.write)
    assert not runner.failures, out.getvalue()


def test_there_are_docstring_examples():
    assert {test.name for test in DOCTESTS} >= {"cirulla.solver.bounds", "cirulla.solver.cards.Card",
                                                "cirulla.solver.match.Match", "cirulla.server.convert.Problems"}


def schema_comment(proto: str, block: str, name: str) -> str:
    """The comment above the field or value `name` of the message or enum
    `block` in proto/cirulla/v1/`proto`, its lines joined."""
    lines = (ROOT / "proto" / "cirulla" / "v1" / proto).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"(message|enum) {block} {{", line))
    at = next(i for i in range(start, len(lines)) if re.search(rf"\b{name} = \d+", lines[i]))
    comment: list[str] = []
    for line in reversed(lines[start + 1:at]):
        if not line.strip().startswith("//"):
            break
        comment.insert(0, line.strip().removeprefix("//").strip())
    return " ".join(comment)


def test_the_schema_says_what_the_server_does_without_a_strength(server):
    comment = schema_comment("engine_service.proto", "Strength", "STRENGTH_UNSPECIFIED")
    assert 'ChooseMove refuses it (INVALID_ARGUMENT naming "strength")' in comment, comment
    request = epb.ChooseMoveRequest(view=view_msg(choice_position()), seed=1)        # no strength
    code, violations, _ = failure(stubs(server).engine.ChooseMove, request)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and [field for field, _ in violations] == ["strength"]


@pytest.mark.parametrize("proto, block, name, default", [
    ("engine_service.proto", "StreamHintRequest", "interval_ms", DEFAULT_INTERVAL_MS),
    ("analysis_service.proto", "AnalyzeGameRequest", "iterations", analysis.DEFAULT_ITERATIONS),
    ("analysis_service.proto", "AnalyzeGameRequest", "threads", analysis.DEFAULT_JOBS),
])
def test_the_schemas_defaults_are_the_codes(proto, block, name, default):
    comment = schema_comment(proto, block, name)
    stated = re.search(r"0: (?:the (?:server's )?default \()?(\d+)", comment)
    assert stated and int(stated[1]) == default, comment


CODE = re.compile(r"\.(py|pyx|pxd|pyi|proto|js|c|h|toml|yaml)$|^Dockerfile$|^\.ci/")


def test_code_cites_no_tracker_numbers():
    """Code says what it does and why in its own words: a tracker's issue
    number tells a reader nothing once the tracker is gone."""
    cited = [f"{rel}:{n}: {line.strip()}" for rel in _tracked() if CODE.search(rel)
             for n, line in enumerate((_text(rel) or "").splitlines(), 1) if re.search(r"\bissues? #?\d", line, re.I)]
    assert not cited, "\n".join(cited)
