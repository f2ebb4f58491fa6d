"""Store keeps the collections: one qdrant_edge shard per collection on disk.

Layout under the data directory:

    collections/<name>/collection.pb   the CreateCollection request, as sent
    collections/<name>/current         the name of the live shard directory
    collections/<name>/shard-<n>/      the qdrant_edge shard

A collection's shard is replaced whole when the background optimiser
(optimizer.py) hands back an optimised copy; "current" names the live one
and is replaced atomically, so a crash leaves either the old or the new.

Store is safe for concurrent use. Lock order: Store._lock, then
Collection.lock.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

import qdrant_edge as e
from qdrant_client.grpc import collections_pb2 as cpb

from .config import edge_config
from .convert import Invalid

NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,255}$")


class NotFound(Exception):
    """NotFound is raised for a collection that does not exist."""


class Exists(Exception):
    """Exists is raised when creating a collection that already exists."""


@dataclass
class Collection:
    """Collection is one open collection."""

    name: str
    path: str
    request: cpb.CreateCollection
    shard: e.EdgeShard
    generation: int
    # lock serialises writes and shard replacement; reads use the shard
    # reference they find (qdrant_edge holds the GIL during a call).
    lock: threading.RLock = field(default_factory=threading.RLock)
    operation_id: int = 0
    # writes counts updates since the last optimisation; journal records
    # them while an optimisation runs, to replay on the optimised copy.
    writes: int = 0
    journal: Optional[list] = None
    closed: bool = False

    def shard_dir(self, generation: Optional[int] = None) -> str:
        return os.path.join(self.path, f"shard-{self.generation if generation is None else generation}")

    def apply(self, op: e.UpdateOperation) -> int:
        """apply runs one update on the shard and returns its operation id."""
        with self.lock:
            if self.closed:
                raise NotFound(f"collection {self.name!r} was deleted")
            self.shard.update(op)
            self.operation_id += 1
            self.writes += 1
            if self.journal is not None:
                self.journal.append(op)
            return self.operation_id


class Store:
    """Store opens, creates and deletes collections under a data directory."""

    def __init__(self, data_dir: str):
        self.root = os.path.join(data_dir, "collections")
        os.makedirs(self.root, exist_ok=True)
        self._lock = threading.Lock()
        self._cols: dict[str, Collection] = {}
        for name in sorted(os.listdir(self.root)):
            if os.path.exists(os.path.join(self.root, name, "collection.pb")):
                self._cols[name] = self._open(name)

    def _open(self, name: str) -> Collection:
        path = os.path.join(self.root, name)
        req = cpb.CreateCollection()
        with open(os.path.join(path, "collection.pb"), "rb") as f:
            req.ParseFromString(f.read())
        with open(os.path.join(path, "current")) as f:
            gen = int(f.read().strip())
        shard = e.EdgeShard.load(os.path.join(path, f"shard-{gen}"))
        # Remove shard directories a crash left behind.
        for entry in os.listdir(path):
            if entry.startswith("shard-") and entry != f"shard-{gen}":
                shutil.rmtree(os.path.join(path, entry), ignore_errors=True)
        return Collection(name=name, path=path, request=req, shard=shard, generation=gen)

    def get(self, name: str) -> Collection:
        with self._lock:
            col = self._cols.get(name)
        if col is None:
            raise NotFound(f"Collection `{name}` doesn't exist!")
        return col

    def names(self) -> list[str]:
        with self._lock:
            return sorted(self._cols)

    def all(self) -> list[Collection]:
        with self._lock:
            return list(self._cols.values())

    def exists(self, name: str) -> bool:
        with self._lock:
            return name in self._cols

    def create(self, req: cpb.CreateCollection) -> Collection:
        name = req.collection_name
        if not NAME.match(name) or name in (".", ".."):
            raise Invalid(f"collection name {name!r} must be 1-255 of A-Z a-z 0-9 _ . -")
        config = edge_config(req)
        with self._lock:
            if name in self._cols:
                raise Exists(f"Collection `{name}` already exists!")
            path = os.path.join(self.root, name)
            shutil.rmtree(path, ignore_errors=True)
            os.makedirs(path)
            try:
                shard = e.EdgeShard.create(os.path.join(path, "shard-1"), config)
                write_atomic(os.path.join(path, "collection.pb"), req.SerializeToString())
                write_atomic(os.path.join(path, "current"), b"1")
            except Exception:
                shutil.rmtree(path, ignore_errors=True)
                raise
            col = Collection(name=name, path=path, request=req, shard=shard, generation=1)
            self._cols[name] = col
            return col

    def delete(self, name: str) -> bool:
        with self._lock:
            col = self._cols.pop(name, None)
        if col is None:
            return False
        with col.lock:
            col.closed = True
            col.shard.close()
            shutil.rmtree(col.path, ignore_errors=True)
        return True

    def replace_shard(self, col: Collection, generation: int, reopen: Callable[[e.EdgeShard], None]) -> None:
        """replace_shard makes shard-<generation> live for col; the caller holds col.lock.

        reopen runs on the new shard before it goes live (to replay writes).
        """
        shard = e.EdgeShard.load(col.shard_dir(generation))
        reopen(shard)
        shard.flush()
        write_atomic(os.path.join(col.path, "current"), str(generation).encode())
        old, old_dir = col.shard, col.shard_dir()
        col.shard, col.generation = shard, generation
        old.close()
        shutil.rmtree(old_dir, ignore_errors=True)

    def close(self) -> None:
        """close flushes and closes every shard."""
        for col in self.all():
            with col.lock:
                if not col.closed:
                    col.closed = True
                    col.shard.flush()
                    col.shard.close()


def write_atomic(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
