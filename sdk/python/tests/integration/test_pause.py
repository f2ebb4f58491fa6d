"""Pause and resume from Python against the real system (docs/pause.md):
a batch sent to a paused sandbox raises PausedError at once, resuming a
running sandbox ConflictError, and after the resume the sandbox answers."""

from __future__ import annotations

import time

import pytest

from sandox import ConflictError, PausedError, aio

RUN = {"terminal_tools.run": {"description": "work", "args": {"command": "echo hi"}}}


async def test_pause_resume() -> None:
    g = aio.SandboxGroup(id="py-pause", command_timeout=180)
    try:
        await g.start_sandbox_group()
        sb = await g.create_sandbox("py-pause-sb")
        await sb.start()
        await sb.pause()
        assert sb.status is not None and sb.status.state == "paused"
        start = time.monotonic()
        with pytest.raises(PausedError):
            await sb.send_actions(RUN)
        assert time.monotonic() - start < 5, "a batch to a paused sandbox is refused at once"
        await sb.resume()
        assert sb.status is not None and sb.status.state == "running"
        obs = await sb.send_actions(RUN)
        assert obs[0].error is None
        with pytest.raises(ConflictError):
            await sb.resume()
    finally:
        await g.end_sandbox_group()
        await g.close()
