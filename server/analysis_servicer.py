"""cirulla.v1.AnalysisService: post-game analysis of a record, streamed.

The analysis runs under the engine's limits: its threads take search slots
for the whole call (past the cap: RESOURCE_EXHAUSTED), its budget within the
caps, and the call's end (cancel, deadline) stops its searches at once.
This module also converts the analysis to and from its messages (the CLI's
--server mode reads them back).
"""
from __future__ import annotations

import dataclasses

from cirulla.solver import analysis, record
from cirulla.solver.analysis import DealLuck, Decision, PlayerSummary, Point, SideSummary, Summary
from cirulla.solver.errors import RecordError
from cirulla.solver.match import Match
from cirulla.solver.search import CancelToken
from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import analysis_service_pb2_grpc as apb_grpc

from . import convert
from .config import ServerConfig
from .errors import BadRequest, rpc

JUDGEMENTS = {None: apb.JUDGEMENT_GOOD, "inaccuracy": apb.JUDGEMENT_INACCURACY,
              "mistake": apb.JUDGEMENT_MISTAKE, "blunder": apb.JUDGEMENT_BLUNDER}
JUDGED_BY = {"points": apb.JUDGED_BY_POINTS, "win_chance": apb.JUDGED_BY_WIN_CHANCE}


class AnalysisServicer(apb_grpc.AnalysisServiceServicer):

    def __init__(self, config: ServerConfig, slots):
        self.config = config
        self.slots = slots              # the engine's: analyses and hints share the cores

    @rpc
    def AnalyzeGame(self, request, context):
        c = self.config
        problems = []
        if not 0 <= request.iterations <= c.max_iterations:
            problems.append(("iterations", f"{request.iterations} is out of range 0..{c.max_iterations}"))
        if not 0 <= request.threads <= c.max_threads:
            problems.append(("threads", f"{request.threads} is out of range 0..{c.max_threads}"))
        if problems:
            raise BadRequest(problems)
        match = _replay(request.record)
        threads = request.threads or min(analysis.DEFAULT_JOBS, c.max_threads)
        token = CancelToken()
        if not context.add_callback(token.cancel):      # the call has ended already
            token.cancel()
        total = analysis.decision_count(match)
        with self.slots.hold(threads):
            stream = analysis.analyze(match, iterations=request.iterations or analysis.DEFAULT_ITERATIONS,
                                      seed=request.seed, jobs=threads, cancel=token)
            try:
                done = 0
                for item in stream:
                    if isinstance(item, Decision):
                        done += 1
                        yield apb.AnalyzeGameResponse(decision=decision_to_proto(item), done=done, total=total)
                    else:
                        yield apb.AnalyzeGameResponse(summary=summary_to_proto(item), done=done, total=total)
            finally:
                stream.close()                  # the client left: stop the searches


def _replay(msg) -> Match:
    checked = convert.record_from_proto(msg)
    try:
        return record.from_proto(checked)
    except RecordError as e:
        field = "record.winner" if e.event is None else f"record.events[{e.event}]"
        raise BadRequest.one(field, str(e).removeprefix(f"event {e.event}: ")) from None


# --- conversion -------------------------------------------------------------------

def decision_to_proto(d: Decision) -> apb.DecisionAnalysis:
    msg = apb.DecisionAnalysis(
        number=d.number, event_index=d.event, hand=d.hand, round=d.round, seat=d.seat, side=d.side,
        legal_moves=d.legal, played=convert.move_to_proto(d.played), best=convert.move_to_proto(d.best),
        expected_points=d.expected, best_expected_points=d.best_expected, loss=d.loss,
        loss_stderr=d.loss_stderr, judged_by=JUDGED_BY[d.judged_by], severity=d.severity,
        severity_stderr=d.severity_stderr,
        judgement=apb.JUDGEMENT_FORCED if d.forced else JUDGEMENTS[d.judgement],
        hindsight_best=convert.move_to_proto(d.hindsight_best), hindsight_loss=d.hindsight_loss,
        unavoidable_loss=d.unavoidable, luck=d.luck or (), method=d.method, accuracy=d.accuracy)
    for name, value in (("win_chance", d.win), ("best_win_chance", d.best_win),
                        ("win_chance_loss", d.win_loss), ("value_before", d.value_before),
                        ("value_after", d.value_after)):
        if value is not None:
            setattr(msg, name, value)
    return msg


