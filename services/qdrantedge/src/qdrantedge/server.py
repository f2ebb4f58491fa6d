"""The gRPC server: options, services, signals."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from concurrent import futures
from dataclasses import dataclass
from typing import Callable

import grpc
from qdrant_client.grpc import (
    collections_service_pb2_grpc as cgrpc,
    points_service_pb2_grpc as pgrpc,
    qdrant_pb2_grpc as qgrpc,
    snapshots_service_pb2_grpc as sgrpc,
)

from .collections import Collections, Health
from .errors import complete
from .optimizer import Optimizer, OptimizerConfig
from .points import Points
from .store import Store

log = logging.getLogger("qdrantedge")

# Keepalive: the Go client pings every 10 s by default (and without calls in
# flight); a server that does not permit that answers GOAWAY too_many_pings.
SERVER_OPTIONS = [
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.http2.max_ping_strikes", 0),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
]


class Snapshots(sgrpc.SnapshotsServicer):
    """Snapshots answers every snapshot RPC with UNIMPLEMENTED."""


complete(Snapshots, sgrpc.SnapshotsServicer, "Snapshots")


@dataclass
class Service:
    """Service is a running server: its bound port, its store, and stop."""

    server: grpc.Server
    port: int
    store: Store
    stop: Callable[[], None]


def serve(data_dir: str, address: str, optimizer: OptimizerConfig, workers: int = 8) -> Service:
    """serve starts the server on address ("host:0" picks a free port)."""
    store = Store(data_dir)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers), options=SERVER_OPTIONS)
    qgrpc.add_QdrantServicer_to_server(Health(), server)
    cgrpc.add_CollectionsServicer_to_server(Collections(store), server)
    pgrpc.add_PointsServicer_to_server(Points(store), server)
    sgrpc.add_SnapshotsServicer_to_server(Snapshots(), server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise RuntimeError(f"cannot listen on {address}")
    opt = Optimizer(store, optimizer)
    server.start()
    opt.start()

    def stop() -> None:
        server.stop(grace=5).wait()
        opt.stop()
        store.close()

    return Service(server=server, port=port, store=store, stop=stop)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="qdrantedge", description="A Qdrant-compatible gRPC service on Qdrant Edge.")
    p.add_argument("--data", default=os.environ.get("QDRANT_EDGE_DATA", "/data"), help="data directory")
    p.add_argument("--listen", default=os.environ.get("QDRANT_EDGE_LISTEN", "0.0.0.0:6334"), help="gRPC address")
    p.add_argument("--optimize-min-points", type=int,
                   default=int(os.environ.get("QDRANT_EDGE_OPTIMIZE_MIN_POINTS", "5000")),
                   help="optimise (index) collections with at least this many points, in a child process")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    svc = serve(args.data, args.listen, OptimizerConfig(min_points=args.optimize_min_points))
    log.info("qdrant-edge serving gRPC on %s (port %d), data in %s", args.listen, svc.port, args.data)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    log.info("stopping")
    svc.stop()
    return 0
