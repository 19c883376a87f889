"""`cirulla puzzles RESULTS.jsonl... --out puzzles.jsonl [--html FILE]`: puzzles
cut from analysed games.

The analyses are what `cirulla analyze` writes (the batch mode's
cirulla.v1.GameAnalysisLine per line, or folders of them, as `cirulla
habits` reads them). Each line names the record it analysed (its `source`:
a file, or a line of a .jsonl file), looked for from the current folder, then
from the analysis file's folder; a record whose game id is not the line's is
reported and skipped.

The positions looked at are the promising decisions of every game (an
unforced decision that the player got wrong, whose best move sweeps the
table, takes the settebello or declares, or that the analysis solved
exactly); each is searched again, twice, at the default budget, seeded by
the position, and becomes a puzzle if one move is clearly best there
(cirulla.solver.puzzles has the rule, the themes and the difficulty). A
position met twice (the same deal in a duplicate pair, say) gives one
puzzle. The puzzles are written easiest first (in the order found among
equals), a cirulla.v1.Puzzle per line in protobuf's JSON mapping (to --out,
or to standard output); with --html, also as a self-contained page where a
player answers by clicking a card of the hand and the table cards it takes.
The reasons and the page are in the --lang language.
"""
from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cirulla.solver import puzzles, record
from cirulla.solver.errors import CirullaError
from cirulla.solver.i18n import N_, Translations, translator
from cirulla.solver.match import Match, Phase
from cirulla.solver.moves import Move
from cirulla.solver.puzzles import Puzzle, PuzzleSource, Theme
from cirulla.solver.search import SearchMethod
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import engine_service_pb2 as epb

from . import Subcommands, add_lang_argument, records, seed_number, translator_for
from .batch import game_id
from .habits import Game, analysis_files, read_games
from .output import write_data
from .remote import FAILED, OK, CliError
from .report import CSP, CSS, card_views, environment, move_view

THEMES = {
    Theme.SCOPA: N_("scopa"),
    Theme.SWEEP_AVOIDED: N_("sweep avoided"),
    Theme.SETTEBELLO: N_("the settebello"),
    Theme.PRIMIERA: N_("primiera"),
    Theme.DIAMONDS: N_("diamonds"),
    Theme.DECLARATION: N_("declaration"),
    Theme.LAST_CAPTURE: N_("the last capture"),
}
THEME_ABOUT = {
    Theme.SCOPA: N_("The best move sweeps the table."),
    Theme.SWEEP_AVOIDED: N_("The other moves leave the next player a sweep."),
    Theme.SETTEBELLO: N_("The best move takes or keeps the settebello."),
    Theme.PRIMIERA: N_("The best move wins the race for primiera."),
    Theme.DIAMONDS: N_("The best move wins the race for diamonds."),
    Theme.DECLARATION: N_("Which declaration to make, or none."),
    Theme.LAST_CAPTURE: N_("The last round: whoever captures last takes the cards left on the table."),
}
ERRORS = (apb.JUDGEMENT_INACCURACY, apb.JUDGEMENT_MISTAKE, apb.JUDGEMENT_BLUNDER)
SEVEN_OF_DIAMONDS = "7D"

Warn = Callable[[str, str], None]     # (where, why)


# --- the positions worth a look ---------------------------------------------------------

def promising(d: apb.DecisionAnalysis) -> bool:
    """A decision with MIN_MOVES legal moves at least that the player got wrong,
    whose best move sweeps the table, takes the settebello or declares (or whose
    played move declared), or that the analysis solved exactly: worth searching
    again for a puzzle."""
    if d.legal_moves < puzzles.MIN_MOVES or d.judgement == apb.JUDGEMENT_FORCED:
        return False
    if d.judgement in ERRORS or d.method == epb.SEARCH_METHOD_EXACT:
        return True
    best, played = d.best, d.played
    if not best.card or not played.card:
        return True
    taken = {c.upper() for c in best.captured}
    return bool(taken) and (taken == {c.upper() for c in d.position.table} or SEVEN_OF_DIAMONDS in taken)


