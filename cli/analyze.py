"""`cirulla analyze`: the analysis of a record in the terminal (with a
progress bar while it works), as JSON, or as a self-contained web page.

The terminal and the page are in the --lang language, the reasons explained
again in it from each decision's figures; the JSON carries the analysis as the
server sends it (its reasons in English)."""
from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from cirulla.solver import analysis, record
from cirulla.solver.analysis import Decision, Summary
from cirulla.solver.i18n import Translations, whole
from cirulla.solver.match import Match

from . import render, translator_for
from .remote import OK, CliError

if TYPE_CHECKING:
    from cirulla.v1 import analysis_service_pb2 as apb


def _local(match: Match, args: argparse.Namespace) -> Iterator[Decision | Summary]:
    return analysis.analyze(match, iterations=args.iterations or analysis.DEFAULT_ITERATIONS,
                            seed=args.seed, jobs=args.jobs)


def _remote(match: Match, args: argparse.Namespace) -> Iterator[Decision | Summary]:
    import grpc

    from cirulla.server.convert import decision_from_proto, summary_from_proto
    from cirulla.v1 import analysis_service_pb2 as apb

    from .remote import Remote, rpc_error
    with Remote.of(args) as remote:
        request = apb.AnalyzeGameRequest(record=record.to_proto(match), iterations=args.iterations or 0,
                                         threads=args.jobs, seed=args.seed)
        try:
            for reply in remote.analysis.AnalyzeGame(request, metadata=remote.metadata):
                if reply.WhichOneof("result") == "decision":
                    yield decision_from_proto(reply.decision, match.rules)
                else:
                    yield summary_from_proto(reply.summary)
        except grpc.RpcError as e:
            raise rpc_error(e, args.server) from None


def collect(match: Match, args: argparse.Namespace, console: Console) -> tuple[list[Decision], Summary]:
    """Run the analysis (local or remote) behind a progress bar."""
    stream = _remote(match, args) if args.server else _local(match, args)
    total = analysis.decision_count(match)
    decisions: list[Decision] = []
    summary = None
    _ = translator_for(args).gettext
    columns = (TextColumn(_("analysing")), BarColumn(), MofNCompleteColumn(), TextColumn(_("decisions")),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("analysis", total=total)
        for item in stream:
            if isinstance(item, Decision):
                decisions.append(item)
                bar.advance(task)
            else:
                summary = item
    if summary is None:
        raise CliError("the analysis ended without its summary")
    return decisions, summary


def run_analysis(match: Match, args: argparse.Namespace, console: Console) -> int:
    decisions, summary = collect(match, args, console)
    tr = translator_for(args)
    if args.html:
        from .report import html_report
        try:
            Path(args.html).write_text(html_report(match, decisions, summary, tr), encoding="utf-8")
        except OSError as e:
            raise CliError(f"cannot write {args.html}: {e.strerror}") from None
    if args.json:
        from .output import emit
        emit(game_analysis(decisions, summary))
    else:
        show(match, decisions, summary, console, every=args.all, tr=tr)
    if args.html:
        console.print(tr.gettext("Report written to %(file)s") % {"file": escape(args.html)}, soft_wrap=True)
    return OK


def game_analysis(decisions: list[Decision], summary: Summary) -> apb.GameAnalysis:
    """The analysis as one cirulla.v1.GameAnalysis (--json, and a line of the batch mode)."""
    from cirulla.server.convert import decision_to_proto, summary_to_proto
    from cirulla.v1 import analysis_service_pb2 as apb
    return apb.GameAnalysis(decisions=[decision_to_proto(d) for d in decisions], summary=summary_to_proto(summary))


def show(match: Match, decisions: list[Decision], summary: Summary, console: Console, *,
         every: bool = False, tr: Translations) -> None:
    _ = tr.gettext
    names = match.side_names
    score = " – ".join(f"{escape(n)} {s}" for n, s in zip(names, summary.scores, strict=False))
    result = (_("unfinished") if summary.winner is None
              else _("%(side)s won") % {"side": escape(names[summary.winner])})
    console.print(_("[bold]Analysis[/] of %(rules)s, %(players)s players: %(score)s (%(result)s). %(decisions)s "
                    "decisions, %(iterations)s iterations per search, %(seconds)s s.")
                  % {"rules": match.rules.name, "players": match.rules.players, "score": score, "result": result,
                     "decisions": summary.decisions, "iterations": whole(summary.iterations, tr),
                     "seconds": f"{summary.elapsed_ms / 1000:.1f}"})
    console.print(render.players_table(summary, tr))
    if summary.sides:
        console.print(render.sides_table(summary, tr))
        console.print(render.luck_table(summary, names, tr))
    console.print(render.decisions_table(decisions, match.names, only_errors=not every, tr=tr,
                                         matta=match.rules.matta_card))
    errors = [d for d in decisions if d.judgement]
    if errors:
        console.print(render.positions(errors, match.names, names, match.rules.matta_card, tr))
