"""`cirulla analyze RECORDS... --out FILE`: many games analysed at once.

The games go to a Dask cluster, one task each: a running one
(`--scheduler ADDRESS`), or a LocalCluster of `--jobs` worker processes (one
thread each) that the command starts and closes. With `--server ADDRESS` they
go to a running cirulla-server instead, one AnalyzeGame call each, `--jobs`
calls at a time. Each game becomes one line of the output: a
cirulla.v1.GameAnalysisLine in protobuf's JSON mapping, in the order the games
finish.

Nothing is lost:

* A game whose id the output already holds is skipped, so rerunning the
  same command resumes an interrupted run. The file is only ever appended
  to, each line written whole by one system call as soon as its game is
  done; an incomplete last line (a crash mid-write) is cut off before the run
  appends, and its game analysed again.
* A record that is not JSON, or that the rules reject, is reported with its
  file (and line) and the event at fault, counted, and the run goes on.
* A task whose worker dies is rescheduled on another (ALLOWED_FAILURES
  times); a task that raises is run again (RETRIES times).
* Ctrl-C stops the run: the lines written stay, the cluster is closed, the
  command exits 130.

At the end, a table per player (by the names in the records) over every line
of the output, this run's and earlier ones'.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from google.protobuf import json_format
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from cirulla.server.config import available_cores, host_port_problem
from cirulla.server.convert import summary_from_proto
from cirulla.solver import analysis, record
from cirulla.solver.analysis import Summary
from cirulla.solver.bounds import require_in_bounds
from cirulla.solver.errors import CirullaError
from cirulla.solver.i18n import N_, Translations, whole
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import game_pb2 as pb

from . import translator_for
from .analyze import game_analysis
from .output import write_data
from .remote import FAILED, NO_FILE, OK, UNREACHABLE, USAGE, CliError

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

# A task that raised runs again this many times (a worker out of memory, a flaky node); the
# analysis is deterministic, so a bug fails every time and is then reported.
RETRIES = 2
# A task whose worker dies under it is rescheduled, until this many workers have died under it
# (then it fails with KilledWorker): distributed.scheduler.allowed-failures, set on the
# LocalCluster's scheduler (a running cluster's scheduler has its own setting).
ALLOWED_FAILURES = 3
WORKER_NICENESS = 10             # a local worker's CPU priority below the command's (os.nice)
# Games submitted per worker thread: enough to keep every worker busy, few enough to keep the
# records read ahead (and the work cancelled on Ctrl-C) small.
AHEAD = 2
CONNECT_SECONDS = 10.0          # to reach a --scheduler


def is_batch(args: argparse.Namespace) -> bool:
    """Whether `cirulla analyze` runs the batch mode: --out or --scheduler, several
    records, a folder or a JSON-lines file (one record file alone is the report)."""
    records = args.records
    return bool(args.out or args.scheduler or len(records) > 1
                or any(r.endswith(".jsonl") or Path(r).is_dir() for r in records))


# --- the records --------------------------------------------------------------------

@dataclass(frozen=True)
class Source:
    """A record as read: where it was (file, or file:line) and its text, or why it has none."""
    where: str
    text: str | None
    problem: str = ""


@dataclass(frozen=True)
class Game:
    """A record the rules accept, ready to analyse."""
    game_id: str
    source: str
    text: str                   # the record's JSON, as read: a task's input
    record: pb.Record           # as replayed: a server call's input


def record_files(paths: Sequence[str]) -> list[Path]:
    """The files the command's RECORDS name: files as given, a folder's *.json sorted."""
    files: list[Path] = []
    for name in paths:
        p = Path(name)
        if p.is_dir():
            files.extend(sorted(f for f in p.glob("*.json") if f.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            raise CliError(f"{name}: no such file or folder", NO_FILE)
    return files


def _is_lines(path: Path) -> bool:
    return path.suffix == ".jsonl"


def count_records(files: Iterable[Path]) -> int:
    """How many records read_records will yield."""
    n = 0
    for f in files:
        if not _is_lines(f):
            n += 1
            continue
        with contextlib.suppress(OSError), f.open("rb") as lines:
            n += sum(1 for raw in lines if raw.strip())
    return n


def read_records(files: Iterable[Path]) -> Iterator[Source]:
    """Every record of the files, one at a time: a file's whole text, or each
    non-blank line of a .jsonl file."""
    for f in files:
        if not _is_lines(f):
            try:
                yield Source(str(f), f.read_bytes().decode("utf-8"))
            except OSError as e:
                yield Source(str(f), None, f"cannot read it: {e.strerror}")
            except UnicodeDecodeError as e:
                yield Source(str(f), None, f"not UTF-8 text (byte {e.start})")
            continue
        try:
            with f.open("rb") as lines:
                for number, raw in enumerate(lines, 1):
                    if not raw.strip():
                        continue
                    try:
                        text = raw.decode("utf-8")
                    except UnicodeDecodeError as e:
                        yield Source(f"{f}:{number}", None, f"not UTF-8 text (byte {e.start})")
                        continue
                    yield Source(f"{f}:{number}", text)
        except OSError as e:
            yield Source(str(f), None, f"cannot read it: {e.strerror}")


def game_id(rec: pb.Record) -> str:
    """A game's id: the hex SHA-256 of its replayed record in canonical JSON (sorted
    keys, no spaces), the same whatever file, line or formatting held it."""
    canonical = json.dumps(json_format.MessageToDict(rec), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def identify(source: Source) -> Game:
    """The game a record holds, replayed through the rules.

    :raises RecordError: (a CirullaError) naming the event the rules reject, or not JSON.
    """
    assert source.text is not None
    rec = record.to_proto(record.loads(source.text))
    return Game(game_id(rec), source.where, source.text, rec)


# --- one game -------------------------------------------------------------------------

def line_text(game: str, source: str, result: apb.GameAnalysis) -> str:
    """An output line (without its newline)."""
    line = apb.GameAnalysisLine(game_id=game, source=source, analysis=result)
    return json_format.MessageToJson(line, indent=None, ensure_ascii=False)


def analyze_task(text: str, game: str, source: str, iterations: int, seed: int) -> str:
    """One game, run by a Dask worker: the record's JSON text in, its output line
    out (plain data both ways: they cross process boundaries). One search thread:
    the worker's thread."""
    decisions, summary = analysis.analyze_all(record.loads(text), iterations=iterations, seed=seed, jobs=1)
    return line_text(game, source, game_analysis(decisions, summary))


