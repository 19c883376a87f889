"""cirulla: play Cirulla against the engine, ask it for hints, analyse your games."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape

from cirulla.solver.errors import CirullaError
from cirulla.solver.match import Phase
from cirulla.solver.players import LEVEL_NAMES, LEVELS, make_player
from cirulla.solver.rules import PRESETS, Rules

from . import (
    add_lang_argument,
    level_name,
    non_negative_int,
    positive_int,
    positive_ms,
    records,
    seed_number,
    translator_for,
)
from .engine import add_parser as add_engine
from .habits import add_parser as add_habits
from .output import console_for, emit, plain_where_needed
from .puzzles import add_parser as add_puzzles
from .remote import FAILED, NO_FILE, OK, USAGE, CliError, Remote, arena_player

if TYPE_CHECKING:
    from cirulla.solver.view import SeatView

EXAMPLES = """examples:
  cirulla play                              a match to 51 against the engine (level casual)
  cirulla play --players 4 --level advanced you and an engine partner against two engines
  cirulla hint game.json                    the ranked moves at the record's last decision
  cirulla hint game.json --event 12         ... at the position before event 12
  cirulla hint --view view.json             ... for a SeatView in protobuf's JSON mapping
  cirulla analyze game.json --html game.html   every decision judged, as a page
  cirulla arena ismcts:100ms greedy --pairs 50 engines against each other in duplicate
  cirulla serve --listen 127.0.0.1:50051    the gRPC service (see cirulla serve --help)
  cirulla analyze game.json --server 127.0.0.1:50051   the same, by a running server
  cirulla habits results.jsonl --html habits.html   each player's habits over many analysed games
  cirulla puzzles results.jsonl --out puzzles.jsonl --html puzzles.html   puzzles cut from analysed games

exit codes: 0 done, 1 failed, 2 bad usage, 3 bad input (a broken record or view),
4 server unreachable, 5 file not found, 130 interrupted, 70 stopped by abandoning work
that ignored cancellation (serve, engine: the log names it)
"""

LEVEL_HELP = "; ".join(f"{lv.name}: {lv.about}" for lv in LEVELS)


# --- shared -----------------------------------------------------------------------

def _add_remote(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("remote engine")
    g.add_argument("--server", metavar="HOST:PORT", help="ask a running `cirulla serve` instead of the local engine")
    g.add_argument("--token", help="bearer token for the server (or CIRULLA_TOKEN)")
    g.add_argument("--tls-ca", metavar="FILE", help="CA certificate (PEM) for a TLS server")


def _add_budget(p: argparse.ArgumentParser, iterations: str) -> None:
    p.add_argument("--iterations", type=positive_int, help=iterations)
    p.add_argument("--seed", type=seed_number, default=0, help="the seed of the sampled worlds (default 0)")


def _add_rules(p: argparse.ArgumentParser, *, players: tuple[int, ...]) -> None:
    g = p.add_argument_group("rules")
    g.add_argument("--preset", default="classic", choices=list(PRESETS))
    g.add_argument("--players", type=int, choices=players, help="players at the table (default: the preset's)")
    g.add_argument("--target", type=int, help="points that end the match (default: the preset's)")
    g.add_argument("--hands", type=int, help="play this many hands instead of to a target")


def _rules(args: argparse.Namespace) -> Rules:
    """The rules the command's --preset, --players, --target and --hands name."""
    options = {name: getattr(args, name) for name in ("players", "target", "hands") if getattr(args, name) is not None}
    if args.players == 5:
        options["five_players"] = True          # five at the table play their variant (R-V5)
    try:
        return Rules.preset(args.preset, **options)
    except CirullaError as e:
        flags = " ".join(f"--{name} {value}" for name, value in options.items() if name != "five_players")
        raise CliError(f"{flags}: {e}", USAGE) from None


# --- play -------------------------------------------------------------------------

