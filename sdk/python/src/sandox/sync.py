"""The synchronous API: the spec's calls as written, on the asyncio client
(sandox.aio) run by an event loop thread of the SDK's own."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
from collections.abc import Generator, Sequence
from typing import Any, Literal, overload

from nats.aio.client import Client

from . import _loop, aio, config
from ._handle import Handle
from .actions import ActionsLike
from .aio.conn import ACTION_TIMEOUT, COMMAND_TIMEOUT, CONNECT_TIMEOUT
from .models import GroupStatus, Observation, PoolSpec, SandboxStatus, SandboxUsage, ToolDescription


class ActionFuture:
    """The pending answer to a batch sent with send_actions(async_=True).

    The batch is already on its way when send_actions returns. Collect the
    observations later with result() (blocking), or, in async code, with
    `await future.async_result()`. Awaiting the future itself
    (`future = await sandbox.send_actions(actions, async_=True)`) only waits
    until the batch is sent and returns the future: it does not wait for the
    observations.
    """

    def __init__(self, sending: concurrent.futures.Future[aio.Future]) -> None:
        self._sending = sending

    def __await__(self) -> Generator[Any, None, ActionFuture]:
        yield from asyncio.wrap_future(self._sending).__await__()
        return self

    def _future(self) -> aio.Future:
        return self._sending.result()

    @property
    def batch_id(self) -> str:
        """Identifies the batch (sandox.obs.<sandbox>.<batch id>)."""
        return self._future().batch_id

    def result(self, timeout: float | None = None) -> list[Observation]:
        """Blocks until the observations arrive and returns them; raises as
        aio.Future.wait does (SandboxGoneError, NotFoundError,
        TimeoutError after timeout seconds or the group's action timeout,
        ClosedError after close)."""
        return _loop.run(self._future().wait(timeout))

    async def async_result(self, timeout: float | None = None) -> list[Observation]:
        """result() for async code: awaits the observations without blocking
        the caller's event loop."""
        await asyncio.wrap_future(self._sending)
        return await asyncio.wrap_future(_loop.submit(self._future().wait(timeout)))

    def poll(self) -> tuple[list[Observation], bool]:
        """Returns (observations, done) without waiting for the answer."""
        return _loop.run(self._future().poll())

    def done(self) -> bool:
        """Reports whether the future is settled."""
        return self._sending.done() and (self._sending.exception() is not None or self._future().done())

    def close(self) -> None:
        """Gives the future up; the batch still runs in the sandbox."""
        _loop.run(self._future().close())


class Sandbox(Handle[aio.Sandbox]):
    """One sandbox of a group (sandox.aio.Sandbox, synchronous)."""

    @property
    def status(self) -> SandboxStatus | None:
        """The sandbox's state as last reported by the orchestrator."""
        return self._inner.status

    def start(self, timeout: float | None = None) -> None:
        """Starts the sandbox and returns when its executor answers."""
        _loop.run(self._inner.start(timeout))

    def end(self, timeout: float | None = None) -> None:
        """Stops and removes the sandbox, its container and its workspace."""
        _loop.run(self._inner.end(timeout))

    def pause(self, timeout: float | None = None) -> None:
        """Freezes the sandbox's processes and releases its CPU
        (sandox.aio.Sandbox.pause)."""
        _loop.run(self._inner.pause(timeout))

    def resume(self, timeout: float | None = None) -> None:
        """Thaws a paused sandbox (sandox.aio.Sandbox.resume)."""
        _loop.run(self._inner.resume(timeout))

    def refresh(self, timeout: float | None = None) -> SandboxStatus:
        """Asks the orchestrator for the sandbox's status."""
        return _loop.run(self._inner.refresh(timeout))

    def stats(self, timeout: float | None = None) -> SandboxUsage:
        """Asks for the sandbox's live CPU, memory, disk and process use."""
        return _loop.run(self._inner.stats(timeout))

    def tools(self, format: str | None = None, timeout: float | None = None) -> list[Any]:
        """Returns the sandbox's tools: ToolDescription models, or, with
        format ("openai", "anthropic", "mcp", "jsonschema"), the JSON list
        that model API expects (docs/tool-formats.md)."""
        if format is None:
            return _loop.run(self._inner.tools(timeout))
        return _loop.run(self._inner.tools_as(format, timeout))

    @overload
    def send_actions(
        self, actions: ActionsLike, async_: Literal[False] = False, *, stop_on_error: bool = ..., timeout: float | None = ...
    ) -> list[Observation]: ...

    @overload
    def send_actions(
        self, actions: ActionsLike, async_: Literal[True], *, stop_on_error: bool = ..., timeout: float | None = ...
    ) -> ActionFuture: ...

    def send_actions(self, actions, async_=False, *, stop_on_error=False, timeout=None):
        """Sends a batch of actions.

        send_actions(actions) waits for the observations (one per action, in
        order) and returns them. send_actions(actions, async_=True) returns
        at once with an ActionFuture; `await` it in async code to make sure
        the batch was sent, and collect the observations later with its
        result(). See sandox.aio.Sandbox.send_actions for the errors.
        """
        if async_:
            return ActionFuture(_loop.submit(self._inner.send_actions(actions, True, stop_on_error=stop_on_error)))
        return _loop.run(self._inner.send_actions(actions, False, stop_on_error=stop_on_error, timeout=timeout))


