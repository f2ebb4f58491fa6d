"""Conversion of collection and payload index settings to qdrant_edge."""

from __future__ import annotations

from typing import Any

import qdrant_edge as e
from qdrant_client.grpc import collections_pb2 as cpb, points_pb2 as ppb

from .convert import Invalid, Unsupported, opt


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
