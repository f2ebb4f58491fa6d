"""Mapping of the service's errors onto gRPC status codes, and the answer
for every RPC the service does not implement."""

from __future__ import annotations

import functools
import logging
import time

import grpc

from .convert import Invalid, Unsupported
from .store import Exists, NotFound

log = logging.getLogger("qdrantedge")

DOCS = "see docs/qdrant-edge.md in the sandox repository"


def status_of(err: Exception) -> grpc.StatusCode:
    if isinstance(err, NotFound):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(err, Exists):
        return grpc.StatusCode.ALREADY_EXISTS
    if isinstance(err, Unsupported):
        return grpc.StatusCode.UNIMPLEMENTED
    if isinstance(err, (Invalid, ValueError, TypeError)):
        return grpc.StatusCode.INVALID_ARGUMENT
    msg = str(err)
    if "not found" in msg.lower() or "no point with id" in msg.lower():
        return grpc.StatusCode.NOT_FOUND
    if "service internal error" in msg.lower():
        return grpc.StatusCode.INTERNAL
    # qdrant_edge raises plain Exceptions for bad input (wrong vector
    # name or dimension, missing index...), as Qdrant answers them.
    return grpc.StatusCode.INVALID_ARGUMENT


def rpc(method):
    """rpc wraps a servicer method: it maps exceptions to status codes and
    fills the response's time field."""

    @functools.wraps(method)
    def wrapper(self, request, context):
        start = time.perf_counter()
        try:
            resp = method(self, request, context)
        except Exception as err:  # noqa: BLE001 - every error becomes a status
            code = status_of(err)
            if code == grpc.StatusCode.INTERNAL:
                log.exception("%s", method.__name__)
            context.abort(code, str(err))
        if hasattr(resp, "time"):
            resp.time = time.perf_counter() - start
        return resp

    return wrapper


def unimplemented(service: str, name: str):
    def method(self, request, context):
        context.abort(
            grpc.StatusCode.UNIMPLEMENTED,
            f"{service}.{name} is not implemented by qdrant-edge, the Qdrant-compatible service built on "
            f"Qdrant Edge; use a Qdrant server for it ({DOCS})",
        )

    method.__name__ = name
    return method


def complete(cls, base, service: str):
    """complete gives cls an UNIMPLEMENTED answer with a clear message for
    every RPC of base it does not define."""
    for name, member in vars(base).items():
        if callable(member) and not name.startswith("_") and name not in vars(cls):
            setattr(cls, name, unimplemented(service, name))
    return cls