class Records:
    """The records the analysis lines name, read once per file."""

    def __init__(self, bases: Sequence[Path]):
        self.bases = list(dict.fromkeys(bases))
        self._lines: dict[Path, list[str]] = {}

    def _find(self, name: str) -> Path | None:
        p = Path(name)
        if p.is_absolute():
            return p if p.is_file() else None
        return next((b / p for b in self.bases if (b / p).is_file()), None)

    def text(self, source: str) -> str:
        """The record a source names: a file, or `FILE.jsonl:LINE`.

        :raises ValueError: saying why it cannot be read.
        """
        path, line = self._find(source), 0
        if path is None:
            m = re.fullmatch(r"(.+):(\d+)", source)
            if m:
                path, line = self._find(m[1]), int(m[2])
        if path is None:
            raise ValueError(f"no record {source} in {' or '.join(str(b) for b in self.bases)} (the analysis's "
                             "source: run the command where `cirulla analyze` ran)")
        try:
            if not line:
                return path.read_text(encoding="utf-8")
            if path not in self._lines:
                self._lines[path] = path.read_text(encoding="utf-8").split("\n")
            return self._lines[path][line - 1]
        except (OSError, UnicodeDecodeError, IndexError) as e:
            raise ValueError(f"cannot read the record {source}: {e}") from None


@dataclass
class Finder:
    """Puzzles from analysed games, one game at a time."""
    records: Records
    tr: Translations
    seed: int = 0
    found: list[Puzzle] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)     # the positions looked at
    searched: int = 0

    def positions(self, game: Game, warn: Warn) -> list[tuple[apb.DecisionAnalysis, Match]]:
        """The game's promising decisions, each with the match as it stood then."""
        chosen = [d for d in game.decisions if promising(d)]
        if not chosen:
            return []
        if not game.game_id:
            warn(game.source, "a single game's analysis (--json) names no record: analyse the records with "
                              "`cirulla analyze RECORDS --out FILE.jsonl`")
            return []
        try:
            match = record.loads(self.records.text(game.source))
        except (ValueError, CirullaError) as e:
            warn(game.source, str(e))
            return []
        if game_id(record.to_proto(match)) != game.game_id:
            warn(game.source, f"not the game analysed: its id is not {game.game_id}")
            return []
        out = []
        for d in chosen:
            if not 0 <= d.event_index < len(match.events):
                warn(game.source, f"decision {d.number}: no event {d.event_index} in the record")
                continue
            at = records.position_at(match, d.event_index)
            if at.phase is not Phase.PLAY or at.to_move != d.seat or \
                    sorted(map(str, at.hand(d.seat))) != sorted(c.upper() for c in d.position.hand):
                warn(game.source, f"decision {d.number}: the record's position is not the analysis's")
                continue
            out.append((d, at))
        return out

    def look(self, game: Game, d: apb.DecisionAnalysis, at: Match) -> Puzzle | None:
        """The puzzle of one decision's position, if it makes one (and is new)."""
        view = at.view(d.seat)
        pid = puzzles.position_id(view)
        if pid in self.seen:
            return None
        self.seen.add(pid)
        self.searched += 1
        played = record.move_from_proto(d.played, view.rules.matta_card)
        source = PuzzleSource(game_id=game.game_id, record=game.source, decision=d.number, event_index=d.event_index,
                              player=game.names.get(d.seat, ""), played=played)
        puzzle = puzzles.find(view, source=source, seed=self.seed, tr=self.tr)
        if puzzle is not None:
            self.found.append(puzzle)
        return puzzle

    @property
    def ordered(self) -> list[Puzzle]:
        """Easiest first, in the order found among equals."""
        return sorted(self.found, key=lambda p: p.difficulty)


def find(files: Sequence[Path], *, tr: Translations, seed: int = 0, warn: Warn,
         on_game: Callable[[int, int], None] | None = None) -> Finder:
    """Every puzzle of the analysed games in `files` (each game's record found
    from the current folder, then from its analysis file's); `on_game(positions
    searched, puzzles)` after each game."""
    finder = Finder(Records([Path.cwd(), *(f.resolve().parent for f in files)]), tr, seed)
    for game in read_games(files, warn):
        for d, at in finder.positions(game, warn):
            finder.look(game, d, at)
        if on_game is not None:
            on_game(finder.searched, len(finder.found))
    return finder