def read_line(text: str) -> tuple[str, Summary]:
    """The game id and the summary of an output line.

    :raises ValueError: if it is not a GameAnalysisLine with both.
    """
    try:
        data = json.loads(text)
        game, summary = data["gameId"], data["analysis"]["summary"]
        if not isinstance(game, str) or not game:
            raise ValueError("no gameId")
        msg = json_format.ParseDict(summary, apb.AnalysisSummary())
        require_in_bounds(msg, "analysis.summary")
        return game, summary_from_proto(msg)
    except (KeyError, TypeError, json_format.ParseError) as e:
        raise ValueError(f"not a cirulla.v1.GameAnalysisLine: {e}") from None
    except RecursionError:
        raise ValueError("not a cirulla.v1.GameAnalysisLine: JSON nested too deeply") from None


# --- the table per player ---------------------------------------------------------------

@dataclass
class PlayerTotals:
    """One player's figures over many games."""
    name: str
    games: int = 0
    decisions: int = 0
    unforced: int = 0
    accuracy_points: float = 0.0    # a game's accuracy times its unforced decisions, summed
    inaccuracies: int = 0
    mistakes: int = 0
    blunders: int = 0
    luck: float = 0.0               # the player's side's luck, summed over games with 2 sides
    luck_games: int = 0

    @property
    def accuracy(self) -> float | None:
        """The mean over every unforced decision of every game, as a game's own accuracy is."""
        return self.accuracy_points / self.unforced if self.unforced else None

    def per_100(self, count: int) -> float | None:
        return 100.0 * count / self.unforced if self.unforced else None

    @property
    def luck_per_game(self) -> float | None:
        return self.luck / self.luck_games if self.luck_games else None


