"""Checkpoints of a sandbox's workspace, asyncio-native (the Go SDK's
sdk/checkpoints.go; docs/checkpoints.md).

    from sandox.aio.checkpoints import checkpoint, diff_checkpoints, fork, list_checkpoints, rollback

    base = await checkpoint(sandbox, "base")         # base.id, .files, .bytes, .new_bytes
    d = await diff_checkpoints(sandbox, "base")      # with the workspace now: d.added, d.changed, d.removed
    for c in await list_checkpoints(sandbox):        # oldest first, c.changed_since
        ...
    await rollback(sandbox, "base")
    forks = await fork(sandbox, "base", ["try-1", "try-2"])

Each is a lifecycle command answered by the orchestrator; errors are the
SDK's classes (NotFoundError, ConflictError, AlreadyExistsError,
ResourceExhaustedError, BadRequestError).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from .. import config
from ..errors import InternalError
from ..models import Checkpoint, CheckpointDiff, CheckpointRef, CheckpointRequest, CommandResult
from .conn import new_command

if TYPE_CHECKING:
    from .sandbox import Sandbox


async def _command(sandbox: Sandbox, kind: str, req: CheckpointRequest, timeout: float | None) -> CommandResult:
    c = await sandbox.group._link()
    return await c.command(
        new_command(kind=kind, group_id=sandbox.group.id, sandbox_id=sandbox.id, checkpoint=req), timeout
    )


def _one(res: CommandResult) -> Checkpoint:
    if len(res.checkpoints or []) != 1:
        raise InternalError(f"{res.kind} answered with {len(res.checkpoints or [])} checkpoints")
    return res.checkpoints[0]


async def checkpoint(sandbox: Sandbox, name: str | None = None, timeout: float | None = None) -> Checkpoint:
    """Saves the sandbox's workspace outside the sandbox and returns the new
    checkpoint. A name used already raises AlreadyExistsError, a sandbox not
    running ConflictError, a full store ResourceExhaustedError."""
    return _one(await _command(sandbox, "checkpoint", CheckpointRequest(name=name or None), timeout))


async def list_checkpoints(sandbox: Sandbox, timeout: float | None = None) -> list[Checkpoint]:
    """The sandbox's checkpoints, oldest first; while it runs each has the
    paths changed since it in changed_since. An ended sandbox's are listed
    too."""
    res = await _command(sandbox, "list_checkpoints", CheckpointRequest(), timeout)
    return list(res.checkpoints or [])


async def diff_checkpoints(
    sandbox: Sandbox, from_: str, to: str | None = None, timeout: float | None = None
) -> CheckpointDiff:
    """The paths added, changed and removed from checkpoint from_ to
    checkpoint to (ids or names), or to the workspace now when to is None."""
    res = await _command(sandbox, "diff_checkpoints", CheckpointRequest(ref=from_, to=to or None), timeout)
    if res.diff is None:
        raise InternalError("diff_checkpoints answered without a diff")
    return res.diff


async def rollback(sandbox: Sandbox, ref: str, timeout: float | None = None) -> Checkpoint:
    """Puts the workspace back as checkpoint ref saved it. A failed rollback
    leaves the workspace as it was; a disk without room to stage the files
    raises ResourceExhaustedError."""
    return _one(await _command(sandbox, "rollback", CheckpointRequest(ref=ref), timeout))


async def fork(sandbox: Sandbox, ref: str, ids: list[str], timeout: float | None = None) -> list[Sandbox]:
    """Creates a sandbox of the group for each id, filled with the files of
    checkpoint ref before it starts, and starts them all at once; returns
    them in the order of ids once all run."""

    async def one(id: str) -> Sandbox:
        spec = config.sandbox_spec(id, None, None, None, None, None, None)
        spec.from_checkpoint = CheckpointRef(sandbox_id=sandbox.id, checkpoint=ref)
        c = await sandbox.group._link()
        res = await c.command(
            new_command(kind="create_sandbox", group_id=sandbox.group.id, sandbox_id=id, sandbox=spec), timeout
        )
        if len(res.sandboxes or []) != 1:
            raise InternalError(f"create_sandbox answered with {len(res.sandboxes or [])} sandboxes")
        sb = sandbox.group._track(res.sandboxes[0])
        await sb.start(timeout)
        return sb

    return list(await asyncio.gather(*(one(id) for id in ids)))
