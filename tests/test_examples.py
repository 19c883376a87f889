"""The example clients in examples/ (Node and Python) against a live server.

Each example is run as a user would run it, in a subprocess, against an
in-process server on a free loopback port: a hint for examples/view.json (one
line per legal move, as RulesService.ListLegalMoves lists them, then `best:`),
the field violations of examples/bad_view.json (what each example's README
shows), a server that needs a token with and without CIRULLA_TOKEN, the
decoding of a RetryInfo detail, and bad usage. The client guide's Node code
is quoted from the Node example. The Python puzzle example checks answers
against examples/puzzle.json (the solution named with its cards in another
order is right, a wrong move says why, another move is not legal) and asks
the live server for the puzzle's hint, as its README shows.

The Node tests need `node` on the PATH and examples/node/node_modules (`npm ci
--prefix examples/node`); without them they skip (in CI a skip is a failure:
conftest.py).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2, json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2_grpc
from grpc_status import rpc_status

from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc, rules_service_pb2, rules_service_pb2_grpc
from server_support import running

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GUIDE = EXAMPLES.parent / "docs" / "client-guide.md"
VIEW = EXAMPLES / "view.json"
BAD_VIEW = EXAMPLES / "bad_view.json"
PUZZLE = EXAMPLES / "puzzle.json"

# `<move text> +0.79 ± 0.12  scopa risk 15%`; the text may hold spaces.
MOVE_LINE = re.compile(r"^(?P<text>\S.*?) +[+-]\d+\.\d\d ± \d+\.\d\d  scopa risk \d+%$")
VIOLATION_LINE = re.compile(r"^  (?P<field>(?:view|budget)\.[^:\s]+): \S.*$")


def node_command() -> list[str]:
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not on the PATH (Node 20 or newer: README, \"Optional tools for the full suite\")")
    if not (EXAMPLES / "node" / "node_modules").is_dir():
        pytest.skip("examples/node/node_modules is missing (npm ci --prefix examples/node)")
    return [node, str(EXAMPLES / "node" / "hint.js")]


def python_command() -> list[str]:
    return [sys.executable, str(EXAMPLES / "python" / "hint.py")]


@pytest.fixture(params=["node", "python"])
def client(request) -> list[str]:
    """The command line of one example client."""
    return node_command() if request.param == "node" else python_command()


@pytest.fixture(scope="module")
def server():
    with running() as s:
        yield s


@pytest.fixture(scope="module")
def token_server():
    with running(token="s3cret") as s:
        yield s


def run(command: list[str], *args: str, cwd: Path, token: str | None = None):
    """Run an example as a user would (from some other folder), token or not."""
    env = {k: v for k, v in os.environ.items() if k != "CIRULLA_TOKEN"}
    if token is not None:
        env["CIRULLA_TOKEN"] = token
    return subprocess.run([*command, *args], capture_output=True, encoding="utf-8", timeout=60,
                          env=env, cwd=cwd)


def shown(result) -> str:
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}--- stderr\n{result.stderr}"


def legal_move_texts(port: int) -> list[str]:
    """What the referee says the seat of examples/view.json may play."""
    view = json_format.Parse(VIEW.read_text(encoding="utf-8"), epb.GetHintRequest()).view
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        rules = rules_service_pb2_grpc.RulesServiceStub(channel)
        moves = rules.ListLegalMoves(rules_service_pb2.ListLegalMovesRequest(view=view), timeout=10).moves
    return [m.text for m in moves]


def assert_hint(result, legal: list[str]) -> None:
    assert result.returncode == 0, shown(result)
    *move_lines, best_line = result.stdout.splitlines()
    texts = []
    for line in move_lines:
        match = MOVE_LINE.match(line)
        assert match, f"not a move line: {line!r}\n{shown(result)}"
        texts.append(match["text"])
    assert sorted(texts) == sorted(legal), shown(result)
    assert best_line.startswith("best: "), shown(result)
    assert best_line.removeprefix("best: ") in legal, shown(result)


def test_hint_for_the_default_view(client, server, tmp_path):
    legal = legal_move_texts(server.port)
    assert len(legal) >= 2
    assert_hint(run(client, f"127.0.0.1:{server.port}", cwd=tmp_path), legal)
    # the README's sample answer is one for this view: its moves (the figures vary with a time budget)
    *moves, best = readme_answer(client, "")
    assert sorted(line.split("  ")[0] for line in moves) == sorted(legal) and best.startswith("best: ")


def readme_answer(command: list[str], arguments: str) -> list[str]:
    """The lines the example's README shows it printing when run with `arguments`."""
    script = Path(command[-1])
    lines = (script.parent / "README.md").read_text(encoding="utf-8").splitlines()
    command_line = f"{script.name} {arguments}".rstrip()
    start = next(i for i, line in enumerate(lines) if line.startswith("$ ") and line.endswith(command_line))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("$ ", "```")))
    return lines[start + 1:end]


def test_bad_view_prints_the_field_violations(client, server, tmp_path):
    result = run(client, f"127.0.0.1:{server.port}", str(BAD_VIEW), cwd=tmp_path)
    assert result.returncode == 1, shown(result)
    output = result.stdout + result.stderr
    assert "error: INVALID_ARGUMENT: " in output, shown(result)
    # bad_view.json has three faults, all named in one answer
    violations = [m["field"] for m in map(VIOLATION_LINE.match, output.splitlines()) if m]
    assert violations == ["view.hand[0]", "view.seat", "budget.time_ms"], shown(result)
    assert "  budget.time_ms: -5 is out of range 0..10000 (JSON: budget.timeMs)" in output.splitlines()
    assert result.stderr.splitlines() == readme_answer(client, "127.0.0.1:50051 ../bad_view.json"), shown(result)


