"""Prometheus metrics of one server, in a registry of its own (several servers
in one process do not clash), served over HTTP on --metrics-listen.

- cirulla_calls_total{method,code}: calls ended, by status code name
- cirulla_call_duration_seconds{method}: how long calls took, streams included
  (counted at their end)
- cirulla_search_slots, cirulla_search_slots_in_use, cirulla_search_calls_waiting:
  the search slots (limits.SearchSlots), read at scrape time
- cirulla_search_iterations_total: iterations of the hint and move searches
  (rate() is iterations per second)
- cirulla_analyses_in_flight: AnalyzeGame calls holding their slots
- process_*: the process collector's CPU, memory and file descriptors

A method this server does not serve is labelled "other": the name is the
caller's, and a label of any value would let a caller grow the registry.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector, start_http_server
from prometheus_client.context_managers import InprogressTracker

from .limits import SearchSlots

# 1 ms (a rules call) to 60 s (past the largest budget: streams and analyses)
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
OTHER_METHOD = "other"


class Metrics:
    def __init__(self, methods: Iterable[str] = ()) -> None:
        """`methods`: the full names (/package.Service/Method) labelled as themselves."""
        self.methods = frozenset(methods)
        self.registry = CollectorRegistry()
        r = self.registry
        self._calls = Counter("cirulla_calls", "Calls ended, by method and status code", ("method", "code"),
                              registry=r)
        self._seconds = Histogram("cirulla_call_duration_seconds", "Call time, from its start to its end",
                                  ("method",), buckets=LATENCY_BUCKETS, registry=r)
        self.iterations = Counter("cirulla_search_iterations", "Iterations of hint and move searches", registry=r)
        self._analyses = Gauge("cirulla_analyses_in_flight", "AnalyzeGame calls running", registry=r)
        self._slots = Gauge("cirulla_search_slots", "Search threads this server runs at once", registry=r)
        self._in_use = Gauge("cirulla_search_slots_in_use", "Search threads running now", registry=r)
        self._waiting = Gauge("cirulla_search_calls_waiting", "Calls waiting for a search slot", registry=r)
        ProcessCollector(registry=r)

    def watch(self, slots: SearchSlots) -> None:
        """Report these slots (read at each scrape)."""
        self._slots.set(slots.capacity)
        self._in_use.set_function(lambda: slots.in_use)
        self._waiting.set_function(lambda: slots.waiting)

    def call_ended(self, method: str, code: grpc.StatusCode, seconds: float) -> None:
        label = method if method in self.methods else OTHER_METHOD
        self._calls.labels(label, code.name).inc()
        self._seconds.labels(label).observe(seconds)

    def analysing(self) -> InprogressTracker:
        """A context manager: one more analysis in flight while it is open."""
        return self._analyses.track_inprogress()

    def serve(self, listen: str) -> MetricsServer:
        """Serve the registry over HTTP on HOST:PORT (port 0: a free one)."""
        host, _, port = listen.rpartition(":")
        try:
            httpd, thread = start_http_server(int(port), addr=host.strip("[]"), registry=self.registry)
        except OSError as e:
            raise RuntimeError(f"cannot serve metrics on {listen}: {e.strerror or e}") from None
        return MetricsServer(httpd, thread)


class MetricsServer:
    def __init__(self, httpd: WSGIServer, thread: threading.Thread):
        self._httpd = httpd
        self._thread = thread

    @property
    def port(self) -> int:
        return self._httpd.server_port

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
