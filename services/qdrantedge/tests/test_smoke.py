"""Smoke tests: the service in-process, driven through the gRPC stubs that
qdrant-client ships. Run: python -m unittest discover -s tests (with src on
PYTHONPATH), or `uv run python -m unittest discover -s tests`."""

import tempfile
import threading
import time
import unittest
import uuid

import grpc
from qdrant_client.grpc import (
    collections_pb2 as cpb,
    collections_service_pb2_grpc as cgrpc,
    json_with_int_pb2 as jpb,
    points_pb2 as ppb,
    points_service_pb2_grpc as pgrpc,
    qdrant_common_pb2 as qpb,
    qdrant_pb2,
    qdrant_pb2_grpc,
    snapshots_service_pb2 as spb,
    snapshots_service_pb2_grpc as sgrpc,
)

from qdrantedge.optimizer import OptimizerConfig
from qdrantedge.server import serve

DOCS = [
    "the quick brown fox jumps over the lazy dog",
    "a lazy afternoon by the river",
    "zanzibar is an island off the coast of tanzania",
    "brown bread and butter",
]


def kw(s):
    return qpb.Condition(field=qpb.FieldCondition(key="kind", match=qpb.Match(keyword=s)))


class ServiceTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.start()

    def start(self):
        svc = serve(self.dir.name, "127.0.0.1:0", OptimizerConfig(min_points=10**9))
        self.stop = svc.stop
        self.ch = grpc.insecure_channel(f"127.0.0.1:{svc.port}")
        self.cols = cgrpc.CollectionsStub(self.ch)
        self.pts = pgrpc.PointsStub(self.ch)

    def tearDown(self):
        self.ch.close()
        self.stop()
        self.dir.cleanup()

    def create(self, name="docs"):
        self.cols.Create(cpb.CreateCollection(
            collection_name=name,
            vectors_config=cpb.VectorsConfig(params_map=cpb.VectorParamsMap(map={
                "dense": cpb.VectorParams(size=4, distance=cpb.Cosine)})),
            sparse_vectors_config=cpb.SparseVectorConfig(map={"bm25": cpb.SparseVectorParams(modifier=cpb.Idf)}),
        ))
        points = []
        for i, text in enumerate(DOCS):
            p = ppb.PointStruct(id=qpb.PointId(num=i + 1))
            p.vectors.vectors.vectors["dense"].dense.data.extend([1.0, float(i), 0.5, 0.1])
            p.vectors.vectors.vectors["bm25"].document.text = text
            p.vectors.vectors.vectors["bm25"].document.model = "qdrant/bm25"
            p.payload["text"].string_value = text
            p.payload["kind"].string_value = "even" if i % 2 == 0 else "odd"
            p.payload["n"].integer_value = i
            p.payload["flag"].bool_value = i % 2 == 0
            points.append(p)
        self.pts.Upsert(ppb.UpsertPoints(collection_name=name, wait=True, points=points))

    def test_health_and_collections(self):
        reply = qdrant_pb2_grpc.QdrantStub(self.ch).HealthCheck(qdrant_pb2.HealthCheckRequest())
        self.assertEqual(reply.version, "1.17.1")
        self.create()
        names = [c.name for c in self.cols.List(cpb.ListCollectionsRequest()).collections]
        self.assertEqual(names, ["docs"])
        info = self.cols.Get(cpb.GetCollectionInfoRequest(collection_name="docs")).result
        self.assertEqual(info.points_count, 4)
        self.assertEqual(info.config.params.vectors_config.params_map.map["dense"].size, 4)
        with self.assertRaises(grpc.RpcError) as err:
            self.create()
        self.assertEqual(err.exception.code(), grpc.StatusCode.ALREADY_EXISTS)
        self.assertTrue(self.cols.Delete(cpb.DeleteCollection(collection_name="docs")).result)
        self.assertFalse(self.cols.CollectionExists(cpb.CollectionExistsRequest(collection_name="docs")).result.exists)
        with self.assertRaises(grpc.RpcError) as err:
            self.pts.Count(ppb.CountPoints(collection_name="docs"))
        self.assertEqual(err.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_hybrid_query_ranks_distinctive_term_first(self):
        self.create()
        q = ppb.QueryPoints(collection_name="docs", limit=3, with_payload=ppb.WithPayloadSelector(enable=True))
        dense = q.prefetch.add(using="dense", limit=10)
        dense.query.nearest.dense.data.extend([1.0, 0.0, 0.5, 0.1])  # closest to point 1
        sparse = q.prefetch.add(using="bm25", limit=10)
        sparse.query.nearest.document.text = "zanzibar"
        sparse.query.nearest.document.model = "qdrant/bm25"
        q.query.fusion = ppb.RRF
        res = self.pts.Query(q).result
        self.assertIn(res[0].id.num, (1, 3))
        self.assertIn(3, [p.id.num for p in res])
        # BM25 only: the distinctive term's document alone.
        only = ppb.QueryPoints(collection_name="docs", limit=3, using="bm25")
        only.query.nearest.document.text = "zanzibar island"
        only.query.nearest.document.model = "qdrant/bm25"
        res = self.pts.Query(only).result
        self.assertEqual([p.id.num for p in res], [3])

    def test_filters_count_scroll(self):
        self.create()
        cases = [
            ("keyword", qpb.Filter(must=[kw("even")]), 2),
            ("bool", qpb.Filter(must=[qpb.Condition(field=qpb.FieldCondition(key="flag", match=qpb.Match(boolean=True)))]), 2),
            ("range", qpb.Filter(must=[qpb.Condition(field=qpb.FieldCondition(key="n", range=qpb.Range(gte=1, lt=3)))]), 2),
            ("must_not", qpb.Filter(must_not=[kw("even")]), 2),
            ("has_id", qpb.Filter(must=[qpb.Condition(has_id=qpb.HasIdCondition(has_id=[qpb.PointId(num=2)]))]), 1),
        ]
        for name, flt, want in cases:
            with self.subTest(name):
                got = self.pts.Count(ppb.CountPoints(collection_name="docs", filter=flt, exact=True)).result.count
                self.assertEqual(got, want)
        seen, offset = [], None
        while True:
            req = ppb.ScrollPoints(collection_name="docs", limit=3)
            if offset is not None:
                req.offset.CopyFrom(offset)
            resp = self.pts.Scroll(req)
            seen += [p.id.num for p in resp.result]
            if not resp.HasField("next_page_offset"):
                break
            offset = resp.next_page_offset
        self.assertEqual(seen, [1, 2, 3, 4])

    def test_payload_edits_delete_index_facet_groups(self):
        self.create()
        sel = ppb.PointsSelector(points=ppb.PointsIdsList(ids=[qpb.PointId(num=1)]))
        self.pts.SetPayload(ppb.SetPayloadPoints(collection_name="docs", points_selector=sel,
                                                 payload={"extra": jpb.Value(string_value="x")}))
        got = self.pts.Get(ppb.GetPoints(collection_name="docs", ids=[qpb.PointId(num=1)])).result[0]
        self.assertEqual(got.payload["extra"].string_value, "x")
        self.pts.DeletePayload(ppb.DeletePayloadPoints(collection_name="docs", points_selector=sel, keys=["extra"]))
        self.pts.OverwritePayload(ppb.SetPayloadPoints(collection_name="docs", points_selector=sel,
                                                       payload={"kind": jpb.Value(string_value="odd")}))
        got = self.pts.Get(ppb.GetPoints(collection_name="docs", ids=[qpb.PointId(num=1)])).result[0]
        self.assertEqual(dict(got.payload).keys(), {"kind"})
        self.pts.CreateFieldIndex(ppb.CreateFieldIndexCollection(collection_name="docs", field_name="kind",
                                                                 field_type=ppb.FieldTypeKeyword))
        info = self.cols.Get(cpb.GetCollectionInfoRequest(collection_name="docs")).result
        self.assertEqual(info.payload_schema["kind"].data_type, cpb.PayloadSchemaType.Keyword)
        hits = self.pts.Facet(ppb.FacetCounts(collection_name="docs", key="kind", exact=True)).hits
        self.assertEqual({h.value.string_value: h.count for h in hits}, {"odd": 3, "even": 1})
        q = ppb.QueryPointGroups(collection_name="docs", group_by="kind", limit=2, group_size=2, using="dense")
        q.query.nearest.dense.data.extend([1.0, 0.0, 0.5, 0.1])
        groups = self.pts.QueryGroups(q).result.groups
        self.assertEqual(sorted(g.id.string_value for g in groups), ["even", "odd"])
        self.assertTrue(all(len(g.hits) <= 2 for g in groups))
        self.pts.Delete(ppb.DeletePoints(collection_name="docs", points=ppb.PointsSelector(filter=qpb.Filter(must=[kw("odd")]))))
        self.assertEqual(self.pts.Count(ppb.CountPoints(collection_name="docs")).result.count, 1)
        self.pts.ClearPayload(ppb.ClearPayloadPoints(collection_name="docs", points=ppb.PointsSelector(
            points=ppb.PointsIdsList(ids=[qpb.PointId(num=3)]))))
        got = self.pts.Get(ppb.GetPoints(collection_name="docs", ids=[qpb.PointId(num=3)])).result[0]
        self.assertEqual(len(got.payload), 0)

    def test_unimplemented_is_clear(self):
        with self.assertRaises(grpc.RpcError) as err:
            sgrpc.SnapshotsStub(self.ch).List(spb.ListSnapshotsRequest(collection_name="docs"))
        self.assertEqual(err.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        self.assertIn("qdrant-edge", err.exception.details())

    def test_persistence_across_restart(self):
        self.create()
        u = str(uuid.uuid4())
        p = ppb.PointStruct(id=qpb.PointId(uuid=u))
        p.vectors.vectors.vectors["dense"].dense.data.extend([0.0, 1.0, 0.0, 0.0])
        self.pts.Upsert(ppb.UpsertPoints(collection_name="docs", points=[p], wait=True))
        self.ch.close()
        self.stop()
        self.start()
        self.assertEqual(self.pts.Count(ppb.CountPoints(collection_name="docs")).result.count, 5)
        got = self.pts.Get(ppb.GetPoints(collection_name="docs", ids=[qpb.PointId(uuid=u)])).result
        self.assertEqual(got[0].id.uuid, u)


class OptimizerTest(unittest.TestCase):
    """Optimising runs in a child process on a copy: reads and writes go on
    meanwhile, and the writes made during it survive the swap."""

    def test_optimise_while_serving(self):
        from qdrantedge.optimizer import Optimizer

        with tempfile.TemporaryDirectory() as d:
            svc = serve(d, "127.0.0.1:0", OptimizerConfig(min_points=10**9))
            ch = grpc.insecure_channel(f"127.0.0.1:{svc.port}")
            cols, pts = cgrpc.CollectionsStub(ch), pgrpc.PointsStub(ch)
            try:
                cols.Create(cpb.CreateCollection(
                    collection_name="big",
                    vectors_config=cpb.VectorsConfig(params=cpb.VectorParams(size=16, distance=cpb.Dot)),
                    # A low threshold (KB) so that optimising builds an HNSW index.
                    optimizers_config=cpb.OptimizersConfigDiff(indexing_threshold=100),
                ))
                import random
                rnd = random.Random(1)
                for batch in range(6):
                    points = []
                    for i in range(1000):
                        p = ppb.PointStruct(id=qpb.PointId(num=batch * 1000 + i))
                        p.vectors.vector.dense.data.extend([rnd.random() for _ in range(16)])
                        points.append(p)
                    pts.Upsert(ppb.UpsertPoints(collection_name="big", points=points, wait=True))
                store = svc.store
                col = store.get("big")
                opt = Optimizer(store, OptimizerConfig())
                result = {}
                t = threading.Thread(target=lambda: result.setdefault("ok", opt.optimize(col)))
                t.start()
                served, slowest = 0, 0.0
                while t.is_alive():
                    start = time.perf_counter()
                    q = ppb.QueryPoints(collection_name="big", limit=5)
                    q.query.nearest.dense.data.extend([0.5] * 16)
                    self.assertEqual(len(pts.Query(q).result), 5)
                    p = ppb.PointStruct(id=qpb.PointId(num=100_000 + served))
                    p.vectors.vector.dense.data.extend([0.1] * 16)
                    pts.Upsert(ppb.UpsertPoints(collection_name="big", points=[p], wait=True))
                    slowest = max(slowest, time.perf_counter() - start)
                    served += 1
                t.join()
                self.assertTrue(result["ok"])
                self.assertGreaterEqual(col.shard.info().indexed_vectors_count, 6000)
                self.assertGreater(served, 0)
                count = pts.Count(ppb.CountPoints(collection_name="big", exact=True)).result.count
                self.assertEqual(count, 6000 + served)
                print(f"optimise: served {served} query+upsert pairs meanwhile, slowest {slowest*1000:.0f} ms, "
                      f"indexed {col.shard.info().indexed_vectors_count}")
            finally:
                ch.close()
                svc.stop()


if __name__ == "__main__":
    unittest.main()
