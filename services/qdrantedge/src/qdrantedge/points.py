"""The qdrant.Points gRPC service on qdrant_edge shards."""

from __future__ import annotations

from typing import Any

import qdrant_edge as e
from qdrant_client.grpc import points_pb2 as ppb, points_service_pb2_grpc as pgrpc

from . import updates
from .convert import (
    Invalid,
    Unsupported,
    payload_out,
    point_id,
    point_id_out,
    vectors_out,
    with_payload,
    with_vectors,
)
from .errors import complete, rpc
from .filters import filter_in
from .groups import group_hits
from .query import order_by, query_parts, search_params
from .store import Collection, Store


def scored(p: Any) -> ppb.ScoredPoint:
    out = ppb.ScoredPoint(id=point_id_out(p.id), score=p.score, version=p.version)
    payload_out(p.payload, out.payload)
    v = vectors_out(p.vector)
    if v is not None:
        out.vectors.CopyFrom(v)
    if p.order_value is not None:
        _order_value(out, p.order_value)
    return out


def retrieved(r: Any) -> ppb.RetrievedPoint:
    out = ppb.RetrievedPoint(id=point_id_out(r.id))
    payload_out(r.payload, out.payload)
    v = vectors_out(r.vector)
    if v is not None:
        out.vectors.CopyFrom(v)
    if r.order_value is not None:
        _order_value(out, r.order_value)
    return out


def _order_value(out, value) -> None:
    if isinstance(value, int):
        out.order_value.int = value
    else:
        out.order_value.float = value


def _field(msg, name):
    return getattr(msg, name) if msg.HasField(name) else None


