"""cirulla.v1.EngineService: hints and AI moves from the search.

Every search runs under the server's limits: a slot per search thread (past
the cap: RESOURCE_EXHAUSTED), a budget no larger than the caps, a time that
ends before the call's deadline, and a CancelToken the call's end trips (a
cancelled or timed-out call frees its core at once).
"""
from __future__ import annotations

import queue
import random
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata

import grpc

from cirulla.solver import players
from cirulla.solver.errors import CirullaError
from cirulla.solver.rules import Rules
from cirulla.solver.search import CancelToken, equity_table, search
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc as epb_grpc

from . import convert, positions
from .config import ServerConfig
from .errors import BadRequest, RpcError, rpc

MIN_SEARCH_MS = 1.0                 # what a call gets whose deadline leaves nothing
MIN_INTERVAL_MS, MAX_INTERVAL_MS = 10, 60_000


# the Strength enum's levels: the solver's (players.LEVELS), which `cirulla play` offers too
STRENGTHS = {
    epb.STRENGTH_BEGINNER: players.level("beginner"),
    epb.STRENGTH_CASUAL: players.level("casual"),
    epb.STRENGTH_INTERMEDIATE: players.level("intermediate"),
    epb.STRENGTH_ADVANCED: players.level("advanced"),
}
FULL_ITERATIONS = players.level("full").iterations   # STRENGTH_FULL without a budget: reproducible by seed


@dataclass(frozen=True)
class Plan:
    """One search's budget after the caps and the deadline."""
    time_ms: float
    iterations: int | None
    threads: int
    deadline_bound: bool            # the deadline, not the request, set time_ms


