"""`cirulla habits ANALYSES... [--html FILE] [--player NAME]`: a player's habits
over many analysed games.

The analyses are what `cirulla analyze` writes: the batch mode's output
(`--out FILE.jsonl`, a cirulla.v1.GameAnalysisLine per line) and single games'
`--json` (a cirulla.v1.GameAnalysis per file), as files or folders (their
*.jsonl and *.json, by name). The games count in the order they are read: that
order is the "time" of the accuracy over time. A game whose id was read
before (the same line in two files) counts once; a file or line that is not
an analysis is reported with its path (and line number) and skipped.

Per player (by the names in the analyses' summaries, whatever the seat):

* the accuracy of each game (the mean over the player's unforced decisions in
  it, as a game's own accuracy is) and over every game;
* errors (inaccuracies, mistakes and blunders) per 100 unforced decisions:
  by phase of the hand (each phase's rate over that phase's unforced
  decisions), by kind and by grade (over all the player's unforced decisions);
* the most frequent kind of error and its two costliest examples: the
  position as the player saw it, the move played, the best move, and why.

The kinds (cirulla.v1.ErrorKind, set by the analysis on every error): gave a
scopa, missed a capture, a declaration, lost a race (cards, diamonds, the
settebello, primiera), over-captured, other. "Other" is the most frequent kind
only if it is the only kind: a named kind teaches more.

The tables and the page are in the --lang language; an example's reason is
explained again in it from the decision's figures (the analysis stores the
English one).
"""
from __future__ import annotations

import argparse
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cirulla.solver.bounds import require_in_bounds
from cirulla.solver.cards import Card
from cirulla.solver.errors import CirullaError
from cirulla.solver.i18n import N_, Translations, translator
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import game_pb2 as pb

from . import Subcommands, add_lang_argument, translator_for
from .remote import FAILED, NO_FILE, OK, USAGE, CliError
from .render import GRADE_WORDS, grade_count, move_text
from .report import CardView, card_view, environment

# display order and words; the keys are cirulla.v1's enum value names without their prefix, lower case
# (the analysis's ErrorKind, Phase and Judgement values)
KINDS = {
    "gave_scopa": N_("gave a scopa"),
    "missed_capture": N_("missed a capture"),
    "declaration": N_("declaration"),
    "lost_race": N_("lost a race"),
    "over_captured": N_("over-captured"),
    "other": N_("other"),
}
KIND_ABOUT = {
    "gave_scopa": N_("Left the next player a sweep the best move did not"),
    "missed_capture": N_("Played to the table (or took less) where a capture was better"),
    "declaration": N_("A declaration made where another was better, or not made"),
    "lost_race": N_("Gave up ground in a race: cards, diamonds, the settebello, primiera"),
    "over_captured": N_("Took more cards than the best move, and lost by it elsewhere"),
    "other": N_("None of the above"),
}
PHASES = {"first_round": N_("first round"), "middle": N_("middle"), "last_two_rounds": N_("last two rounds")}
GRADES = ("inaccuracy", "mistake", "blunder")
GRADE_COLOURS = {"inaccuracy": "#d4a106", "mistake": "#f97316", "blunder": "#dc2626"}
UNKNOWN_PHASE = "unknown"       # an analysis from before phases were recorded
EXAMPLES_SHOWN = 2

Warn = Callable[[str, str], None]     # (where, why)


# --- reading -------------------------------------------------------------------------

@dataclass(frozen=True)
class Game:
    """One analysed game as read."""
    index: int                  # 1-based, in the order read: the habits' time
    game_id: str                # the batch line's id; "" for a single game's --json
    source: str                 # the record's file (the batch line's source), else where the analysis was read
    names: dict[int, str]       # seat -> player name
    decisions: Sequence[apb.DecisionAnalysis]