def cmd_play(args: argparse.Namespace) -> int:
    from cirulla.solver import record
    from cirulla.solver.match import Match

    from .play import Game, local_hint, seat_names
    rules = _rules(args)
    n = rules.players
    tr = translator_for(args)
    match = Match(rules, seed=args.seed, names=seat_names(n, args.name, tr))
    opponents = {seat: make_player(args.level, seed=None if args.seed is None else args.seed + seat)
                 for seat in range(1, n)}
    save_to = Path(args.save or time.strftime("cirulla-%Y%m%d-%H%M%S.json"))
    game = Game(match, 0, opponents, console=console_for(args), save_to=save_to,
                hint=local_hint(time_ms=args.hint_ms, tr=tr), level=args.level, tr=tr)
    code = game.run()
    if args.json:
        emit(record.to_proto(match))
    return code


# --- hint -------------------------------------------------------------------------

def _position(args: argparse.Namespace) -> tuple[SeatView, int | None]:
    """The view to rank (--view FILE, or a record at --event / --seat), and the
    record's event it is before (None for a view file)."""
    from google.protobuf import json_format

    from cirulla.server.convert import view_from_proto
    from cirulla.server.errors import BadRequest
    from cirulla.solver.bounds import out_of_bounds
    from cirulla.v1 import game_pb2
    if args.view:
        if args.record:
            raise CliError("give a record or --view, not both", USAGE)
        p = records.file_at(args.view)
        try:
            data = json.loads(p.read_bytes())            # (JSON is UTF-8: json reads the bytes as such)
            view = data.get("view", data) if isinstance(data, dict) else data
            if not isinstance(view, dict):
                raise ValueError("a SeatView is a JSON object (or an object holding one as \"view\")")
            msg = json_format.ParseDict(view, game_pb2.SeatView())
            outside = out_of_bounds(msg, "view")         # named as view_from_proto names its fields
            if outside:
                raise BadRequest(outside)
            return view_from_proto(msg), None
        except OSError as e:
            raise CliError(f"{args.view}: cannot read it: {e.strerror}", NO_FILE) from None
        except RecursionError:
            raise CliError(f"{args.view}: not a cirulla.v1.SeatView in JSON: nested too deeply") from None
        except (ValueError, json_format.ParseError) as e:       # JSONDecodeError and UnicodeDecodeError among them
            raise CliError(f"{args.view}: not a cirulla.v1.SeatView in JSON: {e}") from None
        except BadRequest as e:
            raise CliError(f"{args.view}: " + "; ".join(f"{f}: {why}" for f, why in e.violations),
                           violations=e.violations) from None
    if not args.record:
        raise CliError("give a record (cirulla hint game.json) or --view FILE", USAGE)
    match = records.load(args.record)
    events = records.decision_events(match)         # (event index, seat) of every decision
    if args.event is not None:
        if not 0 <= args.event <= len(match.events):
            raise CliError(f"--event {args.event}: the record has events 0..{len(match.events)}")
        at = records.position_at(match, args.event)
        if at.phase is not Phase.PLAY:
            raise CliError(f"--event {args.event}: nobody is to move there (the match is in phase '{at.phase}')")
        if args.seat is not None and args.seat != at.to_move:
            raise CliError(f"--event {args.event}: seat {at.to_move} is to move there, not seat {args.seat}")
        return at.view(at.to_move), args.event
    if args.seat is not None and not 0 <= args.seat < match.rules.players:
        raise CliError(f"--seat {args.seat}: seats are 0..{match.rules.players - 1}")
    if not match.is_over and match.phase is Phase.PLAY and args.seat in (None, match.to_move):
        return match.view(match.to_move), len(match.events)
    mine = [e for e, seat in events if args.seat is None or seat == args.seat]
    if not mine:
        raise CliError("the record has no decision" + (f" of seat {args.seat}" if args.seat is not None else ""))
    at = records.position_at(match, mine[-1])
    return at.view(at.to_move), mine[-1]


