"""The qdrant.Collections and qdrant.Qdrant (health) gRPC services."""

from __future__ import annotations

from qdrant_client.grpc import (
    collections_pb2 as cpb,
    collections_service_pb2_grpc as cgrpc,
    qdrant_pb2 as qpb,
    qdrant_pb2_grpc as qgrpc,
)

from .config import SCHEMA_TYPES
from .errors import complete, rpc
from .store import Store

# API_VERSION is the Qdrant API this service speaks: the version of the
# qdrant-client package whose gRPC definitions it serves.
API_VERSION = "1.17.1"

# Qdrant's defaults, reported in CollectionInfo.config.
HNSW_DEFAULT = cpb.HnswConfigDiff(m=16, ef_construct=100, full_scan_threshold=10000)
OPTIMIZERS_DEFAULT = cpb.OptimizersConfigDiff(
    deleted_threshold=0.2, vacuum_min_vector_number=1000, default_segment_number=0,
    indexing_threshold=10000, flush_interval_sec=5,
)
WAL_DEFAULT = cpb.WalConfigDiff(wal_capacity_mb=32, wal_segments_ahead=0)


class Collections(cgrpc.CollectionsServicer):
    """Collections serves qdrant.Collections for a Store."""

    def __init__(self, store: Store):
        self.store = store

    @rpc
    def Create(self, req, ctx):
        self.store.create(req)
        return cpb.CollectionOperationResponse(result=True)

    @rpc
    def Delete(self, req, ctx):
        return cpb.CollectionOperationResponse(result=self.store.delete(req.collection_name))

    @rpc
    def List(self, req, ctx):
        return cpb.ListCollectionsResponse(
            collections=[cpb.CollectionDescription(name=n) for n in self.store.names()]
        )

    @rpc
    def CollectionExists(self, req, ctx):
        return cpb.CollectionExistsResponse(
            result=cpb.CollectionExists(exists=self.store.exists(req.collection_name))
        )

    @rpc
    def Get(self, req, ctx):
        col = self.store.get(req.collection_name)
        info = col.shard.info()
        r = col.request
        params = cpb.CollectionParams(shard_number=1, replication_factor=1, write_consistency_factor=1)
        if r.HasField("vectors_config"):
            params.vectors_config.CopyFrom(r.vectors_config)
        if r.HasField("sparse_vectors_config"):
            params.sparse_vectors_config.CopyFrom(r.sparse_vectors_config)
        params.on_disk_payload = r.on_disk_payload if r.HasField("on_disk_payload") else True
        config = cpb.CollectionConfig(
            params=params,
            hnsw_config=HNSW_DEFAULT,
            optimizer_config=OPTIMIZERS_DEFAULT,
            wal_config=WAL_DEFAULT,
        )
        config.hnsw_config.MergeFrom(r.hnsw_config)
        config.optimizer_config.MergeFrom(r.optimizers_config)
        config.wal_config.MergeFrom(r.wal_config)
        out = cpb.CollectionInfo(
            status=cpb.Green,
            optimizer_status=cpb.OptimizerStatus(ok=True),
            segments_count=info.segments_count,
            points_count=info.points_count,
            indexed_vectors_count=info.indexed_vectors_count,
            config=config,
        )
        for key, idx in info.payload_schema.items():
            out.payload_schema[key].CopyFrom(cpb.PayloadSchemaInfo(
                data_type=SCHEMA_TYPES.get(str(idx.data_type).rsplit(".", 1)[-1], cpb.PayloadSchemaType.UnknownType),
                points=idx.points,
            ))
        return cpb.GetCollectionInfoResponse(result=out)

    @rpc
    def ListAliases(self, req, ctx):
        return cpb.ListAliasesResponse()

    @rpc
    def ListCollectionAliases(self, req, ctx):
        self.store.get(req.collection_name)
        return cpb.ListAliasesResponse()


complete(Collections, cgrpc.CollectionsServicer, "Collections")


class Health(qgrpc.QdrantServicer):
    """Health answers qdrant.Qdrant/HealthCheck."""

    @rpc
    def HealthCheck(self, req, ctx):
        return qpb.HealthCheckReply(title="qdrant-edge (sandox)", version=API_VERSION, commit="")