class SearchSlots:
    """Search threads in use, against the cap."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._used = 0
        self._lock = threading.Lock()

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._used

    def acquire(self, n: int) -> None:
        with self._lock:
            if self._used + n > self.capacity:
                raise RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                               f"the server is running {self._used} of {self.capacity} search threads; "
                               f"this call needs {n}: retry later")
            self._used += n

    def release(self, n: int) -> None:
        with self._lock:
            self._used -= n

    @contextmanager
    def hold(self, n: int):
        self.acquire(n)
        try:
            yield
        finally:
            self.release(n)


class EngineServicer(epb_grpc.EngineServiceServicer):

    def __init__(self, config: ServerConfig):
        self.config = config
        self.slots = SearchSlots(config.max_concurrent_searches)

    def warm_up(self, presets) -> None:
        """Build the match-equity tables of these presets now, not in a call's deadline."""
        for name in presets:
            equity_table(Rules.preset(name))

    # --- RPCs ---

    @rpc
    def GetHint(self, request, context):
        view = convert.view_from_proto(request.view)
        positions.legal_moves(view)                     # the seat to move, with a move to make
        plan = self._plan(request.budget, context)
        result = self._search(view, plan, request.seed, context)
        return epb.GetHintResponse(hint=self._hint(result, plan, request.seed))

    @rpc
    def StreamHint(self, request, context):
        view = convert.view_from_proto(request.view)
        positions.legal_moves(view)
        interval = request.interval_ms or 250
        if not MIN_INTERVAL_MS <= interval <= MAX_INTERVAL_MS:
            raise BadRequest.one("interval_ms", f"{interval} is out of range {MIN_INTERVAL_MS}..{MAX_INTERVAL_MS}")
        plan = self._plan(request.budget, context)
        updates: queue.Queue = queue.Queue()
        token = self._cancel_token(context)
        self.slots.acquire(plan.threads)

        def run():
            try:
                with _view_errors():
                    updates.put(("final", search(
                        view, iterations=plan.iterations, time_ms=plan.time_ms, seed=request.seed,
                        threads=plan.threads, cancel=token, progress_interval_ms=interval,
                        on_progress=lambda interim: updates.put(("interim", interim)))))
            except BaseException as e:      # noqa: BLE001 - handed to the caller's thread
                updates.put(("error", e))
            finally:
                self.slots.release(plan.threads)   # the core is free as soon as the search ends

        worker = threading.Thread(target=run, name="cirulla-stream-search", daemon=True)
        worker.start()
        try:
            while True:
                kind, value = updates.get()
                if kind == "error":
                    raise value
                final = kind == "final"
                hint = self._hint(value, plan, request.seed) if final else \
                    convert.hint_to_proto(value, request.seed, cut_short=False)
                yield epb.StreamHintResponse(hint=hint, final=final)
                if final:
                    return
        finally:
            token.cancel()                  # the client left: stop the search

    @rpc
    def ChooseMove(self, request, context):
        view = convert.view_from_proto(request.view)
        legal = positions.legal_moves(view)
        strength = request.strength or epb.STRENGTH_FULL
        if strength not in STRENGTHS and strength != epb.STRENGTH_FULL:
            raise BadRequest.one("strength", f"unknown strength {strength}")
        rng = random.Random(f"{request.seed}/{strength}")
        level = STRENGTHS.get(strength)
        if level is None:
            budget = request.budget
            if not budget.time_ms and not budget.iterations:
                budget = epb.Budget(iterations=min(FULL_ITERATIONS, self.config.max_iterations),
                                    threads=budget.threads)
        else:
            budget = epb.Budget(iterations=min(level.iterations, self.config.max_iterations))
        plan = self._plan(budget, context, field="budget")
        if len(legal) == 1:                 # nothing to think about
            return epb.ChooseMoveResponse(move=convert.move_to_proto(legal[0]), strength=strength,
                                          stats=epb.EngineStats(threads=0, method="forced", seed=request.seed))
        result = self._search(view, plan, request.seed, context)
        move = result.best if level is None else level.pick(result, rng, lambda: positions.greedy_move(view))
        return epb.ChooseMoveResponse(move=convert.move_to_proto(move), strength=strength,
                                      cut_short=self._cut_short(result, plan),
                                      stats=convert.stats_to_proto(result, request.seed))

    @rpc
    def GetEngineInfo(self, request, context):
        return convert.engine_info_to_proto(
            version=_version(), config=self.config,
            strengths=[*STRENGTHS, epb.STRENGTH_FULL])

    # --- searching under the limits ---

    def _plan(self, budget: epb.Budget, context, field: str = "budget") -> Plan:
        c = self.config
        problems = []
        if not 0 <= budget.time_ms <= c.max_budget_ms:
            problems.append((f"{field}.time_ms", f"{budget.time_ms} is out of range 0..{c.max_budget_ms}"))
        if not 0 <= budget.iterations <= c.max_iterations:
            problems.append((f"{field}.iterations", f"{budget.iterations} is out of range 0..{c.max_iterations}"))
        if not 0 <= budget.threads <= c.max_threads:
            problems.append((f"{field}.threads", f"{budget.threads} is out of range 0..{c.max_threads}"))
        if problems:
            raise BadRequest(problems)
        # an iteration budget alone is still bounded in time, by the server's cap
        time_ms = float(budget.time_ms or (c.max_budget_ms if budget.iterations else c.default_budget_ms))
        remaining = context.time_remaining()
        deadline_bound = False
        if remaining is not None:
            room = remaining * 1000 - c.deadline_margin_ms
            if room < time_ms:
                time_ms, deadline_bound = max(room, MIN_SEARCH_MS), True
        return Plan(time_ms, budget.iterations or None, budget.threads or 1, deadline_bound)

    def _search(self, view, plan: Plan, seed: int, context):
        token = self._cancel_token(context)
        with self.slots.hold(plan.threads), _view_errors():
            return search(view, iterations=plan.iterations, time_ms=plan.time_ms, seed=seed,
                          threads=plan.threads, cancel=token)

    @staticmethod
    def _cancel_token(context) -> CancelToken:
        token = CancelToken()
        if not context.add_callback(token.cancel):     # the call has ended already
            token.cancel()
        return token

    @staticmethod
    def _cut_short(result, plan: Plan) -> bool:
        """Short of what was asked: the search says so (a cancel, or time running
        out before an iteration budget), or the deadline took time the request
        had asked for."""
        return bool(result.cut_short) or (plan.deadline_bound and plan.iterations is None)

    def _hint(self, result, plan: Plan, seed: int) -> epb.Hint:
        return convert.hint_to_proto(result, seed, cut_short=self._cut_short(result, plan))


@contextmanager
def _view_errors():
    """A view the search rejects after the server's checks passed it is still bad input."""
    try:
        yield
    except CirullaError as e:
        raise BadRequest.one("view", str(e)) from None


def _version() -> str:
    try:
        return metadata.version("cirulla")
    except metadata.PackageNotFoundError:
        return "unknown"
