"""Several replicas behind gRPC's client-side load balancing, on loopback: the
deployment of deploy/k8s/ (a headless Service's addresses, round_robin, the
service config of examples/service_config.json) with `cirulla-server`
processes on 127.0.0.1 standing in for the pods.

- Every replica serves a fair share of 300 hints (each at least 20%).
- One replica gets SIGTERM in the middle of 300 hints: no call fails (those
  in flight on it finish; new ones go to the others), and it exits 0. The
  service config watches health, and a stopping server serves on for its
  lame-duck time while the clients route around it.
- A busy server's refusal says when to retry in gRPC's own terms (retry
  pushback), and the service config retries then.

`hints` is the load both tests and `bench/bench_replicas.py` run. The file
takes ~15 s.
"""
from __future__ import annotations

import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2
from test_server_process import Process

from cirulla.server.errors import RpcError, retry_delay, to_status
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc
from server_support import position, running, view_msg

SERVICE_CONFIG = Path(__file__).resolve().parent.parent / "examples" / "service_config.json"
HINTS = 300
CLIENT_THREADS = 6
ITERATIONS = 300            # a hint of a few ms: the test measures the balancing, not the search
CALL_TIMEOUT_S = 30.0
GETHINT_LINE = re.compile(r"/cirulla\.v1\.EngineService/GetHint\b.*\bOK\b")


def balanced_channel(ports: Sequence[int]) -> grpc.Channel:
    """A channel over every replica, as a client of the headless Service has one."""
    target = "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)
    return grpc.insecure_channel(target, options=[("grpc.service_config", SERVICE_CONFIG.read_text()),
                                                  ("grpc.enable_retries", 1)])


def requests(n: int, iterations: int = ITERATIONS) -> Iterator[epb.GetHintRequest]:
    views = [view_msg(position(seed, 3)) for seed in range(8)]
    for i in range(n):
        yield epb.GetHintRequest(view=views[i % len(views)], budget=epb.Budget(iterations=iterations), seed=i)


def hints(channel: grpc.Channel, calls: Iterable[epb.GetHintRequest], threads: int = CLIENT_THREADS,
          after: Callable[[int], None] = lambda done: None, until: Callable[[], bool] = lambda: False) -> Counter[str]:
    """The calls made from `threads` client threads, until they run out or
    `until()` holds; status (name, and details if not OK) -> calls. `after(done)`
    runs after each answer (done: answers so far)."""
    engine = engine_service_pb2_grpc.EngineServiceStub(channel)
    pending = iter(calls)
    statuses: Counter[str] = Counter()
    lock = threading.Lock()

    def work() -> None:
        while True:
            with lock:
                request = None if until() else next(pending, None)
            if request is None:
                return
            try:
                engine.GetHint(request, timeout=CALL_TIMEOUT_S)
                status = "OK"
            except grpc.RpcError as e:
                status = f"{e.code().name}: {e.details()}"
            with lock:
                statuses[status] += 1
                after(statuses.total())

    workers = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return statuses


def served(replica: Process) -> int:
    """GetHint calls the replica answered OK, from its log."""
    return sum(1 for line in replica.lines if GETHINT_LINE.search(line))


@pytest.fixture
def replicas():
    started = [Process() for _ in range(3)]
    yield started
    for p in started:
        p.stop()


def test_every_replica_serves_a_fair_share(replicas):
    with balanced_channel([p.port for p in replicas]) as channel:
        statuses = hints(channel, requests(HINTS))
    assert statuses == {"OK": HINTS}
    time.sleep(0.2)                                 # the last log lines
    shares = [served(p) for p in replicas]
    assert sum(shares) == HINTS, shares
    assert min(shares) >= 0.2 * HINTS, f"hints per replica: {shares}"


def test_a_replica_stopped_in_the_middle_of_the_load_loses_no_call(replicas):
    stopped = replicas[0]

    def sigterm_halfway(done: int) -> None:
        if done == HINTS // 2:
            stopped.proc.send_signal(signal.SIGTERM)

    with balanced_channel([p.port for p in replicas]) as channel:
        statuses = hints(channel, requests(HINTS), after=sigterm_halfway)
    assert statuses == {"OK": HINTS}, statuses
    assert stopped.proc.wait(30) == 0
    shares = [served(p) for p in replicas]
    assert sum(shares) == HINTS and shares[0] < HINTS // 2, shares     # it served until it stopped, then not
    assert any("cirulla.server: stopped" in line or '"stopped"' in line for line in stopped.lines)


