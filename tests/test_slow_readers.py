"""StreamHint under clients that do not read: the server keeps each stream's
latest report, not a backlog of them, and the memory of an ended search goes
back to the system though the stream's final report still waits for its
reader; every stream ends with its final report once read."""
from __future__ import annotations

import re
import time
from pathlib import Path

import grpc
import pytest
from test_metrics import scrape, value, wait_for
from test_server_process import Process

from cirulla.server import service
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc
from server_support import choice_position, running, view_msg

STREAMS = 8
UNREAD_S = 12                   # longer than the searches: their reports have all been made
MAX_GROWTH_MB = 20              # unread, two such streams once took 145 MB


def rss_mb(pid: int) -> float:
    """The process's resident memory (VmRSS), in MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    found = re.search(r"^VmRSS:\s+(\d+) kB$", status, re.M)
    assert found, status
    return int(found.group(1)) / 1024


def test_unread_streams_keep_the_server_memory_flat():
    """8 streams of a 10 s search with a report every 10 ms, none read for 12 s
    (and until the searches have ended: the memory of a running search is
    not what is measured)."""
    p = Process("--max-concurrent-searches", str(STREAMS), "--max-threads", "1", "--metrics-listen", "127.0.0.1:0")
    # No BDP probing: the client's window stays at HTTP/2's initial 64 KB, so the
    # server's sends soon wait for the reader, as with any client that stops reading.
    channel = grpc.insecure_channel(f"127.0.0.1:{p.port}", options=[("grpc.http2.bdp_probe", 0)])
    try:
        view = view_msg(choice_position(min_moves=9))     # the more moves, the larger a report
        engine = engine_service_pb2_grpc.EngineServiceStub(channel)
        request = epb.StreamHintRequest(view=view, budget=epb.Budget(exhaust=True, time_ms=10_000), interval_ms=10)
        p.engine.GetHint(epb.GetHintRequest(view=view, budget=epb.Budget(time_ms=100)), timeout=60)   # warm
        before = rss_mb(p.proc.pid)
        streams = [engine.StreamHint(request, timeout=300) for _ in range(STREAMS)]
        time.sleep(UNREAD_S)
        assert wait_for(lambda: value(scrape(f"127.0.0.1:{p.metrics_port}"), "cirulla_search_slots_in_use") == 0,
                        seconds=60), "the searches did not end"
        growth = rss_mb(p.proc.pid) - before
        assert growth <= MAX_GROWTH_MB, f"RSS grew by {growth:.1f} MB with {STREAMS} streams unread"

        for stream in streams:
            replies = list(stream)
            assert [r.final for r in replies] == [False] * (len(replies) - 1) + [True], len(replies)
            assert len(replies) >= 2 and all(r.hint.moves for r in replies)
            assert not replies[-1].hint.cut_short
    finally:
        channel.close()
        p.stop()


def test_a_stream_whose_final_report_is_never_read_frees_its_handler(monkeypatch):
    """A client that stops reading holds the handler's thread in grpcio's send;
    once the search has ended, the final report waits FINAL_REPORT_WAIT_S for
    the reader, then the call is cancelled and the thread is free."""
    monkeypatch.setattr(service, "FINAL_REPORT_WAIT_S", 0.5)
    with running(max_concurrent_searches=1, max_threads=1) as server:
        channel = grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[("grpc.http2.bdp_probe", 0)])
        try:
            engine = engine_service_pb2_grpc.EngineServiceStub(channel)
            view = view_msg(choice_position(min_moves=9))
            stream = engine.StreamHint(epb.StreamHintRequest(view=view, budget=epb.Budget(exhaust=True, time_ms=1000),
                                                             interval_ms=10), timeout=300)
            assert wait_for(lambda: server.calls.in_flight == 1, seconds=30), "the stream did not start"
            assert wait_for(lambda: server.calls.in_flight == 0, seconds=60), "the unread stream holds its thread"
            with pytest.raises(grpc.RpcError) as ended:
                list(stream)
            assert ended.value.code() is grpc.StatusCode.CANCELLED
        finally:
            channel.close()
