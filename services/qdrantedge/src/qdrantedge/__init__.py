"""qdrantedge: a Qdrant-compatible gRPC service built on Qdrant Edge.

It serves the gRPC API that the qdrant-client package's generated modules
define (qdrant.Qdrant, qdrant.Collections, qdrant.Points, qdrant.Snapshots)
from qdrant_edge shards, one per collection. See docs/qdrant-edge.md.
"""
