"""The cirulla.v1 RPCs as plain methods, whatever carries them.

Each method takes a request message and a call (its deadline and its end:
see limits.Call) and returns the response message, or yields them for a
stream; bad input raises BadRequest naming every field at fault, other
refusals RpcError. The gRPC servicers (servicers.py) and the JSON-lines
engine (`cirulla engine`) are thin shells around this class.
"""
from __future__ import annotations

import ctypes
import functools
import platform
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Concatenate, Generic, ParamSpec, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message

from cirulla.solver import analysis, players, record
from cirulla.solver.bounds import out_of_bounds
from cirulla.solver.errors import CirullaError
from cirulla.solver.i18n import Translations, language_of
from cirulla.solver.rules import Rules
from cirulla.solver.search import SearchBudget, SearchResult, build_tables, search
from cirulla.solver.view import SeatView
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import game_pb2 as pb
from cirulla.v1 import rules_service_pb2 as rpb

from . import convert
from .config import ServerConfig
from .convert import Problems
from .errors import BadRequest, RpcError
from .limits import ITERATIONS_PER_MS, Call, Limits, peer_of
from .metrics import Metrics

DEFAULT_INTERVAL_MS = 250
FINAL_REPORT_WAIT_S = 10.0      # after a stream's search ends, how long its final report waits for the reader
# glibc's malloc raises its mmap threshold to the largest block freed (up to 32 MB), so
# that a search's tree, grown by doubling, soon lives on the heap; freed, it stays in RSS
# for as long as anything allocated after it lives on (a stream's final report waiting
# for its reader: 18 MB a stream). Fixed at glibc's starting value, every large block
# is mapped on its own and goes back to the system when freed.
M_MMAP_THRESHOLD = -3                   # mallopt's parameter (malloc.h)
MMAP_THRESHOLD_BYTES = 128 * 1024

# the Strength enum's levels: the solver's (players.LEVELS), which `cirulla play` offers too
STRENGTHS = {
    epb.STRENGTH_BEGINNER: players.level("beginner"),
    epb.STRENGTH_CASUAL: players.level("casual"),
    epb.STRENGTH_INTERMEDIATE: players.level("intermediate"),
    epb.STRENGTH_ADVANCED: players.level("advanced"),
    epb.STRENGTH_FULL: players.level("full"),
}

# what a streamed search's thread hands over: (final, the ranking so far), or what it raised
_Update: TypeAlias = tuple[bool, SearchResult] | BaseException

Request = TypeVar("Request", bound=Message)
P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")


def _door(method: Callable[Concatenate[Service, Request, P], R]) -> Callable[Concatenate[Service, Request, P], R]:
    """The RPC, its request's integers first checked against the ranges the
    schema gives them (cirulla.solver.bounds): with any out of range, nothing
    acts on the request's numbers, and the answer names them with every
    problem that can be found without them."""
    @functools.wraps(method)
    def checked(self: Service, request: Request, /, *args: P.args, **kwargs: P.kwargs) -> R:
        outside = out_of_bounds(request)
        if outside:
            raise self.refusal(request, outside)
        return method(self, request, *args, **kwargs)
    return checked


class Mailbox(Generic[T]):
    """One slot between a thread that puts and one that takes: a put replaces
    what waits there untaken, so a taker that falls behind (a client that does
    not read its stream) costs one item, never a backlog, and the putter never
    waits. The last item put is always taken.

    >>> box: Mailbox[str] = Mailbox()
    >>> box.put("interim 1"); box.put("interim 2"); box.put("final")
    >>> box.take()
    'final'
    """

    def __init__(self) -> None:
        self._filled = threading.Condition()
        self._slot: list[T] = []                # empty, or the item waiting

    def put(self, item: T) -> None:
        with self._filled:
            self._slot[:] = [item]
            self._filled.notify()

    def take(self) -> T:
        """The item waiting, once there is one."""
        with self._filled:
            self._filled.wait_for(lambda: self._slot)
            return self._slot.pop()


def return_large_blocks_when_freed() -> None:
    """For a long-lived process of many searches (the server's, the engine's): a
    setting of the whole process's malloc, made by its entry point once."""
    if platform.libc_ver()[0] == "glibc":
        ctypes.CDLL(None).mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