class Totals:
    """The table per player, game by game."""

    COLUMNS = (N_("player"), N_("games"), N_("decisions"), N_("accuracy"), N_("inaccuracies"), N_("mistakes"),
               N_("blunders"), N_("luck"))
    SHORT = {"inaccuracies": N_("inacc."), "mistakes": N_("mist."), "blunders": N_("blund.")}  # 80 columns hold it
    NOTE = N_("decisions: every move the player made, forced ones included; accuracy: 0-100, over the unforced "
              "decisions (those with a choice); %(errors)s: per 100 unforced decisions; luck: the points of expected "
              "margin the deals gave the player's side, per game (2 sides)")

    def __init__(self) -> None:
        self.games = 0
        self.iterations: set[int] = set()
        self.players: dict[str, PlayerTotals] = {}

    def add(self, summary: Summary) -> None:
        self.games += 1
        self.iterations.add(summary.iterations)
        luck = {s.side: s.luck for s in summary.sides}
        counted: set[str] = set()
        for p in summary.players:
            row = self.players.setdefault(p.name, PlayerTotals(p.name))
            unforced = p.decisions - p.forced
            row.decisions += p.decisions
            row.unforced += unforced
            row.accuracy_points += p.accuracy * unforced
            row.inaccuracies += p.inaccuracies
            row.mistakes += p.mistakes
            row.blunders += p.blunders
            if p.name not in counted:           # a name on two seats (partners) plays one game
                counted.add(p.name)
                row.games += 1
                if p.side in luck:
                    row.luck += luck[p.side]
                    row.luck_games += 1

    def rows(self) -> list[list[str]]:
        """The table's cells, for the terminal and the page alike."""
        def number(x: float | None, form: str) -> str:
            return "–" if x is None else format(x, form)

        return [[p.name, str(p.games), str(p.decisions), number(p.accuracy, ".1f"),
                 number(p.per_100(p.inaccuracies), ".1f"), number(p.per_100(p.mistakes), ".1f"),
                 number(p.per_100(p.blunders), ".1f"), number(p.luck_per_game, "+.2f")]
                for p in sorted(self.players.values(), key=lambda p: (p.name.casefold(), p.name))]

    def budget(self, tr: Translations) -> str:
        return tr.gettext("%(iterations)s iterations per search") % {
            "iterations": ", ".join(whole(n, tr) for n in sorted(self.iterations))}

    def table(self, title: str, tr: Translations) -> Table:
        _ = tr.gettext
        t = Table(title=title, caption=_(self.NOTE) % {"errors": _("inacc., mist., blund. (inaccuracies, mistakes, "
                                                                   "blunders)")}, caption_justify="left")
        for name in self.COLUMNS:
            if name == "player":
                t.add_column(_(name), overflow="fold", min_width=10)
            else:
                t.add_column(_(self.SHORT.get(name, name)), justify="right", no_wrap=True)
        for cells in self.rows():
            t.add_row(*map(Text, cells))        # a player's name is their text, not markup
        return t

    def html(self, title: str, tr: Translations) -> str:
        """A self-contained page (the CSS of the game report, no scripts), autoescaped."""
        from .report import CSS, environment
        _ = tr.gettext
        return environment(tr).get_template("batch.html").render(
            title=title, css=CSS, columns=[_(c) for c in self.COLUMNS], rows=self.rows(), games=self.games,
            budget=self.budget(tr), note=_(self.NOTE) % {"errors": _("inaccuracies, mistakes, blunders")})


# --- the output -------------------------------------------------------------------------

