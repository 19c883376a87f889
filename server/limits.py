"""The server's limits on work, written once for every RPC and the JSON-lines
engine: a request's budget checked against the caps and bounded by the
call's deadline, search slots (one per search thread) with a short bounded
wait for a free one, and a cancel token the call's end trips.

A call is anything with ``time_remaining()`` (seconds, or None) and
``add_callback(fn)`` (False if the call has ended): a grpc.ServicerContext, or
the engine mode's own query.
"""
from __future__ import annotations

import itertools
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

import grpc

from cirulla.solver.search import CancelToken, SearchBudget, SearchResult
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import engine_service_pb2 as epb

from .config import ServerConfig
from .errors import BadRequest, RpcError

MIN_SEARCH_MS = 1.0                 # what a call gets whose deadline leaves nothing
ITERATIONS_PER_MS = 300             # a search thread's pace: how long a call expects to hold its slots
MAX_TARGET_STDERR = 100.0           # points: Budget.target_stderr's range is 0 to this
MIN_RETRY_S = 0.01
ENDED_POLL_S = 0.02                 # how often a waiting call looks whether it has ended
TYPICAL_WEIGHT = 0.1                # of the latest hold, in the moving average of how long searches hold their slots


class Call(Protocol):
    def time_remaining(self) -> float | None: ...
    def add_callback(self, callback: Callable[[], None]) -> bool: ...
    def peer(self) -> str: ...
    def cancel(self) -> None: ...


def peer_of(call: Call) -> str:
    """Who the search slots share out fairly: the client's connection."""
    return call.peer()


def expected_ms(budget: SearchBudget) -> float:
    """How long a search should hold its slots: what a refused call's RetryInfo counts on."""
    by_time = budget.time_ms if budget.time_ms is not None else math.inf
    if budget.iterations is None:
        return by_time
    return min(by_time, budget.iterations / (ITERATIONS_PER_MS * budget.threads))


class Limits:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.slots = SearchSlots(config.max_concurrent_searches, wait_ms=config.slot_wait_ms,
                                 max_waiting=config.max_waiting_searches)

    def check_budget(self, budget: epb.Budget | apb.AnalyzeGameRequest, field: str = "budget") -> None:
        """BadRequest naming every field of the budget (or of an analysis's
        request) past the server's caps."""
        c = self.config
        caps = {"time_ms": c.max_budget_ms, "iterations": c.max_iterations, "threads": c.thread_cap}
        fields = budget.DESCRIPTOR.fields_by_name
        problems = [(f"{field}.{name}" if field else name, f"{getattr(budget, name)} is out of range 0..{cap}")
                    for name, cap in caps.items() if name in fields and not 0 <= getattr(budget, name) <= cap]
        if isinstance(budget, epb.Budget) and not 0 <= budget.target_stderr <= MAX_TARGET_STDERR:  # NaN fails too
            problems.append((f"{field}.target_stderr",
                             f"{budget.target_stderr} is not a number from 0 to {MAX_TARGET_STDERR:g}"))
        if problems:
            raise BadRequest(problems)

    def budget(self, msg: epb.Budget, call: Call, seed: int, field: str = "budget",
               on_progress: Callable[[SearchResult], None] | None = None,
               progress_interval_ms: float = 250.0) -> SearchBudget:
        """The search budget of a request's Budget, checked against the caps
        (BadRequest naming every field past them): no caps named, the default
        budget with the server's default time; an iteration cap alone bounded
        in time by the server's cap; the stopping rule unless it asks to
        exhaust; all of it ending before the call's deadline (less the margin to
        send the answer). Made once for a call, so checked once."""
        self.check_budget(msg, field)
        c = self.config
        now = time.monotonic()
        deadline = None
        remaining = call.time_remaining()
        if remaining is not None:
            deadline = now + max(remaining * 1000 - c.deadline_margin_ms, MIN_SEARCH_MS) / 1000
        if msg.iterations and not msg.time_ms:
            # the server's cap on time is a deadline: a search it stops is cut short
            deadline = min(deadline or math.inf, now + c.max_budget_ms / 1000)
        return SearchBudget.of(iterations=msg.iterations, time_ms=msg.time_ms, default_time_ms=c.default_budget_ms,
                               exhaust=msg.exhaust, target_stderr=msg.target_stderr, threads=msg.threads or 1,
                               seed=seed, deadline=deadline, cancel=self.cancel_token(call),
                               on_progress=on_progress, progress_interval_ms=progress_interval_ms)

    @contextmanager
    def searching(self, budget: SearchBudget, call: Call) -> Iterator[None]:
        """Hold the budget's search slots while the block runs, waiting for them a
        short while (never past the deadline)."""
        remaining = call.time_remaining()
        deadline_wait = None if remaining is None else max(remaining - self.config.deadline_margin_ms / 1000, 0)
        cancel = budget.cancel
        expected = expected_ms(budget)
        typical = self.slots.typical_ms
        if budget.stopping is not None and typical is not None:
            expected = min(expected, typical)     # a settled search ends long before its caps
        with self.slots.hold(budget.threads, expected_ms=expected, at_most=deadline_wait,
                             ended=lambda: cancel is not None and cancel.cancelled, peer=peer_of(call)):
            yield

    def shed(self, budget: epb.Budget, call: Call) -> None:
        """Refuse a search call at once, before its request is read, if it
        would find no slot and no room to wait (SearchSlots.refuse_if_full)."""
        threads = min(max(budget.threads, 1), self.slots.capacity)
        self.slots.refuse_if_full(threads, peer_of(call))

    @staticmethod
    def cancel_token(call: Call) -> CancelToken:
        """A token tripped when the call ends (cancelled, timed out, or done)."""
        token = CancelToken()
        if not call.add_callback(token.cancel):     # the call has ended already
            token.cancel()
        return token