def summary_to_proto(s: Summary) -> apb.AnalysisSummary:
    msg = apb.AnalysisSummary(
        players=[apb.PlayerSummary(
            seat=p.seat, name=p.name, side=p.side, decisions=p.decisions, forced=p.forced,
            inaccuracies=p.inaccuracies, mistakes=p.mistakes, blunders=p.blunders, loss=p.loss,
            average_loss=p.avg_loss, accuracy=p.accuracy, hindsight_loss=p.hindsight_loss,
            unavoidable_loss=p.unavoidable) for p in s.players],
        sides=[apb.SideSummary(side=x.side, name=x.name, result=x.result, start=x.start, luck=x.luck,
                               play=x.play, rest=x.rest) for x in s.sides],
        deals=[apb.DealLuck(event_index=x.event, hand=x.hand, round=x.round, before=x.before,
                            after=x.after, luck=x.luck) for x in s.deals],
        timeline=[apb.TimelinePoint(event_index=p.event, kind=p.kind, hand=p.hand, margin=p.margin,
                                    decision=p.decision) for p in s.timeline],
        decisions=s.decisions, scores=s.scores, iterations=s.iterations, seed=s.seed,
        elapsed_ms=s.elapsed_ms)
    if s.winner is not None:
        msg.winner = s.winner
    if s.point_worth is not None:
        msg.point_worth = s.point_worth
    return msg


def _opt(msg, name):
    return getattr(msg, name) if msg.HasField(name) else None


def decision_from_proto(msg: apb.DecisionAnalysis, rules) -> Decision:
    judgement = {v: k for k, v in JUDGEMENTS.items()}.get(msg.judgement)
    def move(m):        # the text gives the move, the message its points
        return dataclasses.replace(convert.move_from_proto(m, rules, "decision"), points=m.points)
    return Decision(
        msg.number, msg.event_index, msg.hand, msg.round, msg.seat, msg.side, msg.legal_moves,
        move(msg.played), move(msg.best), msg.expected_points, msg.best_expected_points, msg.loss,
        msg.loss_stderr, _opt(msg, "win_chance"), _opt(msg, "best_win_chance"),
        _opt(msg, "win_chance_loss"), {v: k for k, v in JUDGED_BY.items()}.get(msg.judged_by, "points"),
        msg.severity, msg.severity_stderr, judgement, move(msg.hindsight_best), msg.hindsight_loss,
        msg.unavoidable_loss, _opt(msg, "value_before"), _opt(msg, "value_after"),
        tuple(msg.luck) or None, msg.method)


def summary_from_proto(msg: apb.AnalysisSummary) -> Summary:
    return Summary(
        players=tuple(PlayerSummary(p.seat, p.name, p.side, p.decisions, p.forced, p.inaccuracies,
                                    p.mistakes, p.blunders, p.loss, p.average_loss, p.accuracy,
                                    p.hindsight_loss, p.unavoidable_loss) for p in msg.players),
        sides=tuple(SideSummary(x.side, x.name, x.result, x.start, x.luck, x.play, x.rest)
                    for x in msg.sides),
        deals=tuple(DealLuck(x.event_index, x.hand, x.round, x.before, x.after) for x in msg.deals),
        timeline=tuple(Point(p.event_index, p.kind, p.hand, p.margin, _opt(p, "decision"))
                       for p in msg.timeline),
        decisions=msg.decisions, scores=tuple(msg.scores), winner=_opt(msg, "winner"),
        iterations=msg.iterations, seed=msg.seed, elapsed_ms=msg.elapsed_ms,
        point_worth=_opt(msg, "point_worth"))
