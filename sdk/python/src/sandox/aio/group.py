"""A group of sandboxes, asyncio-native (the Go SDK's sdk/group.go)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from nats.aio.client import Client

from .. import config, subjects
from ..errors import ClosedError, InternalError, SandoxError
from ..models import GroupSpec, GroupStatus, PoolSpec, SandboxStatus
from .conn import ACTION_TIMEOUT, COMMAND_TIMEOUT, CONNECT_TIMEOUT, Conn, Options, new_command
from .future import Future
from .sandbox import Sandbox


class SandboxGroup:
    """A group of sandboxes: the defaults of its members and the sandboxes
    to start with it.

    The constructor validates the configuration and reads the tool files
    and the population config it names (BadRequestError names the field or
    file at fault); it does not contact sandox: start_sandbox_group does.
    Every call is a coroutine of the event loop that made the group.

    tools lists built-in tool families by name ("filesystem_tools.py",
    "terminal_tools", "web_tools.py") and paths of the user's tool files,
    copied into every sandbox under their own file names. A sandbox gets
    only the families named here and in its own tools; filesystem_tools and
    terminal_tools when none is.

    pool, {"size": N, "idle_shrink_seconds": S}, keeps N sandboxes of the
    group's tools, resources and egress started on each worker, so that
    creating and starting a sandbox that adds no tool files claims one
    (docs/pools.md).

    placement says how the group's sandboxes are spread over the
    orchestrator's hosts (Docker engines): "spread" (the default) or "pack".

    ttl (seconds or a timedelta) ends the group and all its sandboxes that
    long after start_sandbox_group registers it (an expired event with
    reason "group_ttl" for each sandbox); None or 0 is no limit.
    keep_database_data keeps the group's database volumes when it ends,
    so that a group of the same id starts with the same data; by default
    they are deleted with it.

    checkpoints, {"auto": True, "keep": N}, checkpoints each sandbox's
    workspace after every action batch that changed it, keeping the newest
    N automatic ones (0, the default, keeps 10; docs/checkpoints.md). A
    negative keep is BadRequestError.

    url is the NATS server, or several of one cluster: a list, or one
    string of comma-separated URLs ("nats://a:4222,nats://b:4222"), as
    $SANDOX_NATS_URL may be.
    """

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
        self._opts = Options(
            url=url,
            credentials=credentials,
            nc=nc,
            command_timeout=command_timeout,
            action_timeout=action_timeout,
            connect_timeout=connect_timeout,
            tls=dict(tls or {}),
        )
        self._opts.validate()
        self.spec: GroupSpec = config.group_spec(
            id or config.new_group_id(),
            database_access,
            compute_resources,
            tools,
            # The seed spec spells it "intial_"; both are taken.
            initial_database_population_config or intial_database_population_config,
            sandboxes,
            overcommit,
            egress,
            pool,
            placement,
            ttl,
            keep_database_data,
            checkpoints,
        )
        self._conn: Conn | None = None
        self._dialing = asyncio.Lock()
        self._closed = False
        self._sandboxes: dict[str, Sandbox] = {}
        self._futures: set[Future] = set()

    @property
    def id(self) -> str:
        """The group's id."""
        return self.spec.id

    async def __aenter__(self) -> SandboxGroup:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _link(self) -> Conn:
        async with self._dialing:
            if self._closed:
                raise ClosedError(f"group {self.id}: closed")
            if self._conn is None:
                self._conn = await Conn.dial(self._opts)
            return self._conn

    async def start_sandbox_group(self, timeout: float | None = None) -> None:
        """Registers the group with sandox and starts it: its initial
        sandboxes are created and started. Returns when they run. When some
        fail, the error says which, and sandbox() still returns those that
        run."""
        c = await self._link()
        await c.command(new_command(kind="create_group", group_id=self.id, group=self.spec), timeout)
        try:
            res = await c.command(new_command(kind="start_group", group_id=self.id), timeout)
        except SandoxError as e:
            for st in (e.result.sandboxes or []) if e.result else []:
                self._track(st)
            raise
        for st in res.sandboxes or []:
            self._track(st)

    start = start_sandbox_group

    async def create_sandbox(
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
        """Creates a sandbox in the group: its image is built with the
        group's and its own tools (or reused when the same tool set was
        built before) and its container is created. It does not start it.
        compute_resources replace the group's defaults field by field;
        attached_databases replace the group's default database access, and
        egress the group's egress policy (docs/security.md).

        ttl (seconds or a timedelta) ends the sandbox that long after its
        creation, running or not; idle_timeout ends it, once running, after
        that long without an action batch (counted from its start, then
        from its last batch). Each ends it with an expired event whose
        reason is "ttl" or "idle_timeout"; None or 0 is no limit
        (docs/python.md#lifetimes)."""
        spec = config.sandbox_spec(id, tools, compute_resources, attached_databases, egress, ttl, idle_timeout)
        c = await self._link()
        res = await c.command(
            new_command(kind="create_sandbox", group_id=self.id, sandbox_id=id, sandbox=spec), timeout
        )
        if len(res.sandboxes or []) != 1:
            raise InternalError(f"create_sandbox answered with {len(res.sandboxes or [])} sandboxes")
        return self._track(res.sandboxes[0])

    def sandbox(self, id: str) -> Sandbox | None:
        """Returns the handle of a sandbox of this group known to this
        process (an initial sandbox, or one created here), or None."""
        return self._sandboxes.get(id)

    @property
    def sandboxes(self) -> dict[str, Sandbox]:
        """The sandboxes of this group known to this process, by id."""
        return dict(self._sandboxes)

    def attach(self, id: str) -> Sandbox:
        """Returns a handle on an existing sandbox of this group, created
        elsewhere. It does not check that the sandbox exists: the first call
        on it does."""
        config.validate_id("sandbox", id)
        sb = self._sandboxes.get(id)
        if sb is None:
            sb = Sandbox(self, id)
            self._sandboxes[id] = sb
        return sb

    def _track(self, st: SandboxStatus) -> Sandbox:
        sb = self._sandboxes.get(st.id)
        if sb is None:
            sb = Sandbox(self, st.id)
            self._sandboxes[st.id] = sb
        sb.status = st
        return sb

    def _forget(self, id: str) -> None:
        self._sandboxes.pop(id, None)

    async def end_sandbox_group(self, timeout: float | None = None) -> None:
        """Ends every sandbox of the group and the group itself, then
        releases what the group holds in this process, as close() does,
        except that the group stays usable (a second end raises
        NotFoundError; start_sandbox_group creates the group anew). When it
        fails, the group keeps its connection, so that it can be tried
        again."""
        c = await self._link()
        await c.command(new_command(kind="end_group", group_id=self.id), timeout)
        self._sandboxes.clear()
        await self._release(closed=False)

    end = end_sandbox_group

    async def refresh(self, timeout: float | None = None) -> tuple[GroupStatus, list[SandboxStatus]]:
        """Asks the orchestrator for the group's status and those of its
        sandboxes, and updates the handles this process knows. A group that
        does not exist (never started, or ended) raises NotFoundError."""
        c = await self._link()
        reply = await c.request(subjects.group_status(self.id), timeout)
        if reply.group is None:
            raise InternalError(f"group {self.id}: status answered without a group")
        for st in reply.sandboxes or []:
            if st.id in self._sandboxes:
                self._sandboxes[st.id].status = st
        return reply.group, list(reply.sandboxes or [])

    async def close(self) -> None:
        """Releases what the group holds in this process: every open future
        is closed (its wait raises ClosedError) and the connection is closed
        if the group opened it. It does not end the group in sandox:
        end_sandbox_group does. Calls after close raise ClosedError.
        Idempotent."""
        await self._release(closed=True)

    async def _release(self, closed: bool) -> None:
        async with self._dialing:
            if self._closed:
                return
            self._closed = closed
            c, self._conn = self._conn, None
        for f in list(self._futures):
            await f.close()
        if c is not None:
            await c.close()

    def _watch(self, f: Future) -> None:
        if self._closed:
            raise ClosedError(f"group {self.id}: closed")
        self._futures.add(f)