def test_the_guides_node_code_is_the_examples():
    """Each JavaScript block of the client guide is quoted from the Node example
    these tests run: the guide cannot show code that does not work."""
    blocks = re.findall(r"^```js\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), re.S | re.M)
    source = (EXAMPLES / "node" / "hint.js").read_text(encoding="utf-8")
    assert len(blocks) >= 3
    for block in blocks:
        assert block in source, f"not in examples/node/hint.js:\n{block}"


def test_token(client, token_server, tmp_path):
    address = f"127.0.0.1:{token_server.port}"
    refused = run(client, address, cwd=tmp_path)
    assert refused.returncode == 1, shown(refused)
    assert "error: UNAUTHENTICATED: " in refused.stdout + refused.stderr, shown(refused)

    allowed = run(client, address, cwd=tmp_path, token="s3cret")
    assert allowed.returncode == 0, shown(allowed)
    assert allowed.stdout.splitlines()[-1].startswith("best: "), shown(allowed)


class Busy(engine_service_pb2_grpc.EngineServiceServicer):
    """A server that turns every hint away with RESOURCE_EXHAUSTED and a RetryInfo."""

    def GetHint(self, request, context):
        retry = error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=1, nanos=500_000_000))
        status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message="too many searches")
        status.details.add().Pack(retry)
        status.details.add().Pack(error_details_pb2.ErrorInfo(reason="BUSY"))   # not printed
        context.abort_with_status(rpc_status.to_status(status))


def test_retry_info_is_decoded(client, tmp_path):
    busy = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    engine_service_pb2_grpc.add_EngineServiceServicer_to_server(Busy(), busy)
    # the health service a real server has: the examples' service config watches it
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(experimental_non_blocking=True), busy)
    port = busy.add_insecure_port("127.0.0.1:0")
    busy.start()
    try:
        result = run(client, f"127.0.0.1:{port}", cwd=tmp_path)
    finally:
        busy.stop(0)
    assert result.returncode == 1, shown(result)
    assert result.stderr.splitlines() == [
        "error: RESOURCE_EXHAUSTED: too many searches", "  retry after 1.5 s"], shown(result)


@pytest.mark.parametrize("content, says", [
    (None, "cannot read"),
    ("{not json", "not valid JSON"),
    ('{"view": {"seet": 1}}', "seet"),
    ('{"view": "x"}', "not a cirulla.v1.GetHintRequest"),
    ("[]", "not a cirulla.v1.GetHintRequest"),
])
def test_bad_usage(client, tmp_path, content, says):
    file = tmp_path / "request.json"
    if content is not None:
        file.write_text(content, encoding="utf-8")
    # Nothing listens on port 1: a request file that gets as far as a call fails with 1, not 2.
    result = run(client, "127.0.0.1:1", str(file), cwd=tmp_path)
    assert result.returncode == 2, shown(result)
    assert says in result.stderr, shown(result)

    result = run(client, "a", "b", "c", cwd=tmp_path)
    assert result.returncode == 2 and "usage:" in result.stderr, shown(result)


# --- a puzzle: checking an answer, asking for the hint -------------------------------------

def test_the_puzzle_example_checks_answers_in_any_order_and_asks_for_the_hint(server, tmp_path):
    from cirulla.server.convert import puzzle_from_proto
    from cirulla.v1 import puzzle_pb2
    puzzle = puzzle_from_proto(json_format.Parse(PUZZLE.read_text(encoding="utf-8"), puzzle_pb2.Puzzle()))
    command = [sys.executable, str(EXAMPLES / "python" / "puzzle.py")]
    address = f"127.0.0.1:{server.port}"
    solution = puzzle.solution
    reordered = f"{solution.card} x " + " ".join(sorted(map(str, solution.captured), reverse=True))
    assert reordered != str(solution) and len(solution.captured) >= 2
    right = run(command, address, "../puzzle.json", reordered, cwd=EXAMPLES / "python")
    assert right.returncode == 0, shown(right)
    assert right.stdout.splitlines() == readme_answer(command, f'127.0.0.1:50051 ../puzzle.json "{reordered}"')
    assert f"answer {reordered}: right" in right.stdout and f"engine: {solution}, the solution" in right.stdout
    wrong = puzzle.others[0]
    reversed_wrong = f"{wrong.move.card} x " + " ".join(sorted(map(str, wrong.move.captured), reverse=True))
    told = run(command, address, str(PUZZLE), reversed_wrong, cwd=tmp_path)
    assert told.returncode == 0 and f"wrong, {wrong.loss:.2f} points behind: {wrong.reason}" in told.stdout
    assert told.stdout.splitlines() == readme_answer(command, f'127.0.0.1:50051 ../puzzle.json "{reversed_wrong}"')
    illegal = f"{puzzle.view.hand[0]} x {puzzle.view.unseen()[0]}"
    refused = run(command, address, str(PUZZLE), illegal, cwd=tmp_path)
    assert refused.returncode == 0 and f"answer {illegal}: not a legal move here" in refused.stdout
    assert run(command, address, str(PUZZLE), "a", "b", cwd=tmp_path).returncode == 2