# --- the output -------------------------------------------------------------------------

def lines(found: Iterable[Puzzle]) -> list[str]:
    """The puzzles as JSON lines (cirulla.v1.Puzzle, protobuf's JSON mapping)."""
    from cirulla.server.convert import puzzle_to_proto
    return [json_format.MessageToJson(puzzle_to_proto(p), indent=None, ensure_ascii=False) for p in found]


def _sides(p: Puzzle) -> list[int]:
    """The seat's side first, then the others in order."""
    mine = p.view.side
    return [mine] + [s for s in range(p.view.rules.n_sides) if s != mine]


def _cards_taken(m: Move) -> str:
    return " ".join(sorted(str(c) for c in m.captured))


def puzzle_view(p: Puzzle, number: int, tr: Translations) -> dict[str, Any]:
    """What the page's template draws of a puzzle."""
    _ = tr.gettext
    v, matta = p.view, p.view.rules.matta_card
    order = _sides(p)
    n = v.rules.players
    moves = [{"text": str(p.solution), "card": "" if p.solution.card is None else str(p.solution.card),
              "taken": _cards_taken(p.solution), "right": True, "reason": p.reason, "loss": "",
              "view": move_view(p.solution, matta, tr)}]
    moves += [{"text": str(o.move), "card": "" if o.move.card is None else str(o.move.card),
               "taken": _cards_taken(o.move), "right": False, "reason": o.reason, "loss": f"{o.loss:.2f}",
               "view": move_view(o.move, matta, tr)} for o in p.others]
    after = [(v.seat + k) % n for k in range(1, n)]           # the other seats, in the order they play
    return {
        "number": number, "id": p.id, "theme": str(p.theme), "theme_word": _(THEMES[p.theme]),
        "theme_about": _(THEME_ABOUT[p.theme]), "difficulty": p.difficulty,
        "stars": "★" * p.difficulty + "☆" * (5 - p.difficulty),
        "hand": card_views(v.hand, matta, tr=tr), "table": card_views(v.table, matta, tr=tr),
        "unseen": card_views(v.unseen(), matta, tr=tr),
        "match": " – ".join(str(v.scores[s]) for s in order),
        "this_hand": " – ".join(str(v.scope[s] + v.declarations[s]) for s in order),
        "held": [tr.ngettext("seat %(seat)s holds %(count)s card", "seat %(seat)s holds %(count)s cards",
                             v.hand_sizes[s])
                 % {"seat": s, "count": v.hand_sizes[s]} for s in after],
        "round": v.round + 1, "stock": v.stock_size, "seat": v.seat,
        "moves": moves, "declarations": [m for m in moves if not m["card"]],
        "solution": str(p.solution), "solution_view": move_view(p.solution, matta, tr), "reason": p.reason,
        "lead": f"{p.lead:.2f}", "exact": p.method is SearchMethod.EXACT,
        "player": p.source.player, "played": move_view(p.source.played, matta, tr),
        "played_right": p.source.played == p.solution, "record": p.source.record,
        "decision": p.source.decision + 1,
    }


def html(found: Sequence[Puzzle], *, title: str | None = None, tr: Translations | None = None) -> str:
    """The puzzles as one self-contained page (inline CSS and script, nothing
    fetched), autoescaped, in the language of `tr` (English by default)."""
    tr = tr or translator()
    env = environment(tr)
    views = [puzzle_view(p, i + 1, tr) for i, p in enumerate(found)]
    return env.get_template("puzzles.html").render(
        title=title or tr.ngettext("%(count)s puzzle", "%(count)s puzzles", len(found)) % {"count": len(found)},
        csp=CSP, css=CSS + PUZZLE_CSS, js=PUZZLE_JS, puzzles=views, total=len(views))


def _asset(name: str) -> str:
    return resources.files("cirulla.cli").joinpath("templates", name).read_text(encoding="utf-8")