def cmd_hint(args: argparse.Namespace) -> int:
    from cirulla.server import convert
    from cirulla.solver import i18n
    from cirulla.v1 import engine_service_pb2 as epb
    view, event = _position(args)
    tr = translator_for(args)
    if args.server:
        import grpc

        from .remote import rpc_error
        with Remote.of(args) as remote:
            request = epb.GetHintRequest(view=convert.view_to_proto(view), seed=args.seed,
                                         budget=epb.Budget(time_ms=int(args.time_ms or 0),
                                                           iterations=args.iterations or 0,
                                                           threads=args.threads, exhaust=args.exhaust),
                                         language=args.lang or i18n.language_from_environment())
            try:
                answer = remote.engine.GetHint(request, metadata=remote.metadata, timeout=60)
            except grpc.RpcError as e:
                raise rpc_error(e, args.server) from None
    else:
        from cirulla.solver.search import SearchBudget, search
        result = search(view, SearchBudget.of(iterations=args.iterations, time_ms=args.time_ms, exhaust=args.exhaust,
                                              seed=args.seed, threads=args.threads))
        answer = epb.GetHintResponse(hint=convert.hint_to_proto(result, args.seed, table=view.table, tr=tr),
                                     view=convert.view_to_proto(view))
    if args.json:
        emit(answer)
        return OK
    from . import render
    _ = tr.gettext
    console = console_for(args)
    matta = view.rules.matta_card
    facts = {"seat": view.seat, "event": event, "hand": view.hand_number + 1, "round": view.round + 1,
             "score": " – ".join(map(str, view.scores)), "table": render.cards(view.table, matta),
             "cards": render.cards(view.hand, matta)}
    console.print((_("[bold]Seat %(seat)s to move before event %(event)s[/] — hand %(hand)s, round %(round)s, "
                     "score %(score)s") if event is not None else
                   _("[bold]Seat %(seat)s to move[/] — hand %(hand)s, round %(round)s, score %(score)s")) % facts)
    console.print(_("Table: %(table)s    Hand: %(cards)s") % facts)
    console.print(render.hint(answer.hint, tr=tr, matta=matta))
    return OK


# --- analyze ----------------------------------------------------------------------

def cmd_analyze(args: argparse.Namespace) -> int:
    from .batch import is_batch, run_batch
    if is_batch(args):
        return run_batch(args)
    from cirulla.solver.analysis import DEFAULT_JOBS

    from .analyze import run_analysis
    if args.jobs is None:
        args.jobs = DEFAULT_JOBS
    return run_analysis(records.load(args.records[0]), args, console_for(args))


# --- arena ------------------------------------------------------------------------

def cmd_arena(args: argparse.Namespace) -> int:
    from cirulla.server import convert
    from cirulla.solver.arena import ArenaResult, Comparison, arena, compare, machine_load
    from cirulla.v1 import arena_pb2
    rules = _rules(args)
    console = console_for(args)
    if args.against and args.save:
        raise CliError("--save with --against: save a run on its own (cirulla arena A C --save DIR)", USAGE)

    def progress(k: int, res: ArenaResult | Comparison) -> None:
        if args.progress and k % args.progress == 0 and k < args.pairs:
            console.print(f"[{k}/{args.pairs}] " + res.margin_line())

    save = Path(args.save) if args.save else None
    if save is not None:
        if save.exists() and not save.is_dir():
            raise CliError(f"--save {args.save}: a file, not a folder (the records go into a folder)", USAGE)
        try:
            save.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CliError(f"--save {args.save}: {e.strerror}", FAILED) from None
    load_before, start = os.getloadavg()[0], time.monotonic()
    res: ArenaResult | Comparison
    try:
        if args.against:
            res = compare(args.a, args.b, args.against, rules=rules, pairs=args.pairs, seed=args.seed,
                          jobs=args.jobs, on_pair=progress, players=arena_player)
        else:
            res = arena(args.a, args.b, rules=rules, pairs=args.pairs, seed=args.seed, jobs=args.jobs, save=save,
                        on_pair=progress, players=arena_player)
    except OSError as e:
        raise CliError(f"--save {args.save}: cannot write {e.filename}: {e.strerror}", FAILED) from None
    # wall-time budgets depend on what else the machine ran: say how busy it was
    load = f"machine_load: {machine_load(load_before, time.monotonic() - start, f'{args.jobs} jobs')}"
    if args.json:
        print(load, file=sys.stderr)
        if isinstance(res, Comparison):
            emit(convert.to_message(res, arena_pb2.ArenaComparison,
                                    a=convert.to_message(res.a, arena_pb2.ArenaResult, rules=rules),
                                    b=convert.to_message(res.b, arena_pb2.ArenaResult, rules=rules)))
        else:
            emit(convert.to_message(res, arena_pb2.ArenaResult, rules=rules))
        return OK
    console.print(f"rules: {args.preset}, {rules.players} players, "
                  + (f"{rules.hands} hand{'s' if rules.hands != 1 else ''} a match" if rules.hands
                     else f"target {rules.target}"))
    for line in res.lines():
        console.print(line)
    console.print(load)
    if save is not None:
        console.print(f"records: {2 * args.pairs} games in {escape(str(save))}", soft_wrap=True)
    return OK


