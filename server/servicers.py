"""The gRPC servicers of cirulla.v1: each RPC hands its request and its
context (the call: deadline, end) to the Service, and `rpc` (`rpc_stream`
for a stream) turns what it raises into a status."""
from __future__ import annotations

from collections.abc import Iterator

import grpc

from cirulla.v1 import analysis_service_pb2 as apb
from cirulla.v1 import analysis_service_pb2_grpc as apb_grpc
from cirulla.v1 import engine_service_pb2 as epb
from cirulla.v1 import engine_service_pb2_grpc as epb_grpc
from cirulla.v1 import rules_service_pb2 as rpb
from cirulla.v1 import rules_service_pb2_grpc as rpb_grpc

from .errors import rpc, rpc_stream
from .service import Service


class EngineServicer(epb_grpc.EngineServiceServicer):
    """Move hints for a seat and moves for AI opponents."""

    def __init__(self, service: Service):
        self.service = service

    @rpc
    def GetHint(self, request: epb.GetHintRequest, context: grpc.ServicerContext) -> epb.GetHintResponse:
        return self.service.get_hint(request, context)

    @rpc_stream
    def StreamHint(self, request: epb.StreamHintRequest,
                   context: grpc.ServicerContext) -> Iterator[epb.StreamHintResponse]:
        yield from self.service.stream_hint(request, context)

    @rpc
    def ChooseMove(self, request: epb.ChooseMoveRequest, context: grpc.ServicerContext) -> epb.ChooseMoveResponse:
        return self.service.choose_move(request, context)

    @rpc
    def GetEngineInfo(self, request: epb.GetEngineInfoRequest,
                      context: grpc.ServicerContext) -> epb.GetEngineInfoResponse:
        return self.service.get_engine_info(request, context)


class RulesServicer(rpb_grpc.RulesServiceServicer):
    """The rules as a referee."""

    def __init__(self, service: Service):
        self.service = service

    @rpc
    def ListLegalMoves(self, request: rpb.ListLegalMovesRequest,
                       context: grpc.ServicerContext) -> rpb.ListLegalMovesResponse:
        return self.service.list_legal_moves(request, context)

    @rpc
    def ReplayRecord(self, request: rpb.ReplayRecordRequest,
                     context: grpc.ServicerContext) -> rpb.ReplayRecordResponse:
        return self.service.replay_record(request, context)


class AnalysisServicer(apb_grpc.AnalysisServiceServicer):
    """Post-game analysis, streamed decision by decision."""

    def __init__(self, service: Service):
        self.service = service

    @rpc_stream
    def AnalyzeGame(self, request: apb.AnalyzeGameRequest,
                    context: grpc.ServicerContext) -> Iterator[apb.AnalyzeGameResponse]:
        yield from self.service.analyze_game(request, context)