def analysis_files(paths: Sequence[str]) -> list[Path]:
    """The files the command's ANALYSES name: files as given, a folder's *.jsonl and
    *.json sorted by name.

    :raises CliError: (NO_FILE) for a name that is neither a file nor a folder.
    """
    files: list[Path] = []
    for name in paths:
        p = Path(name)
        if p.is_dir():
            files.extend(sorted((f for f in p.iterdir() if f.suffix in (".jsonl", ".json") and f.is_file()),
                                key=lambda f: f.name))
        elif p.is_file():
            files.append(p)
        else:
            raise CliError(f"{name}: no such file or folder", NO_FILE)
    return files


def _enum(msg: Message, name: str) -> str | None:
    """An enum field's value name without its prefix, lower case ("gave_scopa"); None if unset."""
    number = getattr(msg, name)
    if not number:
        return None
    enum = msg.DESCRIPTOR.fields_by_name[name].enum_type
    assert enum is not None
    value = enum.values_by_number.get(number)
    if value is None:
        return None
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", enum.name).upper() + "_"
    return value.name.removeprefix(prefix).lower()


def parse_analysis(text: str, where: str, index: int) -> Game:
    """A game of a GameAnalysisLine or a GameAnalysis in protobuf's JSON mapping.

    :raises ValueError: saying why it is not one.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise ValueError("not a cirulla.v1.GameAnalysisLine or GameAnalysis: JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError("not a cirulla.v1.GameAnalysisLine or GameAnalysis: not a JSON object")
    if "events" in data or "rules" in data:
        raise ValueError("a game record, not its analysis: analyse it first (cirulla analyze RECORD --json, "
                         "or many with --out FILE.jsonl)")
    try:
        if "analysis" in data or "gameId" in data or "game_id" in data:
            line = json_format.ParseDict(data, apb.GameAnalysisLine())
            game_id, analysis, source = line.game_id, line.analysis, line.source or where
        else:
            game_id, analysis, source = "", json_format.ParseDict(data, apb.GameAnalysis()), where
    except json_format.ParseError as e:
        raise ValueError(f"not a cirulla.v1.GameAnalysisLine or GameAnalysis: {e}") from None
    require_in_bounds(analysis, "analysis")
    names = {p.seat: p.name for p in analysis.summary.players}
    if not names:
        raise ValueError("an analysis without its summary's players")
    for d in analysis.decisions:
        if d.seat not in names:
            raise ValueError(f"decision {d.number}: seat {d.seat} is not among the summary's players")
    return Game(index, game_id, source, names, analysis.decisions)


def read_games(files: Iterable[Path], warn: Warn) -> Iterator[Game]:
    """Every analysed game of the files, in order: a .jsonl file's non-blank lines, any
    other file's whole text. What is not an analysis goes to `warn` and is skipped; a
    game id read before is skipped silently (the same line in two files)."""
    seen: set[str] = set()
    index = 0

    def texts(f: Path) -> Iterator[tuple[str, str | None, str]]:       # where, text, problem
        try:
            if f.suffix != ".jsonl":
                yield str(f), f.read_bytes().decode("utf-8"), ""
                return
            with f.open("rb") as lines:
                for number, raw in enumerate(lines, 1):
                    if raw.strip():
                        try:
                            yield f"{f}:{number}", raw.decode("utf-8"), ""
                        except UnicodeDecodeError as e:
                            yield f"{f}:{number}", None, f"not UTF-8 text (byte {e.start})"
        except OSError as e:
            yield str(f), None, f"cannot read it: {e.strerror}"
        except UnicodeDecodeError as e:
            yield str(f), None, f"not UTF-8 text (byte {e.start})"

    for f in files:
        for where, text, problem in texts(f):
            if text is None:
                warn(where, problem)
                continue
            try:
                game = parse_analysis(text, where, index + 1)
            except ValueError as e:
                warn(where, str(e))
                continue
            if game.game_id:
                if game.game_id in seen:
                    continue
                seen.add(game.game_id)
            index += 1
            yield game


# --- the habits ----------------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    """An error shown as an example: where it was, the position, the two moves, why."""
    game: int                   # Game.index
    source: str                 # Game.source
    number: int                 # the decision's, 0-based
    hand: int
    round: int
    phase: str
    grade: str
    severity: float
    loss: float
    played: pb.Move
    best: pb.Move
    reason: str                 # the analysis's (English)
    decision: apb.DecisionAnalysis      # its figures, to explain it in the reader's language
    hand_cards: tuple[str, ...]
    table: tuple[str, ...]
    scores: tuple[int, ...]
    hand_points: tuple[int, ...]


@dataclass(frozen=True)
class GamePoint:
    """One game of a player: the accuracy-over-time series."""
    game: int                   # Game.index
    source: str                 # Game.source
    unforced: int
    accuracy: float | None      # None: no unforced decision in it
    errors: int


@dataclass
class Habits:
    """One player's figures over many games."""
    name: str
    games: list[GamePoint] = field(default_factory=list)
    decisions: int = 0
    unforced: int = 0
    accuracy_points: float = 0.0                # decisions' accuracies summed (unforced)
    phase_unforced: Counter[str] = field(default_factory=Counter)    # unforced decisions, by phase
    phase_errors: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    phase_kinds: Counter[tuple[str, str]] = field(default_factory=Counter)
    grades: Counter[str] = field(default_factory=Counter)
    cost: dict[str, float] = field(default_factory=dict)            # severities summed, by kind
    unclassified: int = 0                                           # errors without a kind (old analyses)
    costliest: dict[str, list[Example]] = field(default_factory=dict)    # by kind, the costliest first

    @property
    def errors(self) -> int:
        return sum(self.kinds.values())

    @property
    def accuracy(self) -> float | None:
        return self.accuracy_points / self.unforced if self.unforced else None

    def per_100(self, count: int, out_of: int | None = None) -> float | None:
        n = self.unforced if out_of is None else out_of
        return 100.0 * count / n if n else None

    def phase_rate(self, phase: str) -> float | None:
        return self.per_100(self.phase_errors[phase], self.phase_unforced[phase])

    @property
    def phases(self) -> list[str]:
        """The phases to show: the three, and "unknown" if some decision had none."""
        return list(PHASES) + ([UNKNOWN_PHASE] if self.phase_unforced[UNKNOWN_PHASE] else [])

    @property
    def top_kind(self) -> str | None:
        """The most frequent kind of error (ties: the costlier in all, then the display order);
        "other" only if no named kind occurred."""
        named = [k for k in KINDS if k != "other" and self.kinds[k]]
        pool = named or (["other"] if self.kinds["other"] else [])
        if not pool:
            return None
        return max(pool, key=lambda k: (self.kinds[k], self.cost.get(k, 0.0), -list(KINDS).index(k)))

    @property
    def examples(self) -> list[Example]:
        top = self.top_kind
        return [] if top is None else self.costliest.get(top, [])[:EXAMPLES_SHOWN]

    def add(self, game: Game) -> None:
        """The decisions of this player's seat(s) in one game."""
        seats = {s for s, n in game.names.items() if n == self.name}
        unforced = errors = 0
        points = 0.0
        for d in game.decisions:
            if d.seat not in seats:
                continue
            self.decisions += 1
            if d.legal_moves <= 1 or d.judgement == apb.JUDGEMENT_FORCED:
                continue
            unforced += 1
            points += d.accuracy
            phase = _enum(d, "phase") or UNKNOWN_PHASE
            self.phase_unforced[phase] += 1
            grade = _enum(d, "judgement")
            if grade not in GRADES:
                continue
            kind = _enum(d, "kind")
            if kind not in KINDS:
                kind = "other"              # an error the analysis left unclassified
                self.unclassified += 1
            assert grade is not None and kind is not None
            errors += 1
            self.phase_errors[phase] += 1
            self.kinds[kind] += 1
            self.phase_kinds[phase, kind] += 1
            self.grades[grade] += 1
            self.cost[kind] = self.cost.get(kind, 0.0) + d.severity
            self._keep(kind, Example(
                game=game.index, source=game.source, number=d.number, hand=d.hand,
                round=d.round, phase=phase, grade=grade, severity=d.severity, loss=d.loss, played=d.played,
                best=d.best, reason=d.reason, decision=d, hand_cards=tuple(d.position.hand),
                table=tuple(d.position.table),
                scores=tuple(d.position.scores), hand_points=tuple(d.position.hand_points)))
        self.unforced += unforced
        self.accuracy_points += points
        self.games.append(GamePoint(game.index, game.source, unforced,
                                    points / unforced if unforced else None, errors))

    def _keep(self, kind: str, example: Example) -> None:
        kept = self.costliest.setdefault(kind, [])
        kept.append(example)
        kept.sort(key=lambda e: (-e.severity, e.game, e.number))      # ties: the earlier
        del kept[EXAMPLES_SHOWN:]


