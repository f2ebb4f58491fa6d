"""One sandbox of a group, asyncio-native (the Go SDK's sdk/sandbox.go)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Literal, overload

import nats.errors
from pydantic import TypeAdapter, ValidationError

from .. import actions as actionlib
from .. import subjects
from ..errors import InternalError, SandboxGoneError, UnavailableError
from ..models import CommandResult, Observation, SandboxStatus, SandboxUsage, ToolDescription
from .conn import new_command
from .future import Future

if TYPE_CHECKING:
    from .group import SandboxGroup

TOOLS_TIMEOUT = 10.0
"""Bounds a tool listing given no timeout."""

_tool_list = TypeAdapter(list[ToolDescription])


class Sandbox:
    """One sandbox of a group. Batches sent at once run one after another
    in the sandbox."""

    def __init__(self, group: SandboxGroup, id: str) -> None:
        self.group = group
        self.id = id
        self.status: SandboxStatus | None = None
        """The sandbox's state as last reported by the orchestrator."""

    def __repr__(self) -> str:
        state = self.status.state if self.status else "unknown"
        return f"Sandbox(id={self.id!r}, group={self.group.id!r}, state={state!r})"

    async def _lifecycle(self, kind: str, timeout: float | None) -> CommandResult:
        c = await self.group._link()
        res = await c.command(
            new_command(kind=kind, group_id=self.group.id, sandbox_id=self.id), timeout
        )
        if len(res.sandboxes or []) == 1:
            self.status = res.sandboxes[0]
        return res

    async def start(self, timeout: float | None = None) -> None:
        """Starts the sandbox and returns when its executor answers."""
        await self._lifecycle("start_sandbox", timeout)

    async def end(self, timeout: float | None = None) -> None:
        """Stops and removes the sandbox, its container and its workspace."""
        await self._lifecycle("end_sandbox", timeout)
        self.group._forget(self.id)

    async def pause(self, timeout: float | None = None) -> None:
        """Freezes the sandbox's processes and releases its CPU; its
        workspace, memory, jobs and terminal sessions are kept and go on
        after resume(). A batch sent while it is paused raises PausedError;
        one it had taken is answered after the resume. Pausing a paused
        sandbox is no error; one that is not running raises ConflictError
        (docs/pause.md)."""
        await self._lifecycle("pause_sandbox", timeout)

    async def resume(self, timeout: float | None = None) -> None:
        """Thaws a paused sandbox and returns when its executor takes
        batches again. ResourceExhaustedError when its CPU was given to
        other sandboxes meanwhile (it stays paused); ConflictError when it
        is not paused."""
        await self._lifecycle("resume_sandbox", timeout)

    async def refresh(self, timeout: float | None = None) -> SandboxStatus:
        """Asks the orchestrator for the sandbox's status. A sandbox that no
        longer exists raises NotFoundError; no orchestrator UnavailableError."""
        c = await self.group._link()
        self.status = await c.sandbox_status(self.id, timeout)
        return self.status

    async def stats(self, timeout: float | None = None) -> SandboxUsage:
        """Asks the orchestrator for the sandbox's live CPU, memory, disk and
        process use against its limits. A sandbox that is not running
        raises ConflictError, one that does not exist NotFoundError."""
        c = await self.group._link()
        reply = await c.request(subjects.sandbox_stats(self.id), timeout)
        if reply.stats is None:
            raise InternalError(f"sandbox {self.id}: stats answered without stats")
        if reply.sandbox is not None:
            self.status = reply.sandbox
        return reply.stats

    async def tools(self, timeout: float | None = None) -> list[ToolDescription]:
        """Returns the descriptions of the sandbox's tools (built-in and the
        user's), sorted by name, ready to hand to a model. A sandbox whose
        executor does not answer raises SandboxGoneError."""
        c = await self.group._link()
        try:
            msg = await c.nc.request(subjects.tools(self.id), b"", timeout=timeout or TOOLS_TIMEOUT)
        except nats.errors.NoRespondersError as e:
            raise SandboxGoneError(f"sandbox {self.id}: no executor serves {subjects.tools(self.id)}") from e
        except nats.errors.TimeoutError as e:
            raise SandboxGoneError(f"sandbox {self.id}: its tools were not listed in time") from e
        except nats.errors.Error as e:
            raise UnavailableError(f"sandbox {self.id}: tools: {e!r}") from e
        try:
            return _tool_list.validate_json(msg.data)
        except ValidationError as e:
            raise InternalError(f"decode tools of sandbox {self.id}: {e}") from e

    async def tools_as(self, format: str, timeout: float | None = None) -> list[dict]:
        """Returns the sandbox's tools in the function-calling format of a
        model API: "openai", "anthropic", "mcp" or "jsonschema"
        (docs/tool-formats.md)."""
        from ..toolformats import convert

        return convert(await self.tools(timeout), format)

    @overload
    async def send_actions(
        self, actions: actionlib.ActionsLike, async_: Literal[False] = False, *, stop_on_error: bool = ..., timeout: float | None = ...
    ) -> list[Observation]: ...

    @overload
    async def send_actions(
        self, actions: actionlib.ActionsLike, async_: Literal[True], *, stop_on_error: bool = ..., timeout: float | None = ...
    ) -> Future: ...

    async def send_actions(self, actions, async_=False, *, stop_on_error=False, timeout=None):
        """Sends a batch of actions to the sandbox.

        With async_=False (the default) it waits for the observations, one
        per action, in order, and returns them. With async_=True it returns
        at once, once the batch is sent, with a Future that collects them
        (its wait()). A failed action is an observation with error set, not
        an exception; exceptions are for a batch that was refused
        (BadRequestError), a sandbox that does not answer (SandboxGoneError,
        NotFoundError) or a deadline (TimeoutError). stop_on_error makes the
        sandbox skip the rest of the batch after the first failure.
        """
        payload = actionlib.encode(actionlib.to_list(actions))
        c = await self.group._link()
        f = Future(c, self.id, str(uuid.uuid4()), lambda fut: self.group._futures.discard(fut))
        await f._open(payload, stop_on_error)
        try:
            self.group._watch(f)
        except Exception:
            await f.close()
            raise
        if async_:
            return f
        try:
            return await f.wait(timeout)
        finally:
            await f.close()


__all__ = ["Sandbox"]