class Output:
    """Where the lines go: the --out file, appended to (its games known from the
    start), or standard output."""

    def __init__(self, path: str | None, warn: Console):
        self.path = path
        self.ids: set[str] = set()
        self.totals = Totals()
        self.fd: int | None = None
        if path is None:
            return
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            raise CliError(f"--out {path}: {e.strerror}", USAGE) from None
        try:
            self._lock()
            self._read(warn)
        except BaseException:
            self.close()
            raise

    def _lock(self) -> None:
        """One run at a time per file: two would analyse the same games and interleave their lines."""
        try:
            import fcntl
        except ImportError:                     # not POSIX: no lock
            return
        assert self.fd is not None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(f"--out {self.path}: another `cirulla analyze` is writing to it", USAGE) from None

    def _read(self, warn: Console) -> None:
        """The games the file holds; an incomplete last line cut off."""
        assert self.fd is not None
        offset = 0
        with open(self.fd, "rb", closefd=False) as f:
            for number, raw in enumerate(f, 1):
                if not raw.endswith(b"\n"):
                    self._repair(raw, offset, number, warn)
                    return
                offset += len(raw)
                self._take(raw, number, warn)

    def _repair(self, tail: bytes, offset: int, number: int, warn: Console) -> None:
        assert self.fd is not None
        try:
            read_line(tail.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            os.ftruncate(self.fd, offset)       # what a crash cut short: no complete line is lost
            warn.print(f"{escape(str(self.path))}:{number}: an incomplete last line ({len(tail)} bytes, a run "
                       "stopped while writing it) was cut off; its game is analysed again", soft_wrap=True)
            return
        self._append(b"\n")                     # complete but for its newline
        self._take(tail, number, warn)

    def _take(self, raw: bytes, number: int, warn: Console) -> None:
        try:
            game, summary = read_line(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            warn.print(f"{escape(str(self.path))}:{number}: ignored: {escape(str(e))}", soft_wrap=True)
            return
        if game not in self.ids:                # a line twice (files concatenated): one game
            self.ids.add(game)
            self.totals.add(summary)

    def _append(self, data: bytes) -> None:
        assert self.fd is not None
        while data:                             # one write for a regular file; a short one continues
            data = data[os.write(self.fd, data):]

    def write(self, line: str) -> None:
        """A game's line, on disk (or on standard output) when this returns."""
        game, summary = read_line(line)
        if self.fd is None:
            write_data(line + "\n")
        else:
            self._append((line + "\n").encode("utf-8"))
        self.ids.add(game)
        self.totals.add(summary)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)                   # and its lock
            self.fd = None


# --- where the games run ----------------------------------------------------------------

class Backend(Protocol):
    """Games sent out, their lines or failures back as each finishes."""

    def ahead(self) -> int: ...                 # games to keep submitted

    def submit(self, game: Game) -> Any: ...    # a future

    def next_done(self) -> Any: ...             # the next future to finish (blocks)

    def close(self, pending: Iterable[Any]) -> None: ...


Task = Callable[[str, str, str, int, int], str]


def local_cluster(workers: int) -> LocalCluster:
    """A LocalCluster of `workers` processes with one thread each (a game uses one
    core), on the loopback, no dashboard, its scheduler rescheduling the tasks of
    a worker that dies."""
    import dask
    from distributed import LocalCluster
    with dask.config.set({"distributed.scheduler.allowed-failures": ALLOWED_FAILURES}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                            dashboard_address=None, preload=[__name__],
                            # not the workers' warnings as the command cancels their tasks on Ctrl-C, nor
                            # their errors as it stops them (a heartbeat to a scheduler already gone logged a
                            # traceback under a CPU hog); a task's failure reaches the command through its future
                            silence_logs=logging.CRITICAL)


def dask_setup(worker: object) -> None:
    """Run by each worker of local_cluster as it starts (Dask's preload hook): a
    terminal's Ctrl-C reaches the whole process group, and the command, not each
    worker, stops the cluster (else every worker prints its KeyboardInterrupt).
    The workers yield the cores to the command itself, which writes each game's
    line as it comes and answers a Ctrl-C at once: on a busy machine it had
    waited behind them until every game was done."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(WORKER_NICENESS)


class DaskBackend:
    """Each game one task on a Dask cluster: --scheduler's, or a LocalCluster."""

    def __init__(self, args: argparse.Namespace, *, iterations: int, task: Task):
        from distributed import Client, as_completed
        self.cluster: LocalCluster | None = None
        self.client: Client
        if args.scheduler:
            protocol, _, address = args.scheduler.rpartition("://")
            problem = host_port_problem(address) if protocol in ("", "tcp", "tls") else None
            if problem:                         # (before a Client: one half made hangs at the exit)
                raise CliError(f"--scheduler {args.scheduler}: {problem} (tcp://HOST:PORT, the scheduler's "
                               "address)", USAGE)
            try:
                self.client = Client(args.scheduler, timeout=CONNECT_SECONDS, set_as_default=False)
            except (OSError, TimeoutError, ValueError) as e:
                raise CliError(f"--scheduler {args.scheduler}: cannot reach the Dask scheduler: {e}",
                               UNREACHABLE) from None
        else:
            self.cluster = local_cluster(args.jobs or available_cores())
            self.client = Client(self.cluster, set_as_default=False)
        self.finished = as_completed(loop=self.client.loop)
        self.task, self.iterations, self.seed = task, iterations, args.seed

    def ahead(self) -> int:
        threads: dict[str, int] = self.client.nthreads()               # by worker: they may come and go
        return AHEAD * max(1, sum(threads.values()))

    def submit(self, game: Game) -> Any:
        future = self.client.submit(self.task, game.text, game.game_id, game.source, self.iterations, self.seed,
                                    pure=False, retries=RETRIES)
        self.finished.add(future)
        return future

    def next_done(self) -> Any:
        return next(self.finished)

    def close(self, pending: Iterable[Any]) -> None:
        try:
            futures = list(pending)
            if futures and self.cluster is None:    # a shared cluster's work; ours stops with it
                self.client.cancel(futures)
        finally:
            self.client.close()
            if self.cluster is not None:
                self.cluster.close()


class ServerBackend:
    """Each game one AnalyzeGame call to a running cirulla-server, --jobs at a time."""

    def __init__(self, args: argparse.Namespace, *, iterations: int):
        from .remote import Remote
        self.remote = Remote.of(args)
        self.jobs = args.jobs or available_cores()
        self.iterations, self.seed = iterations, args.seed
        self.pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="cirulla-batch")
        self.finished: queue.SimpleQueue[Future[str]] = queue.SimpleQueue()
        self.stopping = threading.Event()
        self.calls: set[Any] = set()
        self.lock = threading.Lock()

    def ahead(self) -> int:
        return AHEAD * self.jobs

    def submit(self, game: Game) -> Future[str]:
        future = self.pool.submit(self._analyse, game)
        future.add_done_callback(self.finished.put)
        return future

    def next_done(self) -> Future[str]:
        return self.finished.get()

    def _analyse(self, game: Game) -> str:
        import grpc

        from cirulla.server.errors import retry_delay

        from .remote import rpc_error
        request = apb.AnalyzeGameRequest(record=game.record, iterations=self.iterations, threads=1, seed=self.seed)
        for attempt in range(RETRIES + 1):
            if self.stopping.is_set():
                raise CancelledError()
            call = self.remote.analysis.AnalyzeGame(request, metadata=self.remote.metadata)
            with self.lock:
                self.calls.add(call)
            try:
                decisions, summary = [], None
                for reply in call:
                    if reply.WhichOneof("result") == "decision":
                        decisions.append(reply.decision)
                    else:
                        summary = reply.summary
                if summary is None:
                    raise CliError("the server's analysis ended without its summary", FAILED)
                return line_text(game.game_id, game.source, apb.GameAnalysis(decisions=decisions, summary=summary))
            except grpc.RpcError as e:
                # worth another try: a server restarting, or its search slots full (it then says when)
                delay = retry_delay(e)
                again = e.code() == grpc.StatusCode.UNAVAILABLE or (
                    e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and delay is not None)
                if not again or attempt == RETRIES or self.stopping.is_set():
                    raise rpc_error(e, self.remote.target) from None
                self.stopping.wait(delay if delay is not None else 1.0 + attempt)
            finally:
                with self.lock:
                    self.calls.discard(call)
        raise AssertionError("unreachable")

    def close(self, pending: Iterable[Any]) -> None:
        self.stopping.set()
        with self.lock:
            for call in self.calls:
                call.cancel()
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.remote.close()


