"""The gRPC servicers of cirulla.v1: each RPC hands its request and its
context (the call: deadline, end) to the Service, and `rpc` turns what it
raises into a status."""
from __future__ import annotations

from cirulla.v1 import analysis_service_pb2_grpc as apb_grpc
from cirulla.v1 import engine_service_pb2_grpc as epb_grpc
from cirulla.v1 import rules_service_pb2_grpc as rpb_grpc

from .errors import rpc
from .service import Service


class EngineServicer(epb_grpc.EngineServiceServicer):
    """Move hints for a seat and moves for AI opponents."""

    def __init__(self, service: Service):
        self.service = service

    @rpc
    def GetHint(self, request, context):
        return self.service.get_hint(request, context)

    @rpc
    def StreamHint(self, request, context):
        yield from self.service.stream_hint(request, context)

    @rpc
    def ChooseMove(self, request, context):
        return self.service.choose_move(request, context)

    @rpc
    def GetEngineInfo(self, request, context):
        return self.service.get_engine_info(request, context)


class RulesServicer(rpb_grpc.RulesServiceServicer):
    """The rules as a referee."""

    def __init__(self, service: Service):
        self.service = service

    @rpc
    def ListLegalMoves(self, request, context):
        return self.service.list_legal_moves(request, context)

    @rpc
    def ReplayRecord(self, request, context):
        return self.service.replay_record(request, context)


class AnalysisServicer(apb_grpc.AnalysisServiceServicer):
    """Post-game analysis, streamed decision by decision."""

    def __init__(self, service: Service):
        self.service = service

    @rpc
    def AnalyzeGame(self, request, context):
        yield from self.service.analyze_game(request, context)
