"""python -m qdrantedge.healthcheck [ADDRESS]: exit 0 when the service answers HealthCheck."""

import sys

import grpc
from qdrant_client.grpc import qdrant_pb2, qdrant_pb2_grpc


def main(argv: list[str]) -> int:
    address = argv[1] if len(argv) > 1 else "127.0.0.1:6334"
    try:
        with grpc.insecure_channel(address) as ch:
            reply = qdrant_pb2_grpc.QdrantStub(ch).HealthCheck(qdrant_pb2.HealthCheckRequest(), timeout=3)
    except grpc.RpcError as err:
        print(f"unhealthy: {err.code().name}: {err.details()}", file=sys.stderr)
        return 1
    print(f"{reply.title} {reply.version}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