def test_a_busy_server_says_when_to_retry_and_the_service_config_retries_then(tmp_path):
    """A call refused for want of a search slot carries gRPC's retry pushback
    (grpc-retry-pushback-ms, the RetryInfo's delay): a client with the service
    config waits that long and retries (on another replica, if it has
    several); a client without retries gets the refusal."""
    with running(max_concurrent_searches=1, max_threads=1, slot_wait_ms=0) as server:
        target = f"127.0.0.1:{server.port}"
        long_search = epb.GetHintRequest(view=view_msg(position(1, 3)), budget=epb.Budget(exhaust=True, time_ms=800))
        quick = epb.GetHintRequest(view=view_msg(position(2, 3)), budget=epb.Budget(iterations=100))
        with grpc.insecure_channel(target) as plain, balanced_channel([server.port]) as retrying:
            holder = engine_service_pb2_grpc.EngineServiceStub(plain).GetHint.future(long_search, timeout=10)
            while server.service.limits.slots.in_use == 0:
                time.sleep(0.005)
            with pytest.raises(grpc.RpcError) as refused:
                engine_service_pb2_grpc.EngineServiceStub(plain).GetHint(quick, timeout=10)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            trailers = dict(refused.value.trailing_metadata())
            assert 500 <= int(trailers["grpc-retry-pushback-ms"]) <= 800
            assert abs(int(trailers["grpc-retry-pushback-ms"]) / 1000 - retry_delay(refused.value)) < 0.002
            started = time.monotonic()
            answer = engine_service_pb2_grpc.EngineServiceStub(retrying).GetHint(quick, timeout=10)
            assert answer.hint.best.text and time.monotonic() - started > 0.3     # it waited for the slot
            holder.result()


def test_a_refusal_that_waiting_will_not_cure_tells_retrying_clients_not_to():
    trailers = dict(to_status(RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, "ran past twice the cap"))
                    .trailing_metadata)
    assert trailers["grpc-retry-pushback-ms"] == "-1"           # gRFC A6: negative, no retry
    assert "grpc-retry-pushback-ms" not in dict(to_status(RpcError(grpc.StatusCode.UNAVAILABLE, "x"))
                                                .trailing_metadata)


def test_with_clients_watching_health_a_stopping_server_serves_on_for_the_lame_duck_time():
    """SIGTERM: NOT_SERVING at once, told to the watchers, and calls still
    served for --lame-duck-ms, the time they take to route around it (grpcio
    would end with CANCELLED a call that arrives as it stops)."""
    server = Process("--lame-duck-ms", "1500")
    try:
        watch = server.health.Watch(health_pb2.HealthCheckRequest(), timeout=10)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        server.proc.send_signal(signal.SIGTERM)
        assert next(watch).status == health_pb2.HealthCheckResponse.NOT_SERVING
        answer = server.engine.GetHint(next(requests(1)), timeout=5)      # during the lame duck time
        assert answer.hint.best.text
        assert server.proc.wait(10) == 0
    finally:
        server.stop()


def test_a_search_on_an_iteration_budget_is_expected_to_end_when_its_iterations_are_done():
    """The retry delay told to a refused call came from the holder's time cap
    (10 s for a budget in iterations alone): retrying clients waited 10 s for
    a slot freed in a fraction of a second."""
    with running(max_concurrent_searches=1, max_threads=1, slot_wait_ms=0) as server:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            engine = engine_service_pb2_grpc.EngineServiceStub(channel)
            holder = engine.GetHint.future(epb.GetHintRequest(view=view_msg(position(1, 3)),
                                                              budget=epb.Budget(iterations=60_000, exhaust=True)),
                                               timeout=30)
            while server.service.limits.slots.in_use == 0:
                time.sleep(0.005)
            with pytest.raises(grpc.RpcError) as refused:
                engine.GetHint(next(requests(1)), timeout=10)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert retry_delay(refused.value) <= 60_000 / 300 / 1000        # 60,000 iterations at 300 a ms
            holder.result()