@dataclass
class Report:
    """Every player's habits over the games read."""
    players: dict[str, Habits] = field(default_factory=dict)
    games: int = 0
    bad: int = 0

    def add(self, game: Game) -> None:
        self.games += 1
        for name in dict.fromkeys(game.names.values()):     # a name on two seats plays one game
            self.players.setdefault(name, Habits(name)).add(game)

    def ordered(self, only: Sequence[str] = ()) -> list[Habits]:
        """The players by name (or those of `only`, in its order)."""
        if only:
            return [self.players[n] for n in only]
        return sorted(self.players.values(), key=lambda h: (h.name.casefold(), h.name))


def habits(files: Iterable[Path], warn: Warn) -> Report:
    """The report over every analysed game of the files (bad ones to `warn`)."""
    report = Report()

    def bad(where: str, why: str) -> None:
        report.bad += 1
        warn(where, why)

    for game in read_games(files, bad):
        report.add(game)
    return report


# --- the terminal ---------------------------------------------------------------------

def _num(x: float | None, form: str = ".1f") -> str:
    return "–" if x is None else format(x, form)


def habits_title(games: int, tr: Translations) -> str:
    return tr.ngettext("Habits over %(count)s game", "Habits over %(count)s games", games) % {"count": games}


def tables(report: Report, only: Sequence[str] = (), tr: Translations | None = None) -> list[Table]:
    """The terminal's tables (80 columns hold each): the players; errors per 100 by phase;
    by kind."""
    tr = tr or translator()
    _ = tr.gettext
    players = report.ordered(only)

    def table(title: str, caption: str, columns: Sequence[str]) -> Table:
        t = Table(title=title, caption=caption, caption_justify="left")
        t.add_column(_("player"), overflow="fold", min_width=10)
        for name in columns:
            t.add_column(name, justify="right", no_wrap=True)
        return t

    first = table(habits_title(report.games, tr),
                  _("unforced: the decisions with a choice (forced moves left out); accuracy: 0-100 over them; "
                    "errors (inacc., mist., blund.): per 100 unforced decisions"),
                  (_("games"), _("unforced"), _("accuracy"), _("errors"), _("inacc."), _("mist."), _("blund.")))
    for h in players:
        first.add_row(escape(h.name), str(len(h.games)), str(h.unforced), _num(h.accuracy),
                      _num(h.per_100(h.errors)), *(_num(h.per_100(h.grades[g])) for g in GRADES))
    second = table(_("Errors per 100 unforced decisions by phase of the hand"),
                   _("each phase's errors over its own unforced decisions"),
                   [_(PHASES[p]) for p in PHASES])
    for h in players:
        second.add_row(escape(h.name), *(_num(h.phase_rate(p)) for p in PHASES))
    short = {"gave_scopa": N_("scopa"), "missed_capture": N_("capture"), "declaration": N_("declar."),
             "lost_race": N_("race"), "over_captured": N_("over"), "other": N_("other")}
    third = table(_("Errors per 100 unforced decisions by kind"),
                  _("scopa: gave a scopa; capture: missed a capture; declar.: a declaration; race: lost a race "
                    "(cards, diamonds, settebello, primiera); over: over-captured"), [_(short[k]) for k in KINDS])
    for h in players:
        third.add_row(escape(h.name), *(_num(h.per_100(h.kinds[k])) for k in KINDS))
    return [first, second, third]


