"""Conversion of Qdrant's point update requests into qdrant_edge UpdateOperations.

Each function takes a request message and returns the list of operations
to apply, in order. PointsUpdateOperation (UpdateBatch) reuses them.
"""

from __future__ import annotations

from typing import Any

import qdrant_edge as e
from qdrant_client.grpc import points_pb2 as ppb

from .convert import (
    Invalid,
    Unsupported,
    edge_vector,
    point_id,
    struct_in,
    vectors_in,
)
from .config import index_schema
from .filters import filter_in

UPDATE_MODES = {
    ppb.Upsert: e.UpdateMode.Upsert,
    ppb.InsertOnly: e.UpdateMode.InsertOnly,
    ppb.UpdateOnly: e.UpdateMode.UpdateOnly,
}


def selector(sel: ppb.PointsSelector) -> tuple[str, Any]:
    """selector returns ("ids", [ids]) or ("filter", Filter)."""
    kind = sel.WhichOneof("points_selector_one_of")
    if kind == "points":
        return "ids", [point_id(i) for i in sel.points.ids]
    if kind == "filter":
        return "filter", filter_in(sel.filter)
    raise Invalid("points selector is empty")


def _no_shard_key(req) -> None:
    if req.HasField("shard_key_selector"):
        raise Unsupported("shard keys are not supported by qdrant-edge")


def upsert(req) -> list:
    _no_shard_key(req)
    points = []
    for p in req.points:
        points.append(e.Point(point_id(p.id), edge_vector(vectors_in(p.vectors)), struct_in(p.payload) or None))
    kw: dict = {}
    if req.HasField("update_filter"):
        kw["condition"] = filter_in(req.update_filter)
    if req.HasField("update_mode"):
        kw["update_mode"] = UPDATE_MODES[req.update_mode]
    return [e.UpdateOperation.upsert_points(points, **kw)]


def delete(sel: ppb.PointsSelector) -> list:
    kind, what = selector(sel)
    if kind == "ids":
        return [e.UpdateOperation.delete_points(what)]
    return [e.UpdateOperation.delete_points_by_filter(what)]


def set_payload(req, overwrite: bool = False) -> list:
    _no_shard_key(req)
    if not req.HasField("points_selector"):
        raise Invalid("set payload needs a points selector")
    kind, what = selector(req.points_selector)
    payload = struct_in(req.payload)
    key = req.key if req.HasField("key") else None
    name = "overwrite_payload" if overwrite else "set_payload"
    if kind == "filter":
        name += "_by_filter"
    return [getattr(e.UpdateOperation, name)(what, payload, key=key)]


def delete_payload(req) -> list:
    _no_shard_key(req)
    if not req.HasField("points_selector"):
        raise Invalid("delete payload needs a points selector")
    kind, what = selector(req.points_selector)
    if kind == "ids":
        return [e.UpdateOperation.delete_payload(what, list(req.keys))]
    return [e.UpdateOperation.delete_payload_by_filter(what, list(req.keys))]


def clear_payload(sel: ppb.PointsSelector) -> list:
    kind, what = selector(sel)
    if kind == "ids":
        return [e.UpdateOperation.clear_payload(what)]
    return [e.UpdateOperation.clear_payload_by_filter(what)]


def update_vectors(req) -> list:
    _no_shard_key(req)
    pvs = [e.PointVectors(point_id(p.id), edge_vector(vectors_in(p.vectors))) for p in req.points]
    cond = filter_in(req.update_filter) if req.HasField("update_filter") else None
    return [e.UpdateOperation.update_vectors(pvs, condition=cond)]


def delete_vectors(req) -> list:
    _no_shard_key(req)
    kind, what = selector(req.points_selector)
    names = list(req.vectors.names)
    if kind == "ids":
        return [e.UpdateOperation.delete_vectors(what, names)]
    return [e.UpdateOperation.delete_vectors_by_filter(what, names)]


def create_field_index(req) -> list:
    return [e.UpdateOperation.create_field_index(req.field_name, index_schema(req))]


def delete_field_index(req) -> list:
    return [e.UpdateOperation.delete_field_index(req.field_name)]


def batch(op: ppb.PointsUpdateOperation) -> list:
    """batch converts one operation of an UpdateBatch request."""
    kind = op.WhichOneof("operation")
    inner = getattr(op, kind) if kind else None
    if kind == "upsert":
        return upsert(inner)
    if kind == "delete_points":
        _no_shard_key(inner)
        return delete(inner.points)
    if kind == "delete_deprecated":
        return delete(inner)
    if kind == "set_payload":
        return set_payload(inner)
    if kind == "overwrite_payload":
        return set_payload(inner, overwrite=True)
    if kind == "delete_payload":
        return delete_payload(inner)
    if kind == "clear_payload":
        _no_shard_key(inner)
        return clear_payload(inner.points)
    if kind == "clear_payload_deprecated":
        return clear_payload(inner)
    if kind == "update_vectors":
        return update_vectors(inner)
    if kind == "delete_vectors":
        return delete_vectors(inner)
    raise Invalid("update operation is empty")
