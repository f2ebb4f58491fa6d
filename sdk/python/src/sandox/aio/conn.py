"""A group's link to sandox: lifecycle commands and orchestrator requests.

It follows the client protocol of docs/subjects.md, as the Go SDK's
sdk/conn.go and sdk/requests.go do.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

import nats
import nats.errors
import nats.js.errors
from nats.aio.client import Client
from pydantic import ValidationError

from .. import subjects
from ..credentials import Caller, default_credentials, default_url, load_caller, server_list
from ..errors import (
    BadRequestError,
    InternalError,
    TimeoutError,
    UnavailableError,
    from_wire,
)
from ..models import Command, CommandResult, SandboxStatus, StatusReply

COMMAND_TIMEOUT = 300.0
"""Bounds a lifecycle call given no timeout: a first start may build an image."""
ACTION_TIMEOUT = 600.0
"""Bounds an action batch given no timeout."""
REQUEST_TIMEOUT = 30.0
"""Bounds a status or stats request given no timeout."""
CONNECT_TIMEOUT = 10.0
"""Bounds the first connection to NATS."""


@dataclass
class Options:
    """How a group reaches sandox. Empty url and credentials take the
    defaults: $SANDOX_NATS_URL or nats://127.0.0.1:4222, and
    $SANDOX_NATS_CREDS or the client credentials `sandox up` wrote. url
    (or $SANDOX_NATS_URL) names one server, or several of a cluster: a
    list, or comma-separated in one string (credentials.server_list)."""

    url: str | Sequence[str] = ""
    credentials: str = ""
    nc: Client | None = None
    command_timeout: float = COMMAND_TIMEOUT
    action_timeout: float = ACTION_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    tls: dict = field(default_factory=dict)

    def validate(self) -> None:
        for name in ("command_timeout", "action_timeout", "connect_timeout"):
            if getattr(self, name) <= 0:
                raise BadRequestError(f"{name} must be positive")
        if not isinstance(self.url, str) or self.url:  # "" is the default; [] is no server
            try:
                server_list(self.url)
            except ValueError as e:
                raise BadRequestError(str(e)) from e


class Conn:
    """A NATS connection and the calls every part of the SDK makes on it."""

    def __init__(self, opts: Options, nc: Client, owned: bool, caller: Caller | None = None) -> None:
        self.opts = opts
        self.nc = nc
        self.js = nc.jetstream()
        self.owned = owned
        self.caller = caller

    @classmethod
    async def dial(cls, opts: Options) -> Conn:
        """Connects as the options say. Raises UnavailableError when NATS
        does not answer within opts.connect_timeout."""
        if opts.nc is not None:
            return cls(opts, opts.nc, owned=False)
        try:
            servers = server_list(opts.url or default_url())
        except ValueError as e:
            raise BadRequestError(str(e)) from e
        url = ",".join(servers)
        creds = opts.credentials or default_credentials()
        nc = Client()
        last: list[BaseException] = []

        async def on_error(e: Exception) -> None:
            last.append(e)

        caller = None
        if creds:
            try:
                caller = load_caller(creds)
            except (OSError, ValueError) as e:
                raise BadRequestError(str(e)) from e
        kwargs: dict = {
            "servers": servers,
            "name": "sandox-sdk-python",
            "max_reconnect_attempts": -1,
            "error_cb": on_error,
            **opts.tls,
        }
        if creds:
            kwargs["user_credentials"] = creds
        try:
            await asyncio.wait_for(nc.connect(**kwargs), opts.connect_timeout)
        except Exception as e:  # noqa: BLE001 - every failure to connect is the same class
            await nc.close()
            cause = last[-1] if last else e
            raise UnavailableError(
                f"connect to NATS at {url}: {cause!r} (is sandox up? run `sandox up`)"
            ) from cause
        return cls(opts, nc, owned=True, caller=caller)

    async def close(self) -> None:
        if self.owned and not self.nc.is_closed:
            await self.nc.close()

    async def command(self, cmd: Command, timeout: float | None = None) -> CommandResult:
        """Publishes a lifecycle command and waits for its result. It
        subscribes to the result subject before publishing, so the result
        cannot be missed; a wire error is raised as its SandoxError, with
        the result in its `result` attribute."""
        timeout = timeout or self.opts.command_timeout
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        cmd.id = str(uuid.uuid4())
        cmd.issued_at = datetime.now(timezone.utc)
        data = cmd.model_dump_json(exclude_none=True, by_alias=True).encode()
        what = f"{cmd.kind} {target(cmd)}"
        try:
            sub = await self.nc.subscribe(subjects.result(cmd.id))
        except nats.errors.Error as e:
            raise UnavailableError(f"{what}: subscribe to its result: {e!r}") from e
        try:
            try:
                await self.js.publish(
                    subjects.command(cmd.kind),
                    data,
                    timeout=max(0.1, min(10.0, deadline - loop.time())),
                    headers={
                        subjects.HEADER_MSG_ID: cmd.id,
                        **(self.caller.headers(cmd.id) if self.caller else {}),
                    },
                )
            except (nats.js.errors.NoStreamResponseError, nats.errors.NoRespondersError) as e:
                raise UnavailableError(
                    f"{what}: no {subjects.COMMAND_STREAM} stream answers: is an orchestrator running? (sandox up)"
                ) from e
            except nats.errors.TimeoutError as e:
                raise UnavailableError(f"{what}: the {subjects.COMMAND_STREAM} stream did not acknowledge it") from e
            except nats.errors.Error as e:
                raise UnavailableError(f"{what}: publish: {e!r}") from e
            try:
                msg = await sub.next_msg(timeout=max(0.001, deadline - loop.time()))
            except nats.errors.TimeoutError as e:
                raise TimeoutError(f"{what}: no result after {timeout:g}s") from e
            except nats.errors.Error as e:
                raise UnavailableError(f"{what}: no result: {e!r}") from e
        finally:
            await _unsubscribe(sub)
        try:
            res = CommandResult.model_validate_json(msg.data)
        except ValidationError as e:
            raise InternalError(f"decode the result of {what}: {e}") from e
        if res.error is not None:
            err = from_wire(res.error, what)
            err.result = res
            raise err
        return res

    async def request(self, subject: str, timeout: float | None = None) -> StatusReply:
        """Asks the orchestrator on one of its request subjects (no body, no
        headers) and returns its reply. A refusal is raised as the reply's
        wire error; no orchestrator is UnavailableError."""
        timeout = timeout or REQUEST_TIMEOUT
        try:
            msg = await self.nc.request(subject, b"", timeout=timeout)
        except nats.errors.NoRespondersError as e:
            raise UnavailableError(f"no orchestrator answers {subject}: is sandox up? (sandox up)") from e
        except nats.errors.TimeoutError as e:
            raise TimeoutError(f"{subject}: no answer after {timeout:g}s") from e
        except nats.errors.Error as e:
            raise UnavailableError(f"{subject}: {e!r}") from e
        try:
            reply = StatusReply.model_validate_json(msg.data)
        except ValidationError as e:
            raise InternalError(f"decode the answer on {subject}: {e}") from e
        if reply.error is not None:
            raise from_wire(reply.error)
        return reply

    async def sandbox_status(self, sandbox_id: str, timeout: float | None = None) -> SandboxStatus:
        """Asks the orchestrator for a sandbox's recorded status."""
        subject = subjects.sandbox_status(sandbox_id)
        reply = await self.request(subject, timeout)
        if reply.sandbox is None:
            raise InternalError(f"{subject} answered without a sandbox")
        return reply.sandbox


def target(cmd: Command) -> str:
    return f"sandbox {cmd.sandbox_id}" if cmd.sandbox_id else f"group {cmd.group_id}"


async def _unsubscribe(sub) -> None:
    try:
        await sub.unsubscribe()
    except nats.errors.Error:
        pass  # the connection is closed: nothing to release


__all__ = ["Conn", "Options", "new_command"]


def new_command(kind: str, group_id: str, **fields) -> Command:
    """Returns a command of kind for the group; command() gives it its id
    and issue time."""
    return Command(id=str(uuid.uuid4()), kind=kind, group_id=group_id, issued_at=datetime.now(timezone.utc), **fields)