class Service:
    def __init__(self, config: ServerConfig, metrics: Metrics | None = None):
        self.config = config
        self.limits = Limits(config)
        self.metrics = metrics if metrics is not None else Metrics()      # (the engine mode's: not served)
        self._engine_infos: dict[str, epb.GetEngineInfoResponse] = {}     # GetEngineInfo's answer by language

    def warm_up(self, presets: Iterable[str]) -> None:
        """Build the tables of these presets now, not in a call's deadline (others
        are built in the background the first time a call needs them)."""
        for name in presets:
            build_tables(Rules.preset(name))

    # --- EngineService ---

    @_door
    def get_hint(self, request: epb.GetHintRequest, call: Call) -> epb.GetHintResponse:
        view, budget, tr = self._hint_view(request, call)
        with self.limits.searching(budget, call):
            result = self._search(view, budget)
        return epb.GetHintResponse(hint=convert.hint_to_proto(result, request.seed, table=view.table, tr=tr),
                                   view=convert.view_to_proto(view))

    @_door
    def stream_hint(self, request: epb.StreamHintRequest, call: Call) -> Iterator[epb.StreamHintResponse]:
        updates: Mailbox[_Update] = Mailbox()
        view, budget, tr = self._hint_view(request, call, updates, request.interval_ms or DEFAULT_INTERVAL_MS)
        yield from self.progress(view, budget, call, updates, tr)

    @_door
    def get_hint_reports(self, request: epb.GetHintRequest, call: Call,
                         interval_ms: int) -> Iterator[tuple[epb.GetHintResponse, bool]]:
        """get_hint with the ranking so far every `interval_ms` while the search
        runs (the JSON-lines engine's report_interval_ms): (response, final)
        pairs, the interim ones with the hint alone, the last one (final True)
        what get_hint returns, the completed view included. The caller checks
        the interval (the engine's query has its range)."""
        updates: Mailbox[_Update] = Mailbox()
        view, budget, tr = self._hint_view(request, call, updates, interval_ms)
        completed = convert.view_to_proto(view)
        for update in self.progress(view, budget, call, updates, tr):
            yield epb.GetHintResponse(hint=update.hint, view=completed if update.final else None), update.final

    def progress(self, view: SeatView, budget: SearchBudget, call: Call, updates: Mailbox[_Update],
                 tr: Translations) -> Iterator[epb.StreamHintResponse]:
        """A search's interim rankings (the budget's on_progress puts them in
        `updates`, see _hint_view), then its final one, their reasons in the
        language of `tr`.
        The search runs on its own thread and holds its slots only while it runs.
        A caller slower than the reports (a client that does not read: grpcio's
        send waits for its HTTP/2 window) gets the latest ranking when it takes
        the next one, those in between dropped, and never misses the final one."""
        token = budget.cancel
        assert token is not None, "Limits.budget gives every budget the call's cancel token"
        held = self.limits.searching(budget, call)
        held.__enter__()
        taken = threading.Event()                   # the caller has taken the final report, or left

        def run() -> None:
            try:
                with _view_errors():
                    updates.put((True, self._counted(search(view, budget, wait_for_tables=False))))
            except BaseException as e:      # noqa: BLE001 - handed to the caller's thread
                updates.put(e)
            finally:
                held.__exit__(None, None, None)   # the core is free as soon as the search ends
            # and a caller that does not take its final report soon (a client that stopped
            # reading: grpcio's send holds the handler's thread) loses the call, not a thread
            if not taken.wait(FINAL_REPORT_WAIT_S):
                call.cancel()

        threading.Thread(target=run, name="cirulla-stream-search", daemon=True).start()
        try:
            while True:
                update = updates.take()
                if isinstance(update, BaseException):
                    raise update
                final, result = update
                hint = convert.hint_to_proto(result, budget.seed, table=view.table, tr=tr)
                yield epb.StreamHintResponse(hint=hint, final=final)
                if final:
                    return
        finally:
            taken.set()
            token.cancel()                  # the caller left: stop the search

    @_door
    def choose_move(self, request: epb.ChooseMoveRequest, call: Call) -> epb.ChooseMoveResponse:
        self.limits.shed(request.budget, call)
        problems = Problems()
        view = problems.check(self._view_to_move, request.view)
        level = STRENGTHS.get(request.strength)
        if level is None:
            problems.add("strength", f"{_strength_name(request.strength)}: name one of "
                                     + ", ".join(epb.Strength.Name(s) for s in STRENGTHS))
        msg = request.budget
        if level is not None and (level.name != "full" or not (msg.time_ms or msg.iterations)):
            # a level's own budget, reproducible by seed: its iterations to the end,
            # or at full strength the default budget (Level.budget)
            msg = epb.Budget(threads=msg.threads) if level.settles else \
                epb.Budget(iterations=min(level.iterations or 0, self.config.max_iterations), exhaust=True)
        budget = problems.check(self.limits.budget, msg, call, request.seed)
        problems.raise_any()
        assert view is not None and level is not None and budget is not None, "raise_any() raised for a missing one"
        strength = request.strength
        legal = view.legal_moves()
        if len(legal) == 1:                 # nothing to think about
            return epb.ChooseMoveResponse(move=convert.move_to_proto(legal[0]), strength=strength,
                                          stats=epb.EngineStats(method=epb.SEARCH_METHOD_FORCED, seed=request.seed,
                                                                stopped_because=epb.STOP_REASON_FORCED))
        with self.limits.searching(budget, call):
            result = self._search(view, budget)
        move = level.choose(result, request.seed, view.greedy_move)      # the same as players.choose_move
        return epb.ChooseMoveResponse(move=convert.move_to_proto(move), strength=strength,
                                      cut_short=result.cut_short, stats=convert.stats_to_proto(result, request.seed))

    @_door
    def get_engine_info(self, request: epb.GetEngineInfoRequest, call: Call) -> epb.GetEngineInfoResponse:
        tr = convert.language_from_proto(request.language)
        info = epb.GetEngineInfoResponse()
        info.CopyFrom(self._engine_info(tr))        # the caller's own copy
        return info

    def _engine_info(self, tr: Translations) -> epb.GetEngineInfoResponse:
        """What GetEngineInfo answers in `tr`'s language, the same for the
        server's life: built once a language (reading the installed version's
        metadata took most of a call: once a server)."""
        language = language_of(tr)
        if language not in self._engine_infos:      # (two calls may build it at once: the same answer)
            self._engine_infos[language] = convert.engine_info_to_proto(
                version=self._version, config=self.config, strengths=list(STRENGTHS.items()), tr=tr)
        return self._engine_infos[language]

    @functools.cached_property
    def _version(self) -> str:
        return version()

    # --- RulesService ---

    @_door
    def list_legal_moves(self, request: rpb.ListLegalMovesRequest, call: Call) -> rpb.ListLegalMovesResponse:
        view = self._view_to_move(request.view)
        return rpb.ListLegalMovesResponse(moves=[convert.move_to_proto(m) for m in view.legal_moves()])

    @_door
    def replay_record(self, request: rpb.ReplayRecordRequest, call: Call) -> rpb.ReplayRecordResponse:
        convert.check_record(request.record)
        try:
            match = record.from_proto(request.record)
        except CirullaError as e:
            # the header was checked above: what the replay rejects is an event, or the winner
            event = getattr(e, "event", None)
            return rpb.ReplayRecordResponse(illegal_event=rpb.IllegalEvent(
                index=-1 if event is None else event, field=convert.path("record", e.field), reason=e.reason))
        return rpb.ReplayRecordResponse(state=convert.match_state_to_proto(match))

    # --- AnalysisService ---

    @_door
    def analyze_game(self, request: apb.AnalyzeGameRequest, call: Call) -> Iterator[apb.AnalyzeGameResponse]:
        c = self.config
        problems = Problems()
        problems.check(self.limits.check_budget, request, "")
        match = problems.check(convert.record_from_proto, request.record)
        tr = problems.check(convert.language_from_proto, request.language)
        problems.raise_any()
        assert match is not None and tr is not None, "raise_any() raised for a missing one"
        threads = request.threads or min(analysis.DEFAULT_JOBS, c.thread_cap)
        iterations = request.iterations or analysis.DEFAULT_ITERATIONS
        total = analysis.decision_count(match)
        expected_ms = 3 * total * iterations / ITERATIONS_PER_MS / threads
        if expected_ms > c.max_analysis_seconds * 1000:
            most = int(c.max_analysis_seconds * 1000 * ITERATIONS_PER_MS * threads / (3 * total))
            raise BadRequest.one("iterations", f"{iterations} iterations x 3 searches x {total} decisions would take "
                                               f"about {expected_ms / 1000:.0f} s on {threads} thread(s); this "
                                               f"server allows {c.max_analysis_seconds} s: ask for at most {most}")
        token = self.limits.cancel_token(call)
        past_cap = threading.Event()

        def stop_at_cap() -> None:
            past_cap.set()
            token.cancel()

        timer = threading.Timer(2 * c.max_analysis_seconds, stop_at_cap)
        timer.daemon = True
        with self.limits.slots.hold(threads, expected_ms=expected_ms, ended=lambda: token.cancelled,
                                   peer=peer_of(call)), self.metrics.analysing():
            timer.start()
            stream = analysis.analyze(match, iterations=iterations, seed=request.seed, jobs=threads, cancel=token)
            try:
                done = 0
                for item in stream:
                    if isinstance(item, analysis.Decision):
                        done += 1
                        yield apb.AnalyzeGameResponse(decision=convert.decision_to_proto(item, tr),
                                                      done=done, total=total)
                    else:
                        yield apb.AnalyzeGameResponse(summary=convert.summary_to_proto(item),
                                                      done=done, total=total)
            finally:
                stream.close()              # the caller left: stop the searches
                timer.cancel()
        if past_cap.is_set():
            raise RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED,
                           f"the analysis ran past twice the server's cap of {c.max_analysis_seconds} s and "
                           "was stopped: ask for fewer iterations")

    # --- shared ---

    def refusal(self, request: Message, outside: list[tuple[str, str]]) -> BadRequest:
        """A request with numbers out of range refused, the other problems of
        its parts named too, from the checks that act on no number: a view's
        cards, rules and shape (nothing replayed), a record's header and
        cards, a budget against the server's caps."""
        problems = Problems()
        if isinstance(request, apb.AnalyzeGameRequest):     # its own budget
            problems.check(self.limits.check_budget, request, "")
        for field, value in request.ListFields():           # in the schema's order
            mine = [(path, reason) for path, reason in outside if path.split(".")[0].split("[")[0] == field.name]
            if isinstance(value, pb.SeatView):
                relative = [(path.removeprefix(field.name + "."), reason) for path, reason in mine]
                problems.check(convert.view_from_proto, value, field.name, known=relative)
            elif isinstance(value, pb.Record):
                problems.check(convert.check_record, value, field.name)
            elif isinstance(value, epb.Budget):             # (the server's caps: a closer range than the schema's)
                problems.check(self.limits.check_budget, value, field.name)
            elif field.name == "language":
                problems.check(convert.language_from_proto, value, field.name)
            problems.items += mine
        return BadRequest(problems.one_per_field())

    def _hint_view(self, request: epb.GetHintRequest | epb.StreamHintRequest, call: Call,
                   updates: Mailbox[_Update] | None = None,
                   interval_ms: int = DEFAULT_INTERVAL_MS) -> tuple[SeatView, SearchBudget, Translations]:
        """A hint request's view, search budget (its interim rankings put in
        `updates`) and the translator of its language: every violation raised
        at once, the budget checked once; a call the search slots would refuse
        at once is refused before any of it is read."""
        self.limits.shed(request.budget, call)
        problems = Problems()
        view = problems.check(self._view_to_move, request.view)
        budget = problems.check(self.limits.budget, request.budget, call, request.seed,
                                on_progress=None if updates is None else lambda r: updates.put((False, r)),
                                progress_interval_ms=interval_ms)
        tr = problems.check(convert.language_from_proto, request.language)
        problems.raise_any()
        assert view is not None and budget is not None and tr is not None, "raise_any() raised for a missing one"
        return view, budget, tr

    @staticmethod
    def _view_to_move(msg: pb.SeatView) -> SeatView:
        """The request's view, which must be the seat to move's, with a move to make."""
        view = convert.view_from_proto(msg)
        with _view_errors():
            view.legal_moves()
        return view

    def _search(self, view: SeatView, budget: SearchBudget) -> SearchResult:
        with _view_errors():
            # a call keeps its budget: an option set's first search does not wait for its tables
            return self._counted(search(view, budget, wait_for_tables=False))

    def _counted(self, result: SearchResult) -> SearchResult:
        self.metrics.iterations.inc(result.iterations)
        return result


def _strength_name(number: int) -> str:
    if number == epb.STRENGTH_UNSPECIFIED:
        return "required"
    return f"unknown value {number}"


@contextmanager
def _view_errors() -> Iterator[None]:
    """A view the search rejects after the server's checks passed it is still bad input."""
    try:
        yield
    except CirullaError as e:
        raise convert.bad_request(e, "view") from None


def version() -> str:
    try:
        return metadata.version("cirulla")
    except metadata.PackageNotFoundError:
        return "unknown"
