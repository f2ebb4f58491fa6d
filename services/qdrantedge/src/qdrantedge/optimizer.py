"""Background optimisation that never stalls serving.

qdrant_edge's EdgeShard.optimize() builds indexes and merges segments in
the calling thread while holding Python's GIL, so running it in the server
process would stop every RPC until it ends. The Optimizer instead, for a
collection that has been written to and is quiet:

1. flushes the live shard and copies its directory (writes wait only for
   the copy), and starts journaling the writes that follow;
2. runs `python -m qdrantedge.optimize <copy>` in a child process, while the
   server keeps serving reads and writes from the live shard;
3. takes the collection's lock, opens the optimised copy, replays the
   journal on it, and makes it live (Store.replace_shard).

A failed optimisation leaves the live shard as it was.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from .store import Collection, Store

log = logging.getLogger("qdrantedge.optimizer")


@dataclass
class OptimizerConfig:
    """OptimizerConfig says when a collection is optimised."""

    # interval between checks, in seconds.
    interval: float = 2.0
    # quiet is how long a collection must go without writes, in seconds.
    quiet: float = 2.0
    # min_points: smaller collections are searched well without indexes.
    min_points: int = 5000
    # timeout bounds one optimisation, in seconds.
    timeout: float = 1800.0


class Optimizer:
    """Optimizer runs in its own thread until stop() is called."""

    def __init__(self, store: Store, cfg: OptimizerConfig):
        self.store = store
        self.cfg = cfg
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="optimizer", daemon=True)
        self._last_writes: dict[str, tuple[int, float]] = {}

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.cfg.interval):
            for col in self.store.all():
                if self._stop.is_set():
                    return
                if self._due(col):
                    try:
                        self.optimize(col)
                    except Exception:  # noqa: BLE001 - the live shard is untouched
                        log.exception("optimise %s", col.name)

    def _due(self, col: Collection) -> bool:
        now = time.monotonic()
        writes = col.writes
        seen, since = self._last_writes.get(col.name, (-1, now))
        if writes != seen:
            self._last_writes[col.name] = (writes, now)
            return False
        if writes == 0 or now - since < self.cfg.quiet:
            return False
        return col.shard.info().points_count >= self.cfg.min_points

    def optimize(self, col: Collection) -> bool:
        """optimize optimises col on a copy and swaps it in; it blocks until
        done and reports whether the shard was replaced."""
        started = time.monotonic()
        with col.lock:
            if col.closed or col.journal is not None:
                return False
            gen = col.generation + 1
            src, dst = col.shard_dir(), col.shard_dir(gen)
            col.shard.flush()
            shutil.rmtree(dst, ignore_errors=True)
            copy_sparse(src, dst)
            log.info("optimise %s: copied in %.2fs", col.name, time.monotonic() - started)
            col.journal = []
            col.writes = 0
        try:
            subprocess.run(
                [sys.executable, "-m", "qdrantedge.optimize", dst],
                check=True, timeout=self.cfg.timeout, capture_output=True,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
            with col.lock:
                col.journal = None
            shutil.rmtree(dst, ignore_errors=True)
            stderr = getattr(err, "stderr", b"") or b""
            raise RuntimeError(f"optimise {col.name}: {err}: {stderr.decode(errors='replace')[-500:]}") from err
        log.info("optimise %s: child done at %.2fs", col.name, time.monotonic() - started)
        with col.lock:
            journal, col.journal = col.journal, None
            if col.closed:
                shutil.rmtree(dst, ignore_errors=True)
                return False

            def replay(shard):
                for op in journal:
                    shard.update(op)

            self.store.replace_shard(col, gen, replay)
        log.info("optimised %s in %.1fs, replayed %d writes", col.name, time.monotonic() - started, len(journal))
        return True


def copy_sparse(src: str, dst: str) -> None:
    """copy_sparse copies a shard directory keeping its files' holes: the
    WAL and mmap files are large and mostly unwritten, and a plain copy
    (shutil.copytree) writes every zero, taking seconds instead of
    milliseconds."""
    subprocess.run(["cp", "-a", "--sparse=always", "--reflink=auto", src, dst], check=True, capture_output=True)
