"""Conversion of the Query API (QueryPoints, prefetches, fusion) to qdrant_edge.

A query that names a point id as its vector ("nearest to point 7") needs
the shard to look that vector up, so the functions here take a lookup
callable: lookup(point_id, using) -> vector.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import qdrant_edge as e
from qdrant_client.grpc import points_pb2 as ppb

from .convert import Invalid, Unsupported, bm25, opt, point_id, sparse
from .filters import filter_in

# Qdrant's default k for Reciprocal Rank Fusion (Fusion.RRF).
RRF_K = 2

Lookup = Callable[[Any, str], Any]


def vector_input(v: ppb.VectorInput, using: str, lookup: Lookup) -> Any:
    kind = v.WhichOneof("variant")
    if kind == "dense":
        return list(v.dense.data)
    if kind == "sparse":
        return sparse(v.sparse.indices, v.sparse.values)
    if kind == "multi_dense":
        return [list(d.data) for d in v.multi_dense.vectors]
    if kind == "document":
        return bm25(v.document).embed_query(v.document.text)
    if kind == "id":
        return lookup(point_id(v.id), using)
    if kind in ("image", "object"):
        raise Unsupported(f"{kind} inference is not available in qdrant-edge")
    raise Invalid("query vector is empty")


def scoring_query(q: Optional[ppb.Query], using: str, lookup: Lookup) -> Any:
    """scoring_query converts Query into the scoring part of an edge request."""
    if q is None:
        return None
    kind = q.WhichOneof("variant")
    name = using or None
    if kind == "nearest":
        return e.Query.Nearest(vector_input(q.nearest, using, lookup), using=name)
    if kind == "fusion":
        if q.fusion == ppb.RRF:
            return e.Fusion.Rrf(k=RRF_K)
        return e.Fusion.Dbsf()
    if kind == "rrf":
        weights = list(q.rrf.weights) or None
        return e.Fusion.Rrf(k=q.rrf.k if q.rrf.HasField("k") else RRF_K, weights=weights)
    if kind == "order_by":
        return order_by(q.order_by)
    if kind == "sample":
        return e.Sample.Random
    if kind == "recommend":
        r = q.recommend
        if r.HasField("strategy") and r.strategy != ppb.AverageVector:
            rq = e.RecommendQuery(
                [vector_input(x, using, lookup) for x in r.positive],
                [vector_input(x, using, lookup) for x in r.negative],
            )
            if r.strategy == ppb.BestScore:
                return e.Query.RecommendBestScore(rq, using=name)
            return e.Query.RecommendSumScores(rq, using=name)
        raise Unsupported("recommend with the average_vector strategy is not supported by qdrant-edge")
    if kind == "nearest_with_mmr":
        m = q.nearest_with_mmr
        diversity = m.mmr.diversity if m.mmr.HasField("diversity") else 0.5
        candidates = m.mmr.candidates_limit if m.mmr.HasField("candidates_limit") else 100
        return e.Mmr(vector_input(m.nearest, using, lookup), 1.0 - diversity, candidates, using=name)
    raise Unsupported(f"query kind {kind!r} is not supported by qdrant-edge")


def order_by(o: ppb.OrderBy) -> e.OrderBy:
    start = None
    if o.HasField("start_from"):
        k = o.start_from.WhichOneof("value")
        if k in ("float", "integer", "datetime"):
            start = getattr(o.start_from, k)
        elif k == "timestamp":
            start = o.start_from.timestamp.ToJsonString()
    direction = None
    if o.HasField("direction"):
        direction = e.Direction.Desc if o.direction == ppb.Desc else e.Direction.Asc
    return e.OrderBy(o.key, direction=direction, start_from=start)


def search_params(p: Optional[ppb.SearchParams]) -> Optional[e.SearchParams]:
    if p is None:
        return None
    quant = None
    if p.HasField("quantization"):
        q = p.quantization
        quant = e.QuantizationSearchParams(
            ignore=q.ignore if q.HasField("ignore") else False,
            rescore=opt(q, "rescore"), oversampling=opt(q, "oversampling"),
        )
    return e.SearchParams(
        hnsw_ef=opt(p, "hnsw_ef"),
        exact=p.exact if p.HasField("exact") else False,
        indexed_only=p.indexed_only if p.HasField("indexed_only") else False,
        quantization=quant,
    )


def prefetch(p: ppb.PrefetchQuery, lookup: Lookup) -> e.Prefetch:
    if p.HasField("lookup_from"):
        raise Unsupported("lookup_from is not supported by qdrant-edge")
    return e.Prefetch(
        limit=p.limit if p.HasField("limit") else 10,
        query=scoring_query(p.query if p.HasField("query") else None, p.using, lookup),
        prefetches=[prefetch(x, lookup) for x in p.prefetch] or None,
        params=search_params(p.params if p.HasField("params") else None),
        filter=filter_in(p.filter if p.HasField("filter") else None),
        score_threshold=opt(p, "score_threshold"),
    )


def query_parts(req, lookup: Lookup) -> dict:
    """query_parts gives the QueryRequest arguments shared by QueryPoints and
    QueryPointGroups (everything but limit, offset and the selectors)."""
    if req.HasField("lookup_from"):
        raise Unsupported("lookup_from is not supported by qdrant-edge")
    if req.HasField("shard_key_selector"):
        raise Unsupported("shard keys are not supported by qdrant-edge")
    return {
        "query": scoring_query(req.query if req.HasField("query") else None, req.using, lookup),
        "prefetches": [prefetch(p, lookup) for p in req.prefetch] or None,
        "filter": filter_in(req.filter if req.HasField("filter") else None),
        "score_threshold": opt(req, "score_threshold"),
        "params": search_params(req.params if req.HasField("params") else None),
    }
