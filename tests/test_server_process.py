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

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc
from server_support import choice_position, view_msg

HealthCheckResponse = health_pb2.HealthCheckResponse


class Process:
    """The server in a child process, its address read from its log."""

    def __init__(self, *args: str, env: dict | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cirulla.server.app", "--listen", "127.0.0.1:0", *args],
            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.lines: list[str] = []
        self._ready = threading.Event()
        self.port = None
        self.metrics_port = None            # with --metrics-listen (logged before the gRPC address)
        threading.Thread(target=self._read, daemon=True).start()
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

    def start(*args, env=None):
        started.append(Process(*args, env=env))
        return started[-1]
    yield start
    for p in started:
        p.stop()


def test_environment_and_flags(process):
    p = process("--max-budget-ms", "700", env={"CIRULLA_MAX_BUDGET_MS": "500", "CIRULLA_DEFAULT_BUDGET_MS": "90"})
    info = p.engine.GetEngineInfo(epb.GetEngineInfoRequest(), timeout=5)
    assert (info.max_time_ms, info.default_time_ms) == (700, 90)
    assert p.status() == HealthCheckResponse.SERVING


def test_sigterm_drains_then_exits_cleanly(process):
    p = process("--grace-seconds", "5")
    view = view_msg(choice_position())
    slow = p.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=1_200)))
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
    slow = p.engine.GetHint.future(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=8_000)))
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
