"""Conversions between Qdrant's gRPC messages and qdrant_edge objects.

Every function here is pure: it takes a protobuf message (from the
qdrant-client package's generated modules) and returns the qdrant_edge
object, or the other way round. An input the service cannot honour raises
Unsupported (answered UNIMPLEMENTED) or Invalid (answered INVALID_ARGUMENT).
"""

from __future__ import annotations

import uuid
from typing import Any, Optional

import qdrant_edge as e
from qdrant_client.grpc import (
    json_with_int_pb2 as jpb,
    points_pb2 as ppb,
    qdrant_common_pb2 as qpb,
)

BM25_MODEL = "qdrant/bm25"


class Unsupported(Exception):
    """Unsupported marks a request feature Qdrant has and this service lacks."""


class Invalid(Exception):
    """Invalid marks a malformed request."""


# ---------------------------------------------------------------- point ids


def point_id(pid: qpb.PointId) -> Any:
    kind = pid.WhichOneof("point_id_options")
    if kind == "num":
        return pid.num
    if kind == "uuid":
        try:
            return uuid.UUID(pid.uuid)
        except ValueError as err:
            raise Invalid(f"point id {pid.uuid!r} is not a UUID") from err
    raise Invalid("point id is empty")


def point_id_out(pid: Any) -> qpb.PointId:
    if isinstance(pid, int):
        return qpb.PointId(num=pid)
    return qpb.PointId(uuid=str(pid))


# ---------------------------------------------------------------- payload values


def value_in(v: jpb.Value) -> Any:
    kind = v.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "struct_value":
        return struct_in(v.struct_value.fields)
    if kind == "list_value":
        return [value_in(x) for x in v.list_value.values]
    return getattr(v, kind)


def struct_in(fields) -> dict:
    return {k: value_in(v) for k, v in fields.items()}


def value_out(x: Any) -> jpb.Value:
    if x is None:
        return jpb.Value(null_value=jpb.NULL_VALUE)
    if isinstance(x, bool):
        return jpb.Value(bool_value=x)
    if isinstance(x, int):
        return jpb.Value(integer_value=x)
    if isinstance(x, float):
        return jpb.Value(double_value=x)
    if isinstance(x, str):
        return jpb.Value(string_value=x)
    if isinstance(x, dict):
        s = jpb.Struct()
        for k, val in x.items():
            s.fields[k].CopyFrom(value_out(val))
        return jpb.Value(struct_value=s)
    if isinstance(x, (list, tuple)):
        return jpb.Value(list_value=jpb.ListValue(values=[value_out(i) for i in x]))
    return jpb.Value(string_value=str(x))


def payload_out(payload: Optional[dict], target) -> None:
    """payload_out copies payload into a protobuf map field."""
    for k, v in (payload or {}).items():
        target[k].CopyFrom(value_out(v))


# ---------------------------------------------------------------- vectors


def bm25(doc: ppb.Document) -> e.Bm25:
    """bm25 returns the BM25 model a Document names, with its options."""
    if doc.model.lower() != BM25_MODEL:
        raise Unsupported(
            f"inference model {doc.model!r} is not available: qdrant-edge embeds only {BM25_MODEL!r}"
        )
    opts = struct_in(doc.options)
    known = {"k", "b", "avg_len", "language", "lowercase", "ascii_folding", "min_token_len", "max_token_len"}
    unknown = set(opts) - known
    if unknown:
        raise Unsupported(f"bm25 options {sorted(unknown)} are not supported by qdrant-edge")
    try:
        return e.Bm25(e.Bm25Config(**opts) if opts else None)
    except (ValueError, TypeError) as err:
        raise Invalid(f"bm25 options: {err}") from err


def sparse(indices, values) -> e.SparseVector:
    if len(indices) != len(values):
        raise Invalid(f"sparse vector has {len(indices)} indices and {len(values)} values")
    return e.SparseVector(indices=list(indices), values=list(values))


def vector_in(v: ppb.Vector, document: bool = True) -> Any:
    """vector_in converts one stored vector (PointStruct side).

    A Document is embedded as a document (term frequencies) when document
    is true, as a query otherwise.
    """
    kind = v.WhichOneof("vector")
    if kind == "dense":
        return list(v.dense.data)
    if kind == "sparse":
        return sparse(v.sparse.indices, v.sparse.values)
    if kind == "multi_dense":
        return [list(d.data) for d in v.multi_dense.vectors]
    if kind == "document":
        model = bm25(v.document)
        return model.embed_document(v.document.text) if document else model.embed_query(v.document.text)
    if kind in ("image", "object"):
        raise Unsupported(f"{kind} inference is not available in qdrant-edge")
    # The deprecated flat fields.
    if v.HasField("indices"):
        return sparse(v.indices.data, v.data)
    if v.vectors_count > 1:
        n = v.vectors_count
        size = len(v.data) // n
        return [list(v.data[i * size:(i + 1) * size]) for i in range(n)]
    return list(v.data)


def vectors_in(vs: ppb.Vectors) -> Any:
    kind = vs.WhichOneof("vectors_options")
    if kind == "vector":
        return {"": vector_in(vs.vector)}
    if kind == "vectors":
        return {name: vector_in(v) for name, v in vs.vectors.vectors.items()}
    return {}


def vector_out(x: Any) -> ppb.VectorOutput:
    if isinstance(x, e.SparseVector):
        return ppb.VectorOutput(sparse=ppb.SparseVector(indices=list(x.indices), values=list(x.values)))
    if x and isinstance(x[0], (list, tuple)):
        return ppb.VectorOutput(multi_dense=ppb.MultiDenseVector(vectors=[ppb.DenseVector(data=d) for d in x]))
    return ppb.VectorOutput(dense=ppb.DenseVector(data=list(x)))


def vectors_out(vec: Any) -> Optional[ppb.VectorsOutput]:
    if vec is None:
        return None
    if not isinstance(vec, dict):
        return ppb.VectorsOutput(vector=vector_out(vec))
    if set(vec) == {""}:
        return ppb.VectorsOutput(vector=vector_out(vec[""]))
    out = ppb.VectorsOutput()
    for name, v in vec.items():
        out.vectors.vectors[name].CopyFrom(vector_out(v))
    return out


def edge_vector(vec: dict) -> Any:
    """edge_vector gives qdrant_edge a point's vectors: a bare vector for the
    unnamed one, a dict for named ones."""
    if set(vec) == {""}:
        return vec[""]
    return vec


# ---------------------------------------------------------------- selectors


def with_payload(sel: Optional[ppb.WithPayloadSelector], default: bool) -> Any:
    if sel is None:
        return default
    kind = sel.WhichOneof("selector_options")
    if kind == "enable":
        return sel.enable
    if kind == "include":
        return e.PayloadSelector.Include(list(sel.include.fields))
    if kind == "exclude":
        return e.PayloadSelector.Exclude(list(sel.exclude.fields))
    return default


def with_vectors(sel: Optional[ppb.WithVectorsSelector]) -> Any:
    if sel is None:
        return False
    kind = sel.WhichOneof("selector_options")
    if kind == "enable":
        return sel.enable
    if kind == "include":
        return list(sel.include.names)
    return False


def opt(msg, field: str):
    """opt returns msg.field when it is set, else None."""
    return getattr(msg, field) if msg.HasField(field) else None
