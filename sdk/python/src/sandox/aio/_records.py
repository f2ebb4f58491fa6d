"""What jobs and watches share: a tool call answered by one observation,
and reading a sandbox's records from their JetStream stream (the Go SDK's
sdk/streamread.go). Records are kept by the stream, so a reader needs no
answer from the sandbox and resumes after the last sequence it saw."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import nats.errors
import nats.js.errors
from nats.js import api

from ..errors import InternalError, NotFoundError, UnavailableError, from_wire

if TYPE_CHECKING:
    from nats.js.client import JetStreamContext

    from .sandbox import Sandbox


async def call_tool(sandbox: Sandbox, tool: str, args: dict[str, Any], timeout: float | None) -> Any:
    """Runs tool (family.name) as a one-action batch and returns the
    observation's return; an action error raises its exception."""
    obs = await sandbox.send_actions([{"tool": tool, "args": args}], timeout=timeout)
    name = tool.rsplit(".", 1)[-1]
    if len(obs) != 1:
        raise InternalError(f"{name}: {len(obs)} observations, want 1")
    o = obs[0]
    if o.error is not None:
        raise from_wire(o.error, f"sandbox {sandbox.id}: {name}")
    return o.return_


async def check_started(sandbox: Sandbox, stream: str, start_subject: str, what: str) -> None:
    """Raises NotFoundError when stream holds no start record on
    start_subject (what, e.g. "job j1", names it in the error)."""
    c = await sandbox.group._link()
    try:
        await c.js.get_last_msg(stream, start_subject)
    except nats.js.errors.NotFoundError as e:
        raise NotFoundError(f"{what} of sandbox {sandbox.id}") from e
    except (nats.errors.Error, asyncio.TimeoutError) as e:
        raise UnavailableError(f"{what}: {e}") from e


async def follow(sandbox: Sandbox, stream: str, subject: str, after: int, what: str) -> JetStreamContext.PushSubscription:
    """An ordered consumer of stream filtered on subject, from stream
    sequence after+1 (after 0: from the first record)."""
    c = await sandbox.group._link()
    cfg = api.ConsumerConfig()
    if after > 0:
        cfg.deliver_policy = api.DeliverPolicy.BY_START_SEQUENCE
        cfg.opt_start_seq = after + 1
    try:
        return await c.js.subscribe(subject, stream=stream, ordered_consumer=True, config=cfg)
    except (nats.errors.Error, asyncio.TimeoutError) as e:
        raise UnavailableError(f"read {what}: {e}") from e


async def unsubscribe(sub: JetStreamContext.PushSubscription) -> None:
    """Ends sub; a connection already gone has ended it."""
    try:
        await sub.unsubscribe()
    except nats.errors.Error:
        pass


InfoT = TypeVar("InfoT")


class RecordHandle(Generic[InfoT]):
    """What a job and a watch handle share: the sandbox, the id, the info
    start reported, and reading the records kept in their stream."""

    _stream: ClassVar[str]
    """The stream of the records (SANDOX_JOBS, SANDOX_WATCH)."""
    _what: ClassVar[str]
    """What errors call the handle: "job", "watch"."""
    _subject: ClassVar[Callable[[str, str, str], str]]
    """The subject of the records of a kind (job_subject, watch_subject)."""

    def __init__(self, sandbox: Sandbox, id: str, info: InfoT | None = None) -> None:
        self.sandbox = sandbox
        self.id = id
        self.info = info

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, sandbox={self.sandbox.id!r})"

    async def _check_exists(self) -> None:
        """Raises NotFoundError when the stream holds no start record."""
        await check_started(self.sandbox, self._stream, self._subject(self.sandbox.id, self.id, "start"), f"{self._what} {self.id}")

    async def _follow(self, kind: str, after: int) -> JetStreamContext.PushSubscription:
        """Follows the records of kind (">" for all) after stream sequence
        after (follow)."""
        subject = self._subject(self.sandbox.id, self.id, kind)
        return await follow(self.sandbox, self._stream, subject, after, f"{self._what} {self.id}")