# --- the run -----------------------------------------------------------------------------

class Batch:
    """Records in, lines out: the games read one at a time, at most `ahead()` of them
    out at once, each line written as its game finishes."""

    def __init__(self, output: Output, start: Callable[[], Backend], bar: Progress, say: Console,
                 tr: Translations):
        self.output, self.start, self.bar, self.say = output, start, bar, say
        self.backend: Backend | None = None
        self.pending: dict[Any, Game] = {}
        self.analysed = self.skipped = self.bad = self.failed = 0
        # the progress bar's words, in the reader's language
        self.starting, self.analysing = tr.pgettext("progress", "starting"), tr.pgettext("progress", "analysing")
        self.progress = bar.add_task(self.analysing, total=None)

    def run(self, sources: Iterable[Source], total: int) -> None:
        self.bar.update(self.progress, total=total)
        try:
            for source in sources:
                self._next(source)
            while self.pending:
                self._collect()
        finally:
            if self.backend is not None:
                self.backend.close(self.pending)

    def _next(self, source: Source) -> None:
        if source.text is None:
            return self._bad(source.where, source.problem)
        try:
            game = identify(source)
        except CirullaError as e:
            return self._bad(source.where, str(e))
        if game.game_id in self.output.ids or any(g.game_id == game.game_id for g in self.pending.values()):
            self.skipped += 1                   # done in an earlier run, or the same game twice
            self.bar.advance(self.progress)
            return None
        if self.backend is None:                # no cluster for a run with nothing to do
            self.bar.update(self.progress, description=self.starting)
            self.backend = self.start()
            self.bar.update(self.progress, description=self.analysing)
        while len(self.pending) >= self.backend.ahead():
            self._collect()
        self.pending[self.backend.submit(game)] = game
        return None

    def _bad(self, where: str, why: str) -> None:
        self.bad += 1
        self.say.print(f"[red]bad record[/] {escape(where)}: {escape(why)}", soft_wrap=True)
        self.bar.advance(self.progress)

    def _collect(self) -> None:
        assert self.backend is not None
        future = self.backend.next_done()
        game = self.pending.pop(future)
        try:
            line = future.result()
        except Exception as e:                  # the task failed (retries spent), its worker died too often, ...
            self.failed += 1
            why = str(e) or type(e).__name__
            self.say.print(f"[red]failed[/] {escape(game.source)}: {type(e).__name__}: {escape(why)}", soft_wrap=True)
        else:
            self.output.write(line)
            self.analysed += 1
        self.bar.advance(self.progress)


