"""File watches of a sandbox, asyncio-native (the Go SDK's sdk/watch.go
and sdk/watchevents.go; docs/watch.md).

    from sandox.aio.watch import start_watch

    w = await start_watch(sandbox, "src", patterns=["**/*.py"], id="py")
    last = 0
    async for ev in w.events():            # from the start
        last = ev.seq
        if ev.event is not None:
            print(ev.event.n, ev.event.kind, ev.event.path)
    async for ev in w.events(after=last):  # resume after a disconnect
        ...
    info = await w.stop()

Start, list and stop are actions (filesystem_tools.watch_*); events read the
SANDOX_WATCH stream, so they need no answer from the sandbox.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import Field, TypeAdapter, ValidationError

from ..errors import InternalError
from ..models import ReadModel
from ._records import RecordHandle, call_tool, unsubscribe

if TYPE_CHECKING:
    from .sandbox import Sandbox

WATCH_STREAM = "SANDOX_WATCH"
"""The stream that keeps every watch's records (schemas.WatchStream)."""


class WatchInfo(ReadModel):
    """WatchInfo (schemas.WatchInfo in Go)."""

    watch_id: str
    sandbox_id: str
    path: str
    patterns: list[str] | None = Field(default=None)
    recursive: bool
    started_at: datetime
    running: bool
    events: int
    stopped_at: datetime | None = Field(default=None)


class WatchChange(ReadModel):
    """WatchEvent (schemas.WatchEvent in Go): one change, numbered n from 1."""

    watch_id: str
    n: int
    kind: str
    """create, write, remove, rename, overflow or truncated."""
    path: str | None = Field(default=None)
    dir: bool | None = Field(default=None)
    time: datetime


_watch_list = TypeAdapter(list[WatchInfo])


def watch_subject(sandbox_id: str, watch_id: str, kind: str) -> str:
    """The subject of a watch's records of kind "start", "event" or "stop"
    (schemas.WatchSubject)."""
    return f"sandbox.{sandbox_id}.watch.{watch_id}.{kind}"


@dataclass
class WatchEvent:
    """One record of a watch: a change or, last, the stop."""

    seq: int
    """The record's sequence in SANDOX_WATCH: events(after=seq) resumes after it."""
    event: WatchChange | None = None
    stop: WatchInfo | None = None
    """The watch as it stopped; set on the last event only."""


async def _call(sandbox: Sandbox, tool: str, args: dict[str, Any], timeout: float | None) -> Any:
    """Runs filesystem_tools.<tool> (call_tool)."""
    return await call_tool(sandbox, "filesystem_tools." + tool, args, timeout)


async def start_watch(
    sandbox: Sandbox,
    path: str = ".",
    *,
    patterns: list[str] | None = None,
    recursive: bool = True,
    id: str | None = None,
    timeout: float | None = None,
) -> Watch:
    """Starts watching path (a directory inside the workspace) and returns
    once the watch runs and its start is recorded. A bad id, pattern or
    path raises BadRequestError, an id in use AlreadyExistsError, a sandbox
    at its limit of watches ResourceExhaustedError."""
    args: dict[str, Any] = {"path": path, "recursive": recursive}
    if patterns:
        args["patterns"] = patterns
    if id:
        args["watch_id"] = id
    ret = await _call(sandbox, "watch_start", args, timeout)
    try:
        info = WatchInfo.model_validate(ret)
    except ValidationError as e:
        raise InternalError(f"watch_start: {e}") from e
    return Watch(sandbox, info.watch_id, info)


async def list_watches(sandbox: Sandbox, timeout: float | None = None) -> list[WatchInfo]:
    """The sandbox's watches, running or stopped, newest first."""
    ret = await _call(sandbox, "watch_list", {}, timeout)
    return _watch_list.validate_python(ret or [])


class Watch(RecordHandle[WatchInfo]):
    """A file watch of a sandbox, started by this client or another."""

    _stream = WATCH_STREAM
    _what = "watch"
    _subject = staticmethod(watch_subject)

    info: WatchInfo | None
    """The watch as start_watch reported it, when this handle started it."""

    def __init__(self, sandbox: Sandbox, id: str, info: WatchInfo | None = None) -> None:
        super().__init__(sandbox, id, info)

    async def stop(self, timeout: float | None = None) -> WatchInfo:
        """Stops the watch; its stop record ends events()."""
        return WatchInfo.model_validate(await _call(self.sandbox, "watch_stop", {"watch_id": self.id}, timeout))

    async def events(self, after: int = 0) -> AsyncIterator[WatchEvent]:
        """Yields the watch's records after stream sequence after (0 for
        all), in order, ending with the stop; it follows a running watch.
        An event repeated by the sandbox is dropped by its number. A watch
        that never started raises NotFoundError."""
        await self._check_exists()
        sub = await self._follow(">", after)
        seen = 0
        try:
            while True:
                msg = await sub.next_msg(timeout=None)
                seq = msg.metadata.sequence.stream
                kind = msg.subject.rsplit(".", 1)[1]
                if kind == "stop":
                    yield WatchEvent(seq=seq, stop=WatchInfo.model_validate_json(msg.data))
                    return
                if kind != "event":
                    continue
                ev = WatchChange.model_validate_json(msg.data)
                if ev.n <= seen:
                    continue
                seen = ev.n
                yield WatchEvent(seq=seq, event=ev)
        finally:
            await unsubscribe(sub)


__all__ = ["WATCH_STREAM", "Watch", "WatchChange", "WatchEvent", "WatchInfo", "list_watches", "start_watch", "watch_subject"]