# --- the page -----------------------------------------------------------------------

def _marks(cards: Sequence[str], played: set[str], best: set[str], *, hand: bool,
           tr: Translations) -> list[CardView]:
    """The report's card views (no matta: an analysis line carries no rules)."""
    out = []
    for c in cards:
        mark = " ".join(m for m, on in (("played" if hand else "taken", c in played), ("best", c in best)) if on)
        out.append(card_view(Card.parse(c), None, mark, tr=tr))
    return out


def example_reason(e: Example, tr: Translations) -> str:
    """Why the example's error lost, in the language of `tr`: explained again
    from the decision's figures (the analysis's explain), or the analysis's own
    (English) words if its moves cannot be read back without the match's rules
    (a declaration naming another matta)."""
    from cirulla.server.convert import decision_from_proto
    from cirulla.server.errors import BadRequest
    from cirulla.solver.analysis import explain
    from cirulla.solver.rules import Rules
    try:
        return explain(decision_from_proto(e.decision, Rules()), tr)
    except (BadRequest, CirullaError):
        return e.reason


def example_view(e: Example, tr: Translations) -> dict[str, Any]:
    """What the template draws of an example."""
    def own(m: pb.Move) -> set[str]:
        return {c.upper() for c in ([m.card] if m.card else []) + list(m.declared) + list(m.declared_second)}

    def took(m: pb.Move) -> set[str]:
        return {c.upper() for c in m.captured}

    same = e.played.text == e.best.text
    return {
        "game": e.game, "source": e.source, "decision": e.number + 1,
        "hand": e.hand + 1, "round": e.round + 1, "phase": tr.gettext(PHASES[e.phase]) if e.phase in PHASES
        else e.phase, "grade": e.grade, "grade_word": tr.gettext(GRADE_WORDS[e.grade]),
        "severity": e.severity, "loss": e.loss, "reason": example_reason(e, tr) if e.reason else "",
        "played": e.played.text, "best": e.best.text, "same": same,
        "hand_cards": _marks(e.hand_cards, own(e.played), set() if same else own(e.best), hand=True, tr=tr),
        "table": _marks(e.table, took(e.played), set() if same else took(e.best), hand=False, tr=tr),
        "scores": " – ".join(map(str, e.scores)), "hand_points": " – ".join(map(str, e.hand_points)),
    }