def _check(args: argparse.Namespace) -> None:
    """The flags the batch mode refuses, each named."""
    if args.all:
        raise CliError("--all lists one game's decisions: the batch mode writes them to --out", USAGE)
    if args.json:
        raise CliError("--json: the batch mode writes its JSON lines to --out (or to standard output "
                       "without --out)", USAGE)
    if args.scheduler and args.server:
        raise CliError("--scheduler and --server: give one (a Dask cluster or a cirulla-server)", USAGE)
    if args.scheduler and args.jobs is not None:
        raise CliError("--jobs: the cluster at --scheduler has its own workers", USAGE)


def run_batch(args: argparse.Namespace, *, task: Task = analyze_task) -> int:
    """`cirulla analyze` with --out, several records, a folder or a .jsonl: exit 0 when every
    game is in the output, 1 when some records were bad or some games failed."""
    _check(args)
    files = record_files(args.records)
    iterations = args.iterations or analysis.DEFAULT_ITERATIONS
    err = Console(stderr=True, highlight=False)
    shown = err if args.out is None else Console(highlight=False)   # the table: not among stdout's lines
    tr = translator_for(args)
    _ = tr.gettext

    def start() -> Backend:
        if args.server:
            return ServerBackend(args, iterations=iterations)
        return DaskBackend(args, iterations=iterations, task=task)

    output = Output(args.out, err)
    try:
        before = len(output.ids)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn(escape(tr.pgettext("progress", "games"))), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            batch = Batch(output, start, bar, err, tr)
            try:
                batch.run(read_records(files), count_records(files))
            except KeyboardInterrupt:
                done = {"count": batch.analysed, "file": escape(args.out or "")}
                err.print((tr.ngettext("stopped: the %(count)s game analysed by this run is in %(file)s; "
                                       "the same command goes on",
                                       "stopped: the %(count)s games analysed by this run are in %(file)s; "
                                       "the same command goes on", batch.analysed) if args.out
                           else tr.ngettext("stopped: the %(count)s game analysed by this run is above",
                                            "stopped: the %(count)s games analysed by this run are above",
                                            batch.analysed)) % done, soft_wrap=True)
                raise
    finally:
        output.close()
    counts = {"analysed": batch.analysed, "skipped": batch.skipped, "bad": batch.bad, "failed": batch.failed,
              "file": escape(args.out or "")}
    err.print(", ".join((
        tr.ngettext("%(analysed)s game analysed", "%(analysed)s games analysed", batch.analysed) % counts,
        (_("%(skipped)s already in %(file)s (or repeated)") if args.out
         else _("%(skipped)s already in the output (or repeated)")) % counts,
        tr.ngettext("%(bad)s bad record", "%(bad)s bad records", batch.bad) % counts,
        tr.ngettext("%(failed)s failed", "%(failed)s failed", batch.failed) % counts)), soft_wrap=True)
    totals = output.totals
    players_over = tr.ngettext("Players over %(count)s game", "Players over %(count)s games", totals.games) % {
        "count": totals.games}
    if totals.games:
        title = players_over + (" " + _("(%(file)s; %(earlier)s from earlier runs)")
                                % {"file": escape(args.out), "earlier": before} if args.out else "")
        shown.print(totals.table(title, tr))
    if args.html:
        try:
            Path(args.html).write_text(totals.html(players_over, tr), encoding="utf-8")
        except OSError as e:
            raise CliError(f"--html {args.html}: {e.strerror}", FAILED) from None
        shown.print(_("Report written to %(file)s") % {"file": escape(args.html)}, soft_wrap=True)
    if batch.bad or batch.failed:
        where = escape(args.out) if args.out else "the output"
        err.print(f"[red]error:[/] {batch.bad} bad records and {batch.failed} failed games (above); "
                  f"the others are in {where}", soft_wrap=True)
        return FAILED
    return OK