# --- serve ------------------------------------------------------------------------

SERVE_HELP = """usage: cirulla serve [--json] [server flags]

Run the cirulla.v1 gRPC service (hints, AI moves, rules, analysis) until
SIGTERM or Ctrl-C (then: calls in flight finish within the grace, exit 0;
70 if calls that ignored cancellation had to be abandoned). The flags are the
server's own (cirulla-server's, listed below); --json writes the log lines
(on stderr) as JSON.

examples:
  cirulla serve
  CIRULLA_TOKEN=secret cirulla serve --listen 0.0.0.0:50051 --tls-cert c.pem --tls-key k.pem
  cirulla serve --json                    log lines as JSON
"""


def cmd_serve(argv: list[str]) -> int:
    """`cirulla serve [--json] [server flags]`: the flags are cirulla-server's."""
    from cirulla.server.app import serve
    from cirulla.server.config import parse_config
    as_json = "--json" in argv
    argv = [a for a in argv if a != "--json"]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if "-h" in argv or "--help" in argv:
        print(SERVE_HELP)
    try:
        config = parse_config(argv)
    except SystemExit as e:                     # its --help, or a bad flag (already said)
        return int(e.code or 0)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLog() if as_json else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=config.log_level.upper(), handlers=[handler])
    return serve(config)


