"""A health probe for containers without a gRPC probe of their own (Docker's
HEALTHCHECK): asks grpc.health.v1 at ADDRESS and exits 0 if SERVING.

    python -m cirulla.server.probe [ADDRESS] [--service NAME] [--timeout SECONDS]

Prints the status (or why there is none); exit 0 SERVING, 1 anything else
(NOT_SERVING, unknown service, no answer), 2 bad usage. Kubernetes needs none
of this: its probes speak grpc.health.v1 (deploy/k8s/deployment.yaml).
"""
from __future__ import annotations

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cirulla.server.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument("address", nargs="?", default="127.0.0.1:50051", help="HOST:PORT (default: %(default)s)")
    parser.add_argument("--service", default="", help="the service to ask about (default: the server as a whole)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds (default: %(default)s)")
    args = parser.parse_args(argv)
    with grpc.insecure_channel(args.address) as channel:
        try:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=args.service), timeout=args.timeout)
        except grpc.RpcError as e:
            print(f"{args.address}: {e.code().name}: {e.details()}", file=sys.stderr)
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
    print(f"{args.address}: {status}")
    return 0 if answer.status == health_pb2.HealthCheckResponse.SERVING else 1


if __name__ == "__main__":
    sys.exit(main())