def accuracy_chart(points: Sequence[GamePoint], *, width: int = 420, height: int = 130) -> dict[str, Any]:
    """The accuracy-over-time chart's geometry: a dot per game with unforced decisions,
    the line through them, the running mean of the last 5 games, the grid."""
    shown = [p for p in points if p.accuracy is not None]
    left, right, top, bottom = 30, 8, 8, 24
    lowest = min((p.accuracy for p in shown if p.accuracy is not None), default=100.0)
    lo = max(0.0, min(90.0, math.floor((lowest - 2) / 10) * 10))     # 10 points at least, in tens
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / (len(shown) - 1) if len(shown) > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (100.0 - v) / (100.0 - lo)

    dots = [{"x": round(x(i), 1), "y": round(y(p.accuracy), 1), "game": p.game, "source": p.source,
             "accuracy": p.accuracy, "errors": p.errors, "unforced": p.unforced}
            for i, p in enumerate(shown) if p.accuracy is not None]
    line = " ".join(f"{d['x']},{d['y']}" for d in dots)
    window = 5
    mean = ""
    if len(shown) >= window:
        values = [p.accuracy for p in shown if p.accuracy is not None]
        running = [sum(values[max(0, i - window + 1):i + 1]) / len(values[max(0, i - window + 1):i + 1])
                   for i in range(len(values))]
        mean = " ".join(f"{round(x(i), 1)},{round(y(v), 1)}" for i, v in enumerate(running))
    grid = [{"y": round(y(v), 1), "label": f"{v:g}"} for v in (lo, (lo + 100) / 2, 100.0)]
    ticks = []
    if shown:
        step = max(1, math.ceil(len(shown) / 8))
        ticks = [{"x": dots[i]["x"], "label": str(dots[i]["game"])}
                 for i in sorted({*range(0, len(shown), step), len(shown) - 1})]
    return {"width": width, "height": height, "left": left, "right": width - right, "bottom": height - bottom,
            "dots": dots, "line": line, "mean": mean, "grid": grid, "ticks": ticks, "window": window,
            "r": 3.0 if len(shown) <= 60 else 1.8}


