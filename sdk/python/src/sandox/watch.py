"""File watches of a sandbox, synchronous (sandox.aio.watch on the SDK's
event loop; docs/watch.md).

    from sandox.watch import start_watch

    w = start_watch(sandbox, "src", patterns=["**/*.py"], id="py")
    last = 0
    for ev in w.events():             # from the start
        last = ev.seq
    for ev in w.events(after=last):   # resume after a disconnect
        ...
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from . import _loop
from ._handle import RecordHandle
from .aio import watch as aiowatch
from .aio.watch import WATCH_STREAM, WatchChange, WatchEvent, WatchInfo, watch_subject

if TYPE_CHECKING:
    from .sync import Sandbox


def start_watch(
    sandbox: Sandbox,
    path: str = ".",
    *,
    patterns: list[str] | None = None,
    recursive: bool = True,
    id: str | None = None,
    timeout: float | None = None,
) -> Watch:
    """Starts watching path and returns once the watch runs
    (aio.watch.start_watch)."""
    inner = _loop.run(
        aiowatch.start_watch(sandbox._inner, path, patterns=patterns, recursive=recursive, id=id, timeout=timeout)
    )
    return Watch(sandbox, inner.id, inner.info)


def list_watches(sandbox: Sandbox, timeout: float | None = None) -> list[WatchInfo]:
    """The sandbox's watches, running or stopped, newest first."""
    return _loop.run(aiowatch.list_watches(sandbox._inner, timeout))


class Watch(RecordHandle[aiowatch.Watch]):
    """A file watch of a sandbox (sandox.aio.watch.Watch, synchronous)."""

    def __init__(self, sandbox: Sandbox, id: str, info: WatchInfo | None = None) -> None:
        super().__init__(aiowatch.Watch(sandbox._inner, id, info))

    @property
    def info(self) -> WatchInfo | None:
        """The watch as start_watch reported it, when this handle started it."""
        return self._inner.info

    def events(self, after: int = 0) -> Iterator[WatchEvent]:
        """Yields the watch's records after stream sequence after, ending
        with the stop (aio.watch.Watch.events)."""
        yield from self._records(self._inner.events(after))

    def stop(self, timeout: float | None = None) -> WatchInfo:
        """Stops the watch; its stop record ends events()."""
        return _loop.run(self._inner.stop(timeout))


__all__ = ["WATCH_STREAM", "Watch", "WatchChange", "WatchEvent", "WatchInfo", "list_watches", "start_watch", "watch_subject"]
