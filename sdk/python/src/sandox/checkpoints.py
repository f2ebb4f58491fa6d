"""Checkpoints of a sandbox's workspace, synchronous (sandox.aio.checkpoints
on the SDK's event loop; docs/checkpoints.md).

    from sandox.checkpoints import checkpoint, diff_checkpoints, fork, list_checkpoints, rollback

    base = checkpoint(sandbox, "base")
    d = diff_checkpoints(sandbox, "base")    # with the workspace now
    rollback(sandbox, "base")
    forks = fork(sandbox, "base", ["try-1", "try-2"])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import _loop
from .aio import checkpoints as aiock
from .models import Checkpoint, CheckpointDiff

if TYPE_CHECKING:
    from .sync import Sandbox


def checkpoint(sandbox: Sandbox, name: str | None = None, timeout: float | None = None) -> Checkpoint:
    """Saves the workspace (aio.checkpoints.checkpoint)."""
    return _loop.run(aiock.checkpoint(sandbox._inner, name, timeout))


def list_checkpoints(sandbox: Sandbox, timeout: float | None = None) -> list[Checkpoint]:
    """The sandbox's checkpoints, oldest first (aio.checkpoints.list_checkpoints)."""
    return _loop.run(aiock.list_checkpoints(sandbox._inner, timeout))


def diff_checkpoints(sandbox: Sandbox, from_: str, to: str | None = None, timeout: float | None = None) -> CheckpointDiff:
    """Compares two checkpoints, or one with the workspace now (aio.checkpoints.diff_checkpoints)."""
    return _loop.run(aiock.diff_checkpoints(sandbox._inner, from_, to, timeout))


def rollback(sandbox: Sandbox, ref: str, timeout: float | None = None) -> Checkpoint:
    """Rolls the workspace back to checkpoint ref (aio.checkpoints.rollback)."""
    return _loop.run(aiock.rollback(sandbox._inner, ref, timeout))


def fork(sandbox: Sandbox, ref: str, ids: list[str], timeout: float | None = None) -> list[Sandbox]:
    """Creates and starts sandboxes from checkpoint ref (aio.checkpoints.fork)."""
    from .sync import Sandbox as SyncSandbox

    return [SyncSandbox(sb) for sb in _loop.run(aiock.fork(sandbox._inner, ref, ids, timeout))]