def player_view(h: Habits, index: int, tr: Translations) -> dict[str, Any]:
    """What the template shows of a player."""
    _ = tr.gettext
    def bars(rows: list[tuple[str, str, int, int, float | None]]) -> list[dict[str, Any]]:
        top = max((r[4] or 0.0 for r in rows), default=0.0) or 1.0
        return [{"key": key, "label": label, "errors": errors, "unforced": out_of, "rate": rate,
                 "width": round(100 * (rate or 0.0) / top, 1)} for key, label, errors, out_of, rate in rows]

    top = h.top_kind
    return {
        "id": f"p{index}", "name": h.name, "games": len(h.games), "decisions": h.decisions, "unforced": h.unforced,
        "accuracy": h.accuracy, "errors": h.errors, "rate": h.per_100(h.errors),
        "chart": accuracy_chart(h.games),
        "phases": bars([(p, _(PHASES[p]) if p in PHASES else _("phase not recorded"), h.phase_errors[p],
                         h.phase_unforced[p], h.phase_rate(p)) for p in h.phases]),
        "kinds": bars([(k, _(KINDS[k]), h.kinds[k], h.unforced, h.per_100(h.kinds[k])) for k in KINDS]),
        "grades": [{"key": g, "label": grade_count(g, h.grades[g], tr), "count": h.grades[g],
                    "rate": h.per_100(h.grades[g])}
                   for g in GRADES],
        "top": None if top is None else {"key": top, "label": _(KINDS[top]), "about": _(KIND_ABOUT[top]),
                                         "count": h.kinds[top], "rate": h.per_100(h.kinds[top])},
        "examples": [example_view(e, tr) for e in h.examples],
    }


def html(report: Report, only: Sequence[str] = (), *, title: str | None = None,
         tr: Translations | None = None) -> str:
    """The habits page: self-contained (inline CSS and SVG, no scripts, nothing fetched),
    autoescaped, in the language of `tr` (English by default)."""
    tr = tr or translator()
    env = environment(tr).overlay()         # the report's templates and card drawing
    env.filters["num"] = _num
    players = [player_view(h, i, tr) for i, h in enumerate(report.ordered(only))]
    return env.get_template("habits.html").render(
        title=title or habits_title(report.games, tr), games=report.games, players=players,
        kinds=[{"key": k, "label": tr.gettext(v), "about": tr.gettext(KIND_ABOUT[k])} for k, v in KINDS.items()],
        colours=GRADE_COLOURS)


# --- the command ----------------------------------------------------------------------

