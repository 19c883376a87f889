"""cirulla.v1.RulesService: the rules as a referee."""
from __future__ import annotations

from cirulla.solver import record
from cirulla.solver.errors import RecordError
from cirulla.v1 import rules_service_pb2 as rpb
from cirulla.v1 import rules_service_pb2_grpc as rpb_grpc

from . import convert
from .errors import rpc
from .positions import legal_moves


class RulesServicer(rpb_grpc.RulesServiceServicer):

    @rpc
    def ListLegalMoves(self, request, context):
        view = convert.view_from_proto(request.view)
        return rpb.ListLegalMovesResponse(moves=[convert.move_to_proto(m) for m in legal_moves(view)])

    @rpc
    def ReplayRecord(self, request, context):
        msg = convert.record_from_proto(request.record)
        try:
            match = record.from_proto(msg)
        except RecordError as e:
            # the header was checked above: what the replay rejects is an event,
            # or the winner the record names
            index = -1 if e.event is None else e.event
            field = "record.winner" if e.event is None else f"record.events[{index}]"
            reason = str(e).removeprefix(f"event {e.event}: ")
            return rpb.ReplayRecordResponse(
                illegal_event=rpb.IllegalEvent(index=index, field=field, reason=reason))
        return rpb.ReplayRecordResponse(state=convert.match_state_to_proto(match))