class SearchSlots:
    """Search threads in use, against the cap. A call that finds no free slot
    waits up to `wait_ms`, with at most `max_waiting` calls waiting (and at most
    half of them from one peer), and only if the line ahead of it should clear
    within its wait (by how long searches lately held their slots): a call that
    would time out in the line is refused at once rather than after its wait.
    A refused call gets RESOURCE_EXHAUSTED with a google.rpc.RetryInfo of when
    the line should have room for it again: told only when the next slot frees,
    the calls refused by a long line came back to be refused again, and a
    saturated server spent a third of its CPU refusing them.

    Fair between peers: a freed slot goes to the waiting call whose peer holds
    the fewest threads, first come first served among equals. A peer alone may
    use every free slot; one that floods the server only queues behind the
    others' calls."""

    def __init__(self, capacity: int, *, wait_ms: int = 0, max_waiting: int = 0):
        self.capacity = capacity
        self.wait_ms = wait_ms
        self.max_waiting = max_waiting
        self.max_waiting_per_peer = max(1, max_waiting // 2)
        self._used = 0
        self._held: Counter[str] = Counter()  # peer -> threads it holds
        self._ends: dict[int, float] = {}     # holder -> when it expects to finish (monotonic)
        self._queue: dict[int, str] = {}      # tickets of the waiting calls -> their peers, in order
        self._starts: dict[int, float] = {}   # holder -> when it took its slots (monotonic)
        self._typical_ms: float | None = None
        self._tickets = itertools.count()
        self._cond = threading.Condition()

    @property
    def in_use(self) -> int:
        with self._cond:
            return self._used

    @property
    def waiting(self) -> int:
        with self._cond:
            return len(self._queue)

    def acquire(self, n: int, *, expected_ms: float = 0.0, at_most: float | None = None,
                ended: Callable[[], bool] = lambda: False, peer: str = "") -> int:
        """Take n slots, waiting up to the configured time (and `at_most`
        seconds) unless the call ends first; a ticket to release them with."""
        wait = self.wait_ms / 1000 if at_most is None else min(self.wait_ms / 1000, at_most)
        with self._cond:
            ticket = next(self._tickets)
            if self._queue or self._used + n > self.capacity:
                refusal = self._refusal_now(n, peer, wait)
                if refusal is not None:
                    raise refusal
                self._queue[ticket] = peer
                try:
                    until = time.monotonic() + wait
                    while not (self._next_in_line() == ticket and self._used + n <= self.capacity):
                        if ended():
                            raise RpcError(grpc.StatusCode.CANCELLED,
                                           "the call ended while it waited for a search slot")
                        left = until - time.monotonic()
                        if left <= 0:
                            raise self._refusal(n)
                        self._cond.wait(min(left, ENDED_POLL_S))   # a call's end does not notify
                finally:
                    del self._queue[ticket]
                    self._cond.notify_all()       # the next in line may fit now
            self._used += n
            self._held[peer] += n
            self._starts[ticket] = time.monotonic()
            self._ends[ticket] = self._starts[ticket] + expected_ms / 1000
            return ticket

    def refuse_if_full(self, n: int, peer: str = "") -> None:
        """Refuse a call now that acquire() would refuse at once (every slot
        busy and the waiting line full), before any work on its request: a
        saturated server spent more CPU reading the views of the calls it
        refused than searching for those it served."""
        with self._cond:
            if self._queue or self._used + n > self.capacity:
                refusal = self._refusal_now(n, peer, self.wait_ms / 1000)
                if refusal is not None:
                    raise refusal

    def _refusal_now(self, n: int, peer: str, wait: float) -> RpcError | None:
        """The refusal of a call that finds no free slot, unless it may wait (the lock held)."""
        if len(self._queue) >= self.max_waiting or wait <= 0:
            return self._refusal(n)
        if self._wait_s(len(self._queue) + n) > wait:
            return self._refusal(n, f", more than this call may wait ({wait * 1000:.0f} ms) to clear")
        peer_waiting = sum(1 for p in self._queue.values() if p == peer)
        if peer_waiting >= self.max_waiting_per_peer:
            return self._refusal(n, f"; {peer_waiting} of them are this peer's, the most one peer may have")
        return None

    def _wait_s(self, threads: int) -> float:
        """How long until `threads` more search threads have started (the lock
        held): the first when the soonest search holding slots should end, each
        further one a search's time (lately) over the slots later."""
        if threads <= 0:
            return 0.0
        now = time.monotonic()
        soonest = max(min((end - now for end in self._ends.values()), default=0.0), 0.0)
        return soonest + (self._typical_ms or 0.0) * (threads - 1) / self.capacity / 1000

    @property
    def typical_ms(self) -> float | None:
        """How long a search has held its slots lately (a moving average), or None before any."""
        with self._cond:
            return self._typical_ms

    def release(self, n: int, ticket: int, peer: str = "") -> None:
        with self._cond:
            held_ms = (time.monotonic() - self._starts.pop(ticket, time.monotonic())) * 1000
            self._typical_ms = held_ms if self._typical_ms is None else \
                self._typical_ms + TYPICAL_WEIGHT * (held_ms - self._typical_ms)
            self._used -= n
            self._held[peer] -= n
            if not self._held[peer]:
                del self._held[peer]
            self._ends.pop(ticket, None)
            self._cond.notify_all()

    @contextmanager
    def hold(self, n: int, *, expected_ms: float = 0.0, at_most: float | None = None,
             ended: Callable[[], bool] = lambda: False, peer: str = "") -> Iterator[None]:
        ticket = self.acquire(n, expected_ms=expected_ms, at_most=at_most, ended=ended, peer=peer)
        try:
            yield
        finally:
            self.release(n, ticket, peer)

    def _next_in_line(self) -> int:
        """The waiting call whose peer holds the fewest threads, the earliest of those."""
        return min(self._queue, key=lambda t: (self._held[self._queue[t]], t))

    def _refusal(self, n: int, why: str = "") -> RpcError:
        """RESOURCE_EXHAUSTED, to retry when this call could wait: the line
        short enough for its wait, and room in it (the lock held)."""
        line = len(self._queue)
        retry = max(self._wait_s(line + n) - self.wait_ms / 1000, self._wait_s(line - self.max_waiting + 1),
                    MIN_RETRY_S)
        return RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"the server is running {self._used} of {self.capacity} search threads "
                        f"and {line} call(s) wait for one{why}; this call needs {n}: retry later",
                        retry_after=retry)
