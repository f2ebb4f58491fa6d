"""Conversions between Qdrant's gRPC messages and qdrant_edge objects.

Every function here is pure: it takes a protobuf message (from the
qdrant-client package's generated modules) and returns the qdrant_edge
object, or the other way round. An input the service cannot honour raises
Unsupported (answered UNIMPLEMENTED) or Invalid (answered INVALID_ARGUMENT).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, Optional

import numpy as np
import qdrant_edge as e
from qdrant_client.grpc import (
    collections_pb2 as cpb,
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


# ---------------------------------------------------------------- filters


def _timestamp(ts) -> str:
    return ts.ToDatetime(tzinfo=dt.timezone.utc).isoformat()


def match_in(m: qpb.Match) -> Any:
    kind = m.WhichOneof("match_value")
    if kind == "keyword":
        return e.MatchValue(m.keyword)
    if kind == "integer":
        return e.MatchValue(m.integer)
    if kind == "boolean":
        # qdrant_edge reads a Python bool as an integer (bool is an int
        # subclass); numpy's bool is not, and is read as a bool.
        return e.MatchValue(np.bool_(m.boolean))
    if kind == "text":
        return e.MatchText(m.text)
    if kind == "text_any":
        return e.MatchTextAny(m.text_any)
    if kind == "phrase":
        return e.MatchPhrase(m.phrase)
    if kind == "keywords":
        return e.MatchAny(list(m.keywords.strings))
    if kind == "integers":
        return e.MatchAny(list(m.integers.integers))
    if kind == "except_keywords":
        return e.MatchExcept(list(m.except_keywords.strings))
    if kind == "except_integers":
        return e.MatchExcept(list(m.except_integers.integers))
    raise Invalid("match condition is empty")


def field_condition(fc: qpb.FieldCondition) -> e.FieldCondition:
    kw: dict = {}
    if fc.HasField("match"):
        kw["match"] = match_in(fc.match)
    if fc.HasField("range"):
        r = fc.range
        kw["range"] = e.RangeFloat(gte=opt(r, "gte"), gt=opt(r, "gt"), lte=opt(r, "lte"), lt=opt(r, "lt"))
    if fc.HasField("datetime_range"):
        r = fc.datetime_range
        kw["range"] = e.RangeDateTime(**{
            k: _timestamp(getattr(r, k)) for k in ("gte", "gt", "lte", "lt") if r.HasField(k)
        })
    if fc.HasField("values_count"):
        c = fc.values_count
        kw["values_count"] = e.ValuesCount(lt=opt(c, "lt"), gt=opt(c, "gt"), lte=opt(c, "lte"), gte=opt(c, "gte"))
    if fc.HasField("geo_radius"):
        g = fc.geo_radius
        kw["geo_radius"] = e.GeoRadius(e.GeoPoint(g.center.lon, g.center.lat), g.radius)
    if fc.HasField("geo_bounding_box"):
        g = fc.geo_bounding_box
        kw["geo_bounding_box"] = e.GeoBoundingBox(
            e.GeoPoint(g.top_left.lon, g.top_left.lat), e.GeoPoint(g.bottom_right.lon, g.bottom_right.lat)
        )
    if fc.HasField("geo_polygon"):
        raise Unsupported("geo_polygon conditions are not supported by qdrant-edge's gRPC service")
    if fc.HasField("is_empty"):
        kw["is_empty"] = fc.is_empty
    if fc.HasField("is_null"):
        kw["is_null"] = fc.is_null
    return e.FieldCondition(fc.key, **kw)


def condition_in(c: qpb.Condition) -> Any:
    kind = c.WhichOneof("condition_one_of")
    if kind == "field":
        return field_condition(c.field)
    if kind == "is_empty":
        return e.IsEmptyCondition(c.is_empty.key)
    if kind == "is_null":
        return e.IsNullCondition(c.is_null.key)
    if kind == "has_id":
        return e.HasIdCondition({point_id(i) for i in c.has_id.has_id})
    if kind == "has_vector":
        return e.HasVectorCondition(c.has_vector.has_vector)
    if kind == "nested":
        return e.NestedCondition(c.nested.key, filter_in(c.nested.filter))
    if kind == "filter":
        return filter_in(c.filter)
    raise Invalid("condition is empty")


def filter_in(f: Optional[qpb.Filter]) -> Optional[e.Filter]:
    if f is None:
        return None
    min_should = None
    if f.HasField("min_should"):
        min_should = e.MinShould([condition_in(c) for c in f.min_should.conditions], f.min_should.min_count)
    return e.Filter(
        must=[condition_in(c) for c in f.must] or None,
        should=[condition_in(c) for c in f.should] or None,
        must_not=[condition_in(c) for c in f.must_not] or None,
        min_should=min_should,
    )


def field(msg, name: str):
    """field returns the message field name of msg, or None when unset."""
    return getattr(msg, name) if msg.HasField(name) else None


# ---------------------------------------------------------------- collection config

DISTANCES = {
    cpb.Cosine: e.Distance.Cosine,
    cpb.Euclid: e.Distance.Euclid,
    cpb.Dot: e.Distance.Dot,
    cpb.Manhattan: e.Distance.Manhattan,
}

DATATYPES = {
    cpb.Float32: e.VectorStorageDatatype.Float32,
    cpb.Float16: e.VectorStorageDatatype.Float16,
    cpb.Uint8: e.VectorStorageDatatype.Uint8,
}


def vector_params(p: cpb.VectorParams) -> e.EdgeVectorParams:
    if p.distance not in DISTANCES:
        raise Invalid("vector params need a distance")
    if p.HasField("quantization_config"):
        raise Unsupported("quantization is not supported by qdrant-edge's gRPC service")
    kw: dict = {}
    if p.HasField("datatype"):
        if p.datatype not in DATATYPES:
            raise Unsupported(f"vector datatype {cpb.Datatype.Name(p.datatype)} is not supported")
        kw["datatype"] = DATATYPES[p.datatype]
    if p.HasField("multivector_config"):
        kw["multivector_config"] = e.MultiVectorConfig(e.MultiVectorComparator.MaxSim)
    if p.HasField("on_disk"):
        kw["on_disk"] = p.on_disk
    return e.EdgeVectorParams(size=p.size, distance=DISTANCES[p.distance], **kw)


def edge_config(req: cpb.CreateCollection) -> e.EdgeConfig:
    """edge_config maps a CreateCollection request onto an EdgeConfig."""
    if req.HasField("quantization_config"):
        raise Unsupported("quantization is not supported by qdrant-edge's gRPC service")
    vectors: Any = None
    vc = req.vectors_config
    kind = vc.WhichOneof("config") if req.HasField("vectors_config") else None
    if kind == "params":
        vectors = vector_params(vc.params)
    elif kind == "params_map":
        vectors = {name: vector_params(p) for name, p in vc.params_map.map.items()}
    sparse_vectors = None
    if req.HasField("sparse_vectors_config"):
        sparse_vectors = {}
        for name, p in req.sparse_vectors_config.map.items():
            kw: dict = {}
            if p.HasField("modifier") and p.modifier == cpb.Idf:
                kw["modifier"] = e.Modifier.Idf
            if p.HasField("index") and p.index.HasField("full_scan_threshold"):
                kw["full_scan_threshold"] = p.index.full_scan_threshold
            sparse_vectors[name] = e.EdgeSparseVectorParams(**kw)
    if vectors is None and not sparse_vectors:
        raise Invalid("a collection needs dense or sparse vectors")
    kw = {}
    if req.HasField("on_disk_payload"):
        kw["on_disk_payload"] = req.on_disk_payload
    if req.HasField("hnsw_config"):
        h = req.hnsw_config
        kw["hnsw_config"] = e.HnswIndexConfig(
            m=h.m if h.HasField("m") else 16,
            ef_construct=h.ef_construct if h.HasField("ef_construct") else 100,
            full_scan_threshold=h.full_scan_threshold if h.HasField("full_scan_threshold") else 10000,
            on_disk=opt(h, "on_disk"), payload_m=opt(h, "payload_m"),
        )
    if req.HasField("optimizers_config"):
        o = req.optimizers_config
        kw["optimizers"] = e.EdgeOptimizersConfig(
            deleted_threshold=opt(o, "deleted_threshold"),
            vacuum_min_vector_number=opt(o, "vacuum_min_vector_number"),
            default_segment_number=opt(o, "default_segment_number"),
            max_segment_size=opt(o, "max_segment_size"),
            indexing_threshold=opt(o, "indexing_threshold"),
        )
    return e.EdgeConfig(vectors=vectors, sparse_vectors=sparse_vectors, **kw)


FIELD_TYPES = {
    ppb.FieldTypeKeyword: e.PayloadSchemaType.Keyword,
    ppb.FieldTypeInteger: e.PayloadSchemaType.Integer,
    ppb.FieldTypeFloat: e.PayloadSchemaType.Float,
    ppb.FieldTypeGeo: e.PayloadSchemaType.Geo,
    ppb.FieldTypeText: e.PayloadSchemaType.Text,
    ppb.FieldTypeBool: e.PayloadSchemaType.Bool,
    ppb.FieldTypeDatetime: e.PayloadSchemaType.Datetime,
    ppb.FieldTypeUuid: e.PayloadSchemaType.Uuid,
}

SCHEMA_TYPES = {
    "Keyword": cpb.PayloadSchemaType.Keyword,
    "Integer": cpb.PayloadSchemaType.Integer,
    "Float": cpb.PayloadSchemaType.Float,
    "Geo": cpb.PayloadSchemaType.Geo,
    "Text": cpb.PayloadSchemaType.Text,
    "Bool": cpb.PayloadSchemaType.Bool,
    "Datetime": cpb.PayloadSchemaType.Datetime,
    "Uuid": cpb.PayloadSchemaType.Uuid,
}

TOKENIZERS = {
    cpb.Prefix: e.TokenizerType.Prefix,
    cpb.Whitespace: e.TokenizerType.Whitespace,
    cpb.Word: e.TokenizerType.Word,
    cpb.Multilingual: e.TokenizerType.Multilingual,
}


def index_schema(req: ppb.CreateFieldIndexCollection) -> Any:
    """index_schema gives the payload index type or parameters to create."""
    if not req.HasField("field_index_params"):
        if not req.HasField("field_type"):
            raise Invalid("a field index needs a field type")
        return FIELD_TYPES[req.field_type]
    p = req.field_index_params
    kind = p.WhichOneof("index_params")
    if kind == "keyword_index_params":
        k = p.keyword_index_params
        return e.KeywordIndexParams(is_tenant=opt(k, "is_tenant"), on_disk=opt(k, "on_disk"))
    if kind == "integer_index_params":
        k = p.integer_index_params
        return e.IntegerIndexParams(
            lookup=opt(k, "lookup"), range=opt(k, "range"), is_principal=opt(k, "is_principal"),
            on_disk=opt(k, "on_disk"),
        )
    if kind == "text_index_params":
        k = p.text_index_params
        tok = TOKENIZERS.get(k.tokenizer) if k.tokenizer else None
        return e.TextIndexParams(
            tokenizer=tok, min_token_len=opt(k, "min_token_len"), max_token_len=opt(k, "max_token_len"),
            lowercase=opt(k, "lowercase"), ascii_folding=opt(k, "ascii_folding"),
            phrase_matching=opt(k, "phrase_matching"), on_disk=opt(k, "on_disk"),
        )
    # Other parameter kinds carry only storage placement: index by type.
    by_kind = {
        "float_index_params": e.PayloadSchemaType.Float,
        "geo_index_params": e.PayloadSchemaType.Geo,
        "bool_index_params": e.PayloadSchemaType.Bool,
        "datetime_index_params": e.PayloadSchemaType.Datetime,
        "uuid_index_params": e.PayloadSchemaType.Uuid,
    }
    return by_kind[kind]