def run(args: argparse.Namespace) -> int:
    """`cirulla habits`: exit 0, or 1 when some input was not an analysis (reported, skipped)."""
    files = analysis_files(args.analyses)
    err = Console(stderr=True, highlight=False)
    out = Console(highlight=False)

    def warn(where: str, why: str) -> None:
        err.print(f"[red]bad analysis[/] {escape(where)}: {escape(why)}", soft_wrap=True)

    report = habits(files, warn)
    tr = translator_for(args)
    _ = tr.gettext
    if not report.games:
        raise CliError(f"no analysed game in {', '.join(args.analyses)}" + (f" ({report.bad} bad, above)"
                                                                            if report.bad else ""))
    only: list[str] = list(dict.fromkeys(args.player or ()))
    missing = [n for n in only if n not in report.players]
    if missing:
        known = ", ".join(h.name for h in report.ordered())
        raise CliError(f"--player {', '.join(missing)}: not among the players ({known})", USAGE)
    for t in tables(report, only, tr):
        out.print(t)
    for h in report.ordered(only):
        top = h.top_kind
        if top is None:
            continue
        out.print(_("[bold]%(player)s[/]: most often [bold]%(kind)s[/] (%(count)s of %(errors)s errors); the "
                    "costliest:") % {"player": escape(h.name), "kind": _(KINDS[top]), "count": h.kinds[top],
                                     "errors": h.errors}, soft_wrap=True)
        for e in h.examples:
            reason = example_reason(e, tr) if e.reason else ""
            out.print("  " + _("game %(game)s (%(source)s), decision %(decision)s, hand %(hand)s round %(round)s: "
                               "played %(played)s, best %(best)s (%(grade)s, %(cost)s points)")
                      % {"game": e.game, "source": escape(e.source), "decision": e.number + 1, "hand": e.hand + 1,
                         "round": e.round + 1, "played": move_text(e.played.text, tr=tr),
                         "best": move_text(e.best.text, tr=tr),
                         "grade": _(GRADE_WORDS[e.grade]), "cost": f"{e.severity:.2f}"}
                      + (f". {move_text(escape(reason))}" if reason else ""), soft_wrap=True)
    unclassified = sum(h.unclassified for h in report.ordered(only))
    if unclassified:
        err.print(f"note: {unclassified} errors had no kind (analyses from before kinds were recorded): "
                  "counted as other", soft_wrap=True)
    if args.html:
        try:
            Path(args.html).write_text(html(report, only, tr=tr), encoding="utf-8")
        except OSError as e:
            raise CliError(f"--html {args.html}: {e.strerror}", FAILED) from None
        out.print(_("Page written to %(file)s") % {"file": escape(args.html)}, soft_wrap=True)
    if report.bad:
        err.print(f"[red]error:[/] {report.bad} bad analyses (above, skipped); {report.games} games counted",
                  soft_wrap=True)
        return FAILED
    return OK


EXAMPLES = """examples:
  cirulla analyze games/ --out results.jsonl --iterations 3000
  cirulla habits results.jsonl --html habits.html
  cirulla habits results.jsonl more.jsonl analyses/ --player Ada --html ada.html

ANALYSES: the batch mode's output (`cirulla analyze ... --out FILE.jsonl`, a line
per game), single games' `cirulla analyze RECORD --json` files, or folders of
both (their *.jsonl and *.json, by name). The games count in the order read.

exit codes: 0 done, 1 some input was not an analysis (reported, skipped),
2 bad usage, 3 no game to count, 5 file not found"""


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Add the `habits` command to `cirulla`'s subparsers."""
    p = subparsers.add_parser(
        "habits", help="a player's habits over many analysed games",
        description="Per player, over many analysed games (in the order read): the accuracy of each\n"
                    "game and in all, errors per 100 unforced decisions by phase of the hand (first\n"
                    "round, middle, last two rounds), by kind (gave a scopa, missed a capture,\n"
                    "declaration, lost a race, over-captured, other) and by grade, and the most\n"
                    "frequent kind with its two costliest examples. In the terminal, and with\n"
                    "--html as a self-contained page.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("analyses", nargs="+", metavar="ANALYSES",
                   help="analysis files (.jsonl: a cirulla.v1.GameAnalysisLine per line; .json: a GameAnalysis) "
                        "or folders of them")
    p.add_argument("--html", metavar="FILE", help="also write the habits as a self-contained web page")
    p.add_argument("--player", action="append", metavar="NAME",
                   help="only this player (repeatable; default: every player)")
    add_lang_argument(p)
    p.set_defaults(run=run, json=False)     # `cirulla`'s error path reads args.json
    return p
