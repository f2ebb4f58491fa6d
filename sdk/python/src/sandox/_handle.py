"""What the synchronous handles share: each wraps the asyncio handle of
sandox.aio that does the work, shows as it and has its id; a job and a
watch also read their records, resumable by stream sequence, through a
synchronous iterator (sandox.jobs.Job.output, sandox.watch.Watch.events)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Generic, Protocol, TypeVar

from . import _loop

T = TypeVar("T")


class _HasID(Protocol):
    @property
    def id(self) -> str: ...


InnerT = TypeVar("InnerT", bound=_HasID)


class Handle(Generic[InnerT]):
    """A synchronous handle over the asyncio one inner, run on the SDK's
    event loop (sandox._loop)."""

    def __init__(self, inner: InnerT) -> None:
        self._inner = inner

    def __repr__(self) -> str:
        return repr(self._inner)

    @property
    def id(self) -> str:
        return self._inner.id


class RecordHandle(Handle[InnerT]):
    """A handle whose records are read from a stream (a job's output, a
    watch's events)."""

    @staticmethod
    def _records(agen: AsyncIterator[T]) -> Iterator[T]:
        """Yields what the async generator agen yields, each step run on
        the SDK's loop; closing the iterator (or leaving a for loop over
        it) closes agen, which ends its stream subscription."""
        try:
            while True:
                try:
                    yield _loop.run(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            aclose = getattr(agen, "aclose", None)
            if aclose is not None:
                _loop.run(aclose())