class _JsonLog(logging.Formatter):
    """One JSON object per log line (`cirulla serve --json`)."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({"time": record.created, "level": record.levelname, "logger": record.name,
                           "message": record.getMessage()})


# --- the parser -------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cirulla", description=__doc__, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    raw = argparse.RawDescriptionHelpFormatter

    def command(name: str, help: str, description: str, epilog: str) -> argparse.ArgumentParser:
        c = sub.add_parser(name, help=help, description=description, epilog=epilog, formatter_class=raw)
        c.add_argument("--json", action="store_true", help="print JSON for scripts (readable output goes to stderr)")
        return c

    play = command("play", "play a match against engine players",
                   "Play a match in the terminal against engine players. Type a move's number or its\n"
                   "text (7C x 2C 5S, 7C, declare 2S 5C 7H=A), `hint` for the engine's ranking,\n"
                   "`undo`, `help`, `quit` (in Italian: consiglio, annulla, aiuto, esci, and a move as\n"
                   "the menu writes it: 7C prende 2C 5S, dichiara 2S 5C 7H=A). The record is saved when\n"
                   "the match ends and on quit.",
                   "examples:\n  cirulla play --level beginner\n  cirulla play --players 3 --target 31\n"
                   "  cirulla play --preset online --players 4 --level full --save game.json\n\n"
                   "levels, weakest first:\n  " + "\n  ".join(f"{lv.name:13} {lv.about}" for lv in LEVELS))
    _add_rules(play, players=(2, 3, 4, 5))
    play.add_argument("--level", default="casual", type=level_name, metavar="LEVEL",
                      help=f"the engines' strength (default casual): {', '.join(LEVEL_NAMES)} (or their names "
                           "in Italian: principiante, amatore, ...)")
    play.add_argument("--seed", type=seed_number, help="seed for the deals and the engines")
    play.add_argument("--name", help="your name in the record (default: You, in the --lang language)")
    play.add_argument("--save", metavar="FILE", help="where to save the record (default cirulla-DATE-TIME.json)")
    play.add_argument("--hint-ms", type=positive_ms, help="search time of a hint at most (default: the default budget, "
                                                  "which stops once its answer is settled)")
    add_lang_argument(play)
    play.set_defaults(run=cmd_play)

    hint = command("hint", "rank the moves of a position",
                   "Every legal move of the seat to move, ranked by the search from that seat's view:\n"
                   "expected points of the hand (own side minus the others) with standard errors,\n"
                   "the difference to the best move, the chance of winning the match, the risk of\n"
                   "the next player sweeping the table; and why, in words, for the recommended move\n"
                   "and each move within reach of it (--lang: English or Italian).",
                   "examples:\n  cirulla hint game.json                  the record's last decision\n"
                   "  cirulla hint game.json --seat 0         seat 0's last decision\n"
                   "  cirulla hint game.json --event 12       the position before event 12\n"
                   "  cirulla hint --view view.json --iterations 50000 --seed 1\n"
                   "  cirulla hint game.json --lang it            the reasons in Italian\n"
                   "  cirulla hint game.json --server 127.0.0.1:50051 --json")
    hint.add_argument("record", nargs="?", help="a game record (JSON)")
    hint.add_argument("--view", metavar="FILE", help="a cirulla.v1.SeatView in protobuf's JSON mapping instead")
    hint.add_argument("--seat", type=int, help="the seat whose decision to rank (default: the seat to move)")
    hint.add_argument("--event", type=int, help="the position before this event of the record (0-based)")
    hint.add_argument("--time-ms", type=positive_ms, help="search time at most (default: the default budget, which "
                                                    "stops once its answer is settled)")
    _add_budget(hint, "search iterations at most (with --seed: reproducible)")
    hint.add_argument("--exhaust", action="store_true", help="search to the caps: no early stop")
    hint.add_argument("--threads", type=positive_int, default=1)
    add_lang_argument(hint)
    _add_remote(hint)
    hint.set_defaults(run=cmd_hint)

    an = command("analyze", "judge every decision of a game record",
                 "Every decision of every player judged from what that player could see then:\n"
                 "the best move and the points (and winning chance) lost, graded inaccuracy,\n"
                 "mistake or blunder; the best move with every card visible; the luck of each\n"
                 "deal; per-player accuracy. Thresholds: see cirulla.solver.analysis.",
                 "examples:\n  cirulla analyze game.json\n  cirulla analyze game.json --html game.html\n"
                 "  cirulla analyze game.json --all --iterations 100000\n"
                 "  cirulla analyze game.json --server 127.0.0.1:50051 --json > analysis.json\n\n"
                 "many games (one JSON line per game; a rerun skips the games --out holds):\n"
                 "  cirulla analyze games/ more.jsonl --out results.jsonl --html players.html\n"
                 "  cirulla analyze games/ --out results.jsonl --scheduler tcp://10.0.0.5:8786\n"
                 "  cirulla analyze games/ --out results.jsonl --server 127.0.0.1:50051 --jobs 4\n\n"
                 "batch exit codes: 0 every game analysed, 1 some records bad or games failed,\n"
                 "2 bad usage, 130 interrupted (the lines written stay)")
    an.add_argument("records", nargs="+", metavar="RECORD",
                    help="a game record (JSON); several, folders (their *.json) or JSON-lines files (.jsonl, "
                         "a record per line) for the batch mode")
    an.add_argument("--html", metavar="FILE", help="also write the report (batch: the table per player) "
                                                   "as a self-contained web page")
    an.add_argument("--all", action="store_true", help="list every decision, not only the errors")
    _add_budget(an, "iterations per search at most (default 30000; most stop once settled)")
    an.add_argument("--jobs", type=positive_int, help="decisions analysed at once (default 2); batch: worker processes "
                                             "of the local cluster, or calls to --server at once (default: the cores)")
    b = an.add_argument_group("batch mode")
    b.add_argument("--out", metavar="FILE", help="append a cirulla.v1.GameAnalysisLine per game to FILE "
                                                 "(JSON lines), skipping the games it holds")
    b.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask cluster's scheduler (tcp://HOST:PORT) "
                                                          "instead of a local cluster")
    add_lang_argument(an)
    _add_remote(an)
    an.set_defaults(run=cmd_analyze)

    ar = command("arena", "play engines against each other in duplicate",
                 "Engines against each other in duplicate matches: each deal played twice with\n"
                 "the seats swapped. Engines: random, greedy, flatmc, ismcts, cheat (sees every\n"
                 "card), peek (sees every hand, not the stock); a budget, searched to its end,\n"
                 "follows a colon (ismcts:100ms, flatmc:20000it); `default` is the search at the\n"
                 "default budget, as hints get it (it stops once settled). Or a strength level, played\n"
                 "as ChooseMove plays it (its own budget, one thread, seeded): level:casual,\n"
                 "or simply casual (" + ", ".join(LEVEL_NAMES) + "). Or a running server,\n"
                 "another build or deployment: remote:HOST:PORT plays its hints at its default\n"
                 "budget, remote:HOST:PORT:casual its ChooseMove at that level,\n"
                 "remote:HOST:PORT:10000it its hints at that budget, spent whole.",
                 "examples:\n  cirulla arena ismcts:100ms greedy --pairs 100 --jobs 2\n"
                 "  cirulla arena default remote:127.0.0.1:50051 --hands 1 --pairs 500 --jobs 2\n"
                 "  cirulla arena default ismcts:100000it --hands 1 --pairs 2000 --seed 1 --jobs 2\n"
                 "  cirulla arena ismcts:20ms flatmc:20ms --hands 1 --pairs 500 --json\n"
                 "  cirulla arena casual beginner --hands 1 --pairs 200 --jobs 2\n"
                 "  cirulla arena ismcts:10000it:own=2 ismcts:10000it --against greedy --hands 1 --pairs 500\n"
                 "  cirulla arena casual greedy --pairs 20 --save games/ && cirulla analyze games/ --out a.jsonl\n"
                 "  python bench/ladder.py --jobs 2      every level against the one below and greedy")
    ar.add_argument("a", help="engine A, e.g. ismcts:100ms or level:casual")
    ar.add_argument("b", help="engine B, e.g. greedy")
    ar.add_argument("--pairs", type=positive_int, default=100, help="duplicate pairs of matches (default 100)")
    _add_rules(ar, players=(2, 4))
    ar.add_argument("--seed", type=seed_number, default=0)
    ar.add_argument("--jobs", type=positive_int, default=1, help="processes (default 1)")
    ar.add_argument("--progress", type=non_negative_int, default=0, metavar="N",
                    help="print the figures every N pairs (default 0: never)")
    ar.add_argument("--against", metavar="C",
                    help="play A and B each against engine C on the same deals, and print the difference of "
                         "their margins paired deal by deal")
    ar.add_argument("--save", metavar="DIR",
                    help="write every game played into DIR as a record (as `cirulla play --save` does), the "
                         "engines' names as the players' (seed<S>-AB.json: A on side 0; seed<S>-BA.json: B)")
    ar.set_defaults(run=cmd_arena)

    sub.add_parser("serve", help="run the gRPC service", add_help=False)   # parsed by cmd_serve
    add_engine(sub)
    add_habits(sub)
    add_puzzles(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    plain_where_needed()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:
        return cmd_serve(argv[1:])              # the server parses its own flags
    args = build_parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run      # the command's, set by its subparser
    try:
        return run(args)
    except (CliError, CirullaError) as e:
        error = e if isinstance(e, CliError) else CliError.of(e)
        Console(stderr=True, highlight=False).print(f"[red]error:[/] {escape(str(error))}", soft_wrap=True)
        if args.json:
            emit(error.failure())
        return error.code
    except KeyboardInterrupt:
        Console(stderr=True, highlight=False).print("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
