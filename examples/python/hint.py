"""A move hint from the Cirulla engine over gRPC: a minimal Python client of
`cirulla.v1.EngineService.GetHint`.

    python hint.py [ADDRESS] [REQUEST_JSON]

ADDRESS defaults to 127.0.0.1:50051 and REQUEST_JSON to ../view.json (next to
this folder): a `cirulla.v1.GetHintRequest` in protobuf's JSON mapping
(camelCase field names, 64-bit integers as strings, enums by name). If
CIRULLA_TOKEN is set, the call carries `authorization: Bearer <token>`.

ADDRESS may name several replicas: `dns:///cirulla-server.NAMESPACE.svc:50051`
(a Kubernetes headless Service) or `ipv4:10.0.0.1:50051,10.0.0.2:50051`. The
channel uses the service config in ../service_config.json: calls spread
round_robin over the replicas, wait for one to be ready, and are retried on
another when one is going away (UNAVAILABLE) or busy (RESOURCE_EXHAUSTED,
after the delay the server asks for).

On success it prints one line per legal move, best first (the move, its
expected points ± standard error, the chance that the next player sweeps the
table), then `best: <move>`, and exits 0. On a failed call it prints
`error: <CODE>: <message>` to stderr, then the `google.rpc.Status` details
the server attached (`  <field>: <problem>` per bad field, `  retry after <n> s`),
and exits 1. Bad usage (too many arguments, a file that is not a
GetHintRequest) exits 2.

It needs only grpcio, grpcio-status and the generated `cirulla.v1` modules
(`pip install -e .` in the repository builds them; any protoc/grpc_tools run
on proto/ gives the same).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import grpc
from google.protobuf import json_format
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from cirulla.v1 import engine_service_pb2, engine_service_pb2_grpc

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_REQUEST = Path(__file__).resolve().parent.parent / "view.json"
SERVICE_CONFIG = Path(__file__).resolve().parent.parent / "service_config.json"
DEADLINE_S = 10.0
USAGE = "usage: python hint.py [ADDRESS] [REQUEST_JSON]"


class UsageError(Exception):
    pass


def read_request(file: str) -> engine_service_pb2.GetHintRequest:
    """The GetHintRequest in `file` (unknown field names are an error)."""
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {file}: {e}") from None
    try:
        request = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{file}: not valid JSON: {e}") from None
    if not isinstance(request, dict):
        raise UsageError(f"{file}: not a cirulla.v1.GetHintRequest (a JSON object)")
    try:
        return json_format.ParseDict(request, engine_service_pb2.GetHintRequest())
    except json_format.ParseError as e:
        raise UsageError(f"{file}: not a cirulla.v1.GetHintRequest: {e}") from None


def print_hint(hint) -> None:
    """One line per move, best first, then the recommended move."""
    for m in hint.moves:
        print(f"{m.move.text:16} {m.expected_points:+.2f} ± {m.expected_points_stderr:.2f}"
              f"  scopa risk {m.scopa_risk * 100:.0f}%")
    print(f"best: {hint.best.text}")


def detail_lines(error: grpc.RpcError) -> list[str]:
    """The lines the status details of a failed call add to its message."""
    status = rpc_status.from_call(error)     # None when the call carries no details
    lines = []
    for detail in status.details if status else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            lines += [f"  {v.field}: {v.description}" for v in bad.field_violations]
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            seconds = retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9
            lines.append(f"  retry after {seconds:.3f}".rstrip("0").rstrip(".") + " s")
    return lines


def main(args: list[str]) -> int:
    if len(args) > 2 or "-h" in args or "--help" in args:
        raise UsageError(USAGE)
    address = args[0] if args else DEFAULT_ADDRESS
    request = read_request(args[1] if len(args) > 1 else str(DEFAULT_REQUEST))

    token = os.environ.get("CIRULLA_TOKEN")
    metadata = [("authorization", f"Bearer {token}")] if token else []

    options = [("grpc.service_config", SERVICE_CONFIG.read_text(encoding="utf-8")), ("grpc.enable_retries", 1)]
    with grpc.insecure_channel(address, options=options) as channel:
        engine = engine_service_pb2_grpc.EngineServiceStub(channel)
        try:
            response = engine.GetHint(request, timeout=DEADLINE_S, metadata=metadata)
        except grpc.RpcError as e:
            print(f"error: {e.code().name}: {e.details()}", file=sys.stderr)
            for line in detail_lines(e):
                print(line, file=sys.stderr)
            return 1
    print_hint(response.hint)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