class SandboxGroup:
    """A group of sandboxes (sandox.aio.SandboxGroup, synchronous): the
    defaults of its members and the sandboxes to start with it. The
    arguments are aio.SandboxGroup's."""

    def __init__(
        self,
        database_access: config.AccessLike = None,
        compute_resources: config.ComputeLike = None,
        tools: config.ToolList | None = None,
        initial_database_population_config: str | os.PathLike[str] | None = None,
        *,
        id: str | None = None,
        sandboxes: Sequence[config.InitialSandbox | dict[str, Any]] | None = None,
        overcommit: float | None = None,
        egress: config.EgressLike = None,
        pool: PoolSpec | dict[str, Any] | None = None,
        placement: str | None = None,
        ttl: config.Seconds | None = None,
        keep_database_data: bool = False,
        checkpoints: config.CheckpointsLike = None,
        url: str | Sequence[str] = "",
        credentials: str = "",
        nc: Client | None = None,
        command_timeout: float = COMMAND_TIMEOUT,
        action_timeout: float = ACTION_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        tls: dict[str, Any] | None = None,
        intial_database_population_config: str | os.PathLike[str] | None = None,
    ) -> None:
        kwargs = dict(
            database_access=database_access,
            compute_resources=compute_resources,
            tools=tools,
            initial_database_population_config=initial_database_population_config,
            id=id,
            sandboxes=sandboxes,
            overcommit=overcommit,
            egress=egress,
            pool=pool,
            placement=placement,
            ttl=ttl,
            keep_database_data=keep_database_data,
            checkpoints=checkpoints,
            url=url,
            credentials=credentials,
            nc=nc,
            command_timeout=command_timeout,
            action_timeout=action_timeout,
            connect_timeout=connect_timeout,
            tls=tls,
            intial_database_population_config=intial_database_population_config,
        )

        async def make() -> aio.SandboxGroup:
            return aio.SandboxGroup(**kwargs)

        self._inner = _loop.run(make())
        self._handles: dict[int, Sandbox] = {}

    def __enter__(self) -> SandboxGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def id(self) -> str:
        """The group's id."""
        return self._inner.id

    @property
    def spec(self):
        """The GroupSpec the group registers with."""
        return self._inner.spec

    def _wrap(self, sb: aio.Sandbox | None) -> Sandbox | None:
        if sb is None:
            return None
        h = self._handles.get(id(sb))
        if h is None or h._inner is not sb:
            h = Sandbox(sb)
            self._handles[id(sb)] = h
        return h

    def start_sandbox_group(self, timeout: float | None = None) -> None:
        """Registers the group with sandox and starts it, with its initial
        sandboxes; returns when they run."""
        _loop.run(self._inner.start_sandbox_group(timeout))

    start = start_sandbox_group

    def create_sandbox(
        self,
        id: str,
        tools: config.ToolList | None = None,
        compute_resources: config.ComputeLike = None,
        attached_databases: config.AccessLike = None,
        timeout: float | None = None,
        egress: config.EgressLike = None,
        *,
        ttl: config.Seconds | None = None,
        idle_timeout: config.Seconds | None = None,
    ) -> Sandbox:
        """Creates a sandbox in the group (not started: call its start()).
        The arguments are aio.SandboxGroup.create_sandbox's: ttl and
        idle_timeout bound its lifetime (docs/python.md#lifetimes)."""
        sb = _loop.run(
            self._inner.create_sandbox(
                id, tools, compute_resources, attached_databases, timeout, egress, ttl=ttl, idle_timeout=idle_timeout
            )
        )
        return self._wrap(sb)  # type: ignore[return-value]

    def sandbox(self, id: str) -> Sandbox | None:
        """Returns the handle of a sandbox of this group known to this process."""
        return self._wrap(self._inner.sandbox(id))

    @property
    def sandboxes(self) -> dict[str, Sandbox]:
        """The sandboxes of this group known to this process, by id."""
        return {k: self._wrap(v) for k, v in self._inner.sandboxes.items()}  # type: ignore[misc]

    def attach(self, id: str) -> Sandbox:
        """Returns a handle on an existing sandbox of this group."""
        return self._wrap(self._inner.attach(id))  # type: ignore[return-value]

    def end_sandbox_group(self, timeout: float | None = None) -> None:
        """Ends every sandbox of the group and the group itself."""
        _loop.run(self._inner.end_sandbox_group(timeout))
        self._handles.clear()

    end = end_sandbox_group

    def refresh(self, timeout: float | None = None) -> tuple[GroupStatus, list[SandboxStatus]]:
        """Asks the orchestrator for the group's status and its sandboxes'."""
        return _loop.run(self._inner.refresh(timeout))

    def close(self) -> None:
        """Releases what the group holds in this process (not the group in
        sandox: end_sandbox_group does)."""
        _loop.run(self._inner.close())


__all__ = ["ActionFuture", "Sandbox", "SandboxGroup", "ToolDescription"]
