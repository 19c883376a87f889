"""`cirulla-server` as a process: flags and environment, the log, and a
graceful stop on SIGTERM (NOT_SERVING, calls in flight finish, exit 0)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc
from server_support import choice_position, view_msg

HealthCheckResponse = health_pb2.HealthCheckResponse


SERVER = ("-m", "cirulla.server.app")


class Process:
    """The server in a child process, its address read from its log; `launcher`:
    what python runs instead of the server's module (a test's own, e.g. spinning.py)."""

    def __init__(self, *args: str, env: dict | None = None, launcher: Sequence[str] = SERVER):
        self.proc = subprocess.Popen(
            [sys.executable, *launcher, "--listen", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self._ready = threading.Event()
        self.port = None
        self.metrics_port = None            # with --metrics-listen (logged before the gRPC address)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(30) or self.port is None:
            self.proc.kill()
            raise AssertionError("the server did not start:\n" + "".join(self.lines))
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        self.engine = engine_service_pb2_grpc.EngineServiceStub(self.channel)
        self.health = health_pb2_grpc.HealthStub(self.channel)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)
            metrics = re.search(r"metrics on http://127\.0\.0\.1:(\d+)", line)
            if metrics:
                self.metrics_port = int(metrics.group(1))
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                self._ready.set()
        self._ready.set()

    def log(self) -> str:
        """Everything it logged (once it has exited: up to its last line)."""
        if self.proc.poll() is not None:
            self._reader.join(10)
        return "".join(self.lines)

    def status(self):
        return self.health.Check(health_pb2.HealthCheckRequest(), timeout=2).status

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        self.channel.close()


@pytest.fixture
def process():
    started = []

    def start(*args, **options):
        started.append(Process(*args, **options))
        return started[-1]
    yield start
    for p in started:
        p.stop()


def test_environment_and_flags(process):
    p = process("--max-budget-ms", "700", env={"CIRULLA_MAX_BUDGET_MS": "500", "CIRULLA_DEFAULT_BUDGET_MS": "90",
                                               "CIRULLA_MAX_THREAD": "1"})
    info = p.engine.GetEngineInfo(epb.GetEngineInfoRequest(), timeout=5)
    assert (info.max_time_ms, info.default_time_ms) == (700, 90)
    assert p.status() == HealthCheckResponse.SERVING
    assert ("WARNING cirulla.server: CIRULLA_MAX_THREAD (CIRULLA_MAX_THREADS?) is not a setting of the server"
            in p.log())                                     # a typo is told, not silently a default


def test_sigterm_drains_then_exits_cleanly(process):
    p = process("--grace-seconds", "5")
    view = view_msg(choice_position())
    slow = p.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(exhaust=True, time_ms=1_200)))
    time.sleep(0.3)
    p.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert p.status() == HealthCheckResponse.NOT_SERVING
    with pytest.raises(grpc.RpcError) as refused:
        p.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=50)), timeout=5)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
    hint = slow.result(timeout=10).hint                       # the call in flight finishes
    assert hint.moves and not hint.cut_short
    assert p.proc.wait(10) == 0
    log = "".join(p.lines)
    assert "stopping" in log and re.search(r"/cirulla.v1.EngineService/GetHint OK \d+\.\d ms", log)


def test_grace_period_ends_the_calls_left(process):
    p = process("--grace-seconds", "0.3")
    view = view_msg(choice_position())
    slow = p.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(exhaust=True, time_ms=8_000)))
    time.sleep(0.3)
    start = time.perf_counter()
    p.proc.send_signal(signal.SIGTERM)
    assert p.proc.wait(10) == 0
    assert time.perf_counter() - start < 6      # the grace and the flush, not the search's 8 s
    with pytest.raises(grpc.RpcError):
        slow.result(timeout=5)


def test_a_port_in_use_is_an_error(process):
    p = process()
    done = subprocess.run([sys.executable, "-m", "cirulla.server.app", "--listen", f"127.0.0.1:{p.port}"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "cannot start" in done.stderr


SPINNING_LAUNCHER = (str(Path(__file__).with_name("spinning.py")), "server")
SPIN_GRACE_S = 2.0


def test_handlers_that_ignore_cancellation_cannot_keep_the_server_alive(process):
    """Eight hints spin for ever in pure Python, holding the GIL, deaf to their
    deadline and to cancellation: SIGTERM still ends the server within the
    grace period plus one second, with the status for abandoned work (70),
    and the log names the calls it abandoned."""
    from spinning import SPINNING
    p = process("--grace-seconds", str(SPIN_GRACE_S), "--warm-presets", "", launcher=SPINNING_LAUNCHER)
    view = view_msg(choice_position())
    request_ids = [f"spin-{n}" for n in range(8)]
    # deadlines short enough to pass before SIGTERM, long enough for a loaded machine to start every handler
    calls = [p.engine.GetHint.future(epb.GetHintRequest(view=view), timeout=3,
                                     metadata=[("x-request-id", request_id)]) for request_id in request_ids]
    give_up = time.monotonic() + 30
    while p.log().count(SPINNING) < len(calls):
        assert time.monotonic() < give_up, "the hints did not all start:\n" + p.log()
        time.sleep(0.05)
    for call in calls:                              # the deadlines have passed: nothing reaches the handlers
        assert call.exception(timeout=30).code() == grpc.StatusCode.DEADLINE_EXCEEDED
    start = time.monotonic()
    p.proc.send_signal(signal.SIGTERM)
    try:
        code = p.proc.wait(SPIN_GRACE_S + 10)
    except subprocess.TimeoutExpired:
        raise AssertionError("still running 10 s past the grace after SIGTERM:\n" + p.log()) from None
    elapsed = time.monotonic() - start
    log = p.log()
    assert elapsed < SPIN_GRACE_S + 1, f"{elapsed:.2f} s from SIGTERM to the exit:\n{log}"
    assert code == 70, log                          # the documented status for abandoned work
    abandoned = re.search(r"ERROR cirulla.server: .*abandon.*", log)
    assert abandoned and "abandoning 8 calls still running" in abandoned.group(), log
    for request_id in request_ids:                  # each call, and where its thread spins
        assert re.search(rf"/cirulla.v1.EngineService/GetHint request_id={request_id} \([^;]* in spin\)",
                         abandoned.group()), log
