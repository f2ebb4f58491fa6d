"""Checkpoints from the asyncio client against the real system: checkpoint,
change, diff, roll back to the same bytes, fork (docs/checkpoints.md)."""

from __future__ import annotations

import pytest

from sandox import AlreadyExistsError, NotFoundError, aio
from sandox.aio.checkpoints import checkpoint, diff_checkpoints, fork, list_checkpoints, rollback


async def run(sb: aio.Sandbox, command: str) -> str:
    obs = await sb.send_actions({"terminal_tools.run": {"description": "test", "args": {"command": command}}})
    assert obs[0].error is None and obs[0].exit_code == 0, obs[0]
    return obs[0].stdout


async def test_checkpoint_diff_rollback_fork() -> None:
    async with aio.SandboxGroup(id="py-ckpt", tools=["terminal_tools"], compute_resources={"memory": "256MiB"}) as g:
        await g.start_sandbox_group()
        try:
            sb = await g.create_sandbox(id="py-ckpt-sb")
            await sb.start()
            await run(sb, "head -c 65536 /dev/urandom > data.bin && printf keep > keep.txt")
            before = await run(sb, "sha256sum data.bin keep.txt")
            base = await checkpoint(sb, "base")
            assert base.files == 2 and base.bytes == 65536 + 4
            with pytest.raises(AlreadyExistsError):
                await checkpoint(sb, "base")

            await run(sb, "rm keep.txt && printf x >> data.bin && printf new > new.txt")
            d = await diff_checkpoints(sb, "base")
            assert (d.added, d.changed, d.removed) == (["new.txt"], ["data.bin"], ["keep.txt"])
            listed = await list_checkpoints(sb)
            assert [c.id for c in listed] == [base.id]
            assert listed[0].changed_since == ["data.bin", "keep.txt", "new.txt"]

            assert (await rollback(sb, "base")).id == base.id
            assert await run(sb, "sha256sum data.bin keep.txt") == before
            assert "new.txt" not in await run(sb, "ls")
            with pytest.raises(NotFoundError):
                await rollback(sb, "nope")

            (child,) = await fork(sb, "base", ["py-ckpt-fork"])
            assert child.status is not None and child.status.state == "running"
            assert await run(child, "sha256sum data.bin keep.txt") == before
        finally:
            await g.end_sandbox_group()