class Points(pgrpc.PointsServicer):
    """Points serves qdrant.Points for the collections in a Store."""

    def __init__(self, store: Store):
        self.store = store

    # ------------------------------------------------------------ writes

    def _update(self, name: str, ops: list) -> ppb.PointsOperationResponse:
        col = self.store.get(name)
        op_id = 0
        for op in ops:
            op_id = col.apply(op)
        return ppb.PointsOperationResponse(
            result=ppb.UpdateResult(operation_id=op_id, status=ppb.Completed)
        )

    @rpc
    def Upsert(self, req, ctx):
        return self._update(req.collection_name, updates.upsert(req))

    @rpc
    def Delete(self, req, ctx):
        if req.HasField("shard_key_selector"):
            raise Unsupported("shard keys are not supported by qdrant-edge")
        return self._update(req.collection_name, updates.delete(req.points))

    @rpc
    def SetPayload(self, req, ctx):
        return self._update(req.collection_name, updates.set_payload(req))

    @rpc
    def OverwritePayload(self, req, ctx):
        return self._update(req.collection_name, updates.set_payload(req, overwrite=True))

    @rpc
    def DeletePayload(self, req, ctx):
        return self._update(req.collection_name, updates.delete_payload(req))

    @rpc
    def ClearPayload(self, req, ctx):
        if req.HasField("shard_key_selector"):
            raise Unsupported("shard keys are not supported by qdrant-edge")
        return self._update(req.collection_name, updates.clear_payload(req.points))

    @rpc
    def UpdateVectors(self, req, ctx):
        return self._update(req.collection_name, updates.update_vectors(req))

    @rpc
    def DeleteVectors(self, req, ctx):
        return self._update(req.collection_name, updates.delete_vectors(req))

    @rpc
    def CreateFieldIndex(self, req, ctx):
        return self._update(req.collection_name, updates.create_field_index(req))

    @rpc
    def DeleteFieldIndex(self, req, ctx):
        return self._update(req.collection_name, updates.delete_field_index(req))

    @rpc
    def UpdateBatch(self, req, ctx):
        col = self.store.get(req.collection_name)
        # Convert every operation first, so a bad one applies none.
        batches = [updates.batch(op) for op in req.operations]
        resp = ppb.UpdateBatchResponse()
        for ops in batches:
            op_id = 0
            for op in ops:
                op_id = col.apply(op)
            resp.result.add(operation_id=op_id, status=ppb.Completed)
        return resp

    # ------------------------------------------------------------ reads

    @staticmethod
    def _lookup(col: Collection):
        def lookup(pid, using: str):
            recs = col.shard.retrieve([pid], with_payload=False, with_vector=[using] if using else True)
            if not recs:
                raise Invalid(f"No point with id {pid} found")
            vec = recs[0].vector
            if isinstance(vec, dict):
                if using not in vec:
                    raise Invalid(f"point {pid} has no vector {using!r}")
                return vec[using]
            return vec

        return lookup

    def _query(self, col: Collection, req, limit: int, offset: int, payload: Any, vectors: Any) -> list:
        parts = query_parts(req, self._lookup(col))
        return col.shard.query(e.QueryRequest(
            limit=limit, offset=offset, with_payload=payload, with_vector=vectors, **parts,
        ))

    @rpc
    def Query(self, req, ctx):
        col = self.store.get(req.collection_name)
        limit = req.limit if req.HasField("limit") else 10
        offset = req.offset if req.HasField("offset") else 0
        hits = self._query(
            col, req, limit, offset,
            with_payload(_field(req, "with_payload"), False), with_vectors(_field(req, "with_vectors")),
        )
        return ppb.QueryResponse(result=[scored(p) for p in hits])

    @rpc
    def QueryBatch(self, req, ctx):
        resp = ppb.QueryBatchResponse()
        for q in req.query_points:
            if not q.collection_name:
                q.collection_name = req.collection_name
            resp.result.add(result=self.Query.__wrapped__(self, q, ctx).result)
        return resp

    @rpc
    def QueryGroups(self, req, ctx):
        if req.HasField("with_lookup"):
            raise Unsupported("with_lookup is not supported by qdrant-edge")
        if not req.group_by:
            raise Invalid("group_by is required")
        col = self.store.get(req.collection_name)
        limit = req.limit if req.HasField("limit") else 3
        size = req.group_size if req.HasField("group_size") else 3
        vectors = with_vectors(_field(req, "with_vectors"))
        groups = group_hits(
            lambda n: self._query(col, req, n, 0, True, vectors),
            req.group_by, limit, size,
        )
        resp = ppb.QueryGroupsResponse()
        for gid, hits in groups:
            g = resp.result.groups.add()
            if isinstance(gid, str):
                g.id.string_value = gid
            elif gid >= 0:
                g.id.unsigned_value = gid
            else:
                g.id.integer_value = gid
            for h in hits:
                sp = scored(h)
                _select_payload(sp, _field(req, "with_payload"))
                g.hits.append(sp)
        return resp

    @rpc
    def Search(self, req, ctx):
        col = self.store.get(req.collection_name)
        if req.HasField("shard_key_selector"):
            raise Unsupported("shard keys are not supported by qdrant-edge")
        if req.HasField("sparse_indices"):
            vec: Any = e.SparseVector(list(req.sparse_indices.data), list(req.vector))
        else:
            vec = list(req.vector)
        using = req.vector_name if req.HasField("vector_name") else None
        hits = col.shard.query(e.QueryRequest(
            limit=req.limit,
            offset=req.offset if req.HasField("offset") else 0,
            query=e.Query.Nearest(vec, using=using or None),
            filter=filter_in(_field(req, "filter")),
            score_threshold=_field(req, "score_threshold"),
            params=search_params(_field(req, "params")),
            with_payload=with_payload(_field(req, "with_payload"), False),
            with_vector=with_vectors(_field(req, "with_vectors")),
        ))
        return ppb.SearchResponse(result=[scored(p) for p in hits])

    @rpc
    def Scroll(self, req, ctx):
        col = self.store.get(req.collection_name)
        if req.HasField("shard_key_selector"):
            raise Unsupported("shard keys are not supported by qdrant-edge")
        limit = req.limit if req.HasField("limit") else 10
        recs, nxt = col.shard.scroll(e.ScrollRequest(
            offset=point_id(req.offset) if req.HasField("offset") else None,
            limit=limit,
            filter=filter_in(_field(req, "filter")),
            with_payload=with_payload(_field(req, "with_payload"), True),
            with_vector=with_vectors(_field(req, "with_vectors")),
            order_by=order_by(req.order_by) if req.HasField("order_by") else None,
        ))
        resp = ppb.ScrollResponse(result=[retrieved(r) for r in recs])
        if nxt is not None:
            resp.next_page_offset.CopyFrom(point_id_out(nxt))
        return resp

    @rpc
    def Get(self, req, ctx):
        col = self.store.get(req.collection_name)
        recs = col.shard.retrieve(
            [point_id(i) for i in req.ids],
            with_payload=with_payload(_field(req, "with_payload"), True),
            with_vector=with_vectors(_field(req, "with_vectors")),
        )
        return ppb.GetResponse(result=[retrieved(r) for r in recs])

    @rpc
    def Count(self, req, ctx):
        col = self.store.get(req.collection_name)
        n = col.shard.count(e.CountRequest(
            exact=req.exact if req.HasField("exact") else True,
            filter=filter_in(_field(req, "filter")),
        ))
        return ppb.CountResponse(result=ppb.CountResult(count=n))

    @rpc
    def Facet(self, req, ctx):
        col = self.store.get(req.collection_name)
        resp = col.shard.facet(e.FacetRequest(
            req.key,
            limit=req.limit if req.HasField("limit") else 10,
            exact=req.exact if req.HasField("exact") else False,
            filter=filter_in(_field(req, "filter")),
        ))
        out = ppb.FacetResponse()
        for h in resp.hits:
            hit = out.hits.add(count=h.count)
            if isinstance(h.value, bool):
                hit.value.bool_value = h.value
            elif isinstance(h.value, int):
                hit.value.integer_value = h.value
            else:
                hit.value.string_value = str(h.value)
        return out


def _select_payload(sp: ppb.ScoredPoint, sel) -> None:
    """_select_payload trims a hit's payload (fetched whole for grouping) to
    what the selector sel (a WithPayloadSelector or None) asks for."""
    kind = sel.WhichOneof("selector_options") if sel is not None else None
    if kind is None or (kind == "enable" and not sel.enable):
        sp.ClearField("payload")
        return
    keys = set(sp.payload.keys())
    if kind == "include":
        drop = keys - set(sel.include.fields)
    elif kind == "exclude":
        drop = keys & set(sel.exclude.fields)
    else:
        drop = set()
    for k in drop:
        del sp.payload[k]


complete(Points, pgrpc.PointsServicer, "Points")