# the page's own style (after the report's) and script (cli/templates/)
PUZZLE_CSS = _asset("puzzles.css")
PUZZLE_JS = _asset("puzzles.js")


# --- the command ---------------------------------------------------------------------------

def run(args: argparse.Namespace) -> int:
    """`cirulla puzzles`: exit 0, or 1 when some input was bad (reported, skipped)."""
    files = analysis_files(args.results)
    err = Console(stderr=True, highlight=False)
    out = Console(stderr=args.out is None, highlight=False)     # standard output holds the lines without --out
    tr = translator_for(args)
    _ = tr.gettext
    bad = 0

    def warn(where: str, why: str) -> None:
        nonlocal bad
        bad += 1
        err.print(f"[red]skipped[/] {escape(where)}: {escape(why)}", soft_wrap=True)

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
               TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("searching", total=None)

        def on_game(searched: int, found: int) -> None:
            bar.update(task, advance=1, description=f"{found} puzzles, {searched} positions")

        finder = find(files, tr=tr, seed=args.seed, warn=warn, on_game=on_game)
    found = finder.ordered
    text = "".join(line + "\n" for line in lines(found))
    if args.out:
        try:
            Path(args.out).write_text(text, encoding="utf-8")
        except OSError as e:
            raise CliError(f"--out {args.out}: {e.strerror}", FAILED) from None
    else:
        write_data(text)
    by_theme = Counter(p.theme for p in found)
    out.print(tr.ngettext("%(count)s puzzle from %(positions)s positions searched",
                          "%(count)s puzzles from %(positions)s positions searched", len(found))
              % {"count": len(found), "positions": finder.searched}
              + (": " + ", ".join(f"{_(THEMES[t])} {by_theme[t]}" for t in THEMES if by_theme[t]) if found else ""),
              soft_wrap=True)
    if args.out:
        out.print(_("Puzzles written to %(file)s") % {"file": escape(args.out)}, soft_wrap=True)
    if args.html:
        try:
            Path(args.html).write_text(html(found, tr=tr), encoding="utf-8")
        except OSError as e:
            raise CliError(f"--html {args.html}: {e.strerror}", FAILED) from None
        out.print(_("Page written to %(file)s") % {"file": escape(args.html)}, soft_wrap=True)
    if bad:
        err.print(f"[red]error:[/] {bad} inputs skipped (above)", soft_wrap=True)
        return FAILED
    return OK


EXAMPLES = """examples:
  cirulla arena casual greedy --hands 1 --pairs 50 --save games/
  cirulla analyze games/ --out results.jsonl --iterations 2000
  cirulla puzzles results.jsonl --out puzzles.jsonl --html puzzles.html
  cirulla puzzles results.jsonl more/ --out puzzles.jsonl --html puzzles.html --lang it

RESULTS: the batch mode's output (`cirulla analyze ... --out FILE.jsonl`, a line
per game), or folders of such files. Each line's record (its source) is read
again: run the command where `cirulla analyze` ran, or beside the records.

exit codes: 0 done, 1 some input was skipped (reported), 2 bad usage,
5 file not found"""


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Add the `puzzles` command to `cirulla`'s subparsers."""
    p = subparsers.add_parser(
        "puzzles", help="puzzles cut from analysed games",
        description="Positions from analysed games where one move is clearly best, each with a theme\n"
                    "(scopa, sweep avoided, settebello, primiera, diamonds, declaration, last capture),\n"
                    "a difficulty (1-5), the solution and why: a cirulla.v1.Puzzle per line, and with\n"
                    "--html a page to solve them on.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", metavar="RESULTS",
                   help="analysis files (.jsonl: a cirulla.v1.GameAnalysisLine per line) or folders of them")
    p.add_argument("--out", metavar="FILE", help="write the puzzles to FILE (default: standard output)")
    p.add_argument("--html", metavar="FILE", help="also write the puzzles as a self-contained web page")
    p.add_argument("--seed", type=seed_number, default=0, help="added to each position's own seed (default 0)")
    add_lang_argument(p)
    p.set_defaults(run=run, json=False)     # `cirulla`'s error path reads args.json
    return p

