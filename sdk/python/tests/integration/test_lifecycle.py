"""The lifecycle options set from Python take effect in the real system:
a sandbox's idle timeout and TTL end it by themselves, with events that say
why, and a function passed in tools runs in a real sandbox."""

from __future__ import annotations

import asyncio
import json
import os
from datetime import timedelta

import nats
import pytest
from it_tools import shout

from sandox import BadRequestError, NotFoundError, SandboxGoneError, SandboxGroup, aio
from sandox.credentials import server_list


async def watch(subjects: list[str]) -> tuple[nats.aio.client.Client, asyncio.Queue]:
    """Subscribes, with the test's credentials, to the events of the given
    sandboxes (sandox.evt.sandbox.<id>, docs/subjects.md) and returns the
    connection and a queue of the decoded events."""
    nc = await nats.connect(
        servers=server_list(os.environ["SANDOX_NATS_URL"]), user_credentials=os.environ["SANDOX_NATS_CREDS"]
    )
    q: asyncio.Queue = asyncio.Queue()

    async def put(msg) -> None:
        await q.put(json.loads(msg.data))

    for s in subjects:
        await nc.subscribe(s, cb=put)
    await nc.flush()
    return nc, q


async def until(q: asyncio.Queue, sandbox: str, kind: str, timeout: float = 60) -> dict:
    """Returns the first event of kind for sandbox, dropping the others of
    that sandbox; other sandboxes' events go back in the queue."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    later = []
    try:
        while True:
            ev = await asyncio.wait_for(q.get(), max(0.01, deadline - loop.time()))
            if ev.get("sandbox_id") != sandbox:
                later.append(ev)
            elif ev["kind"] == kind:
                return ev
    finally:
        for ev in later:
            q.put_nowait(ev)


async def test_lifetimes_end_sandboxes() -> None:
    """A sandbox with a 2 s idle timeout ends by itself after its last
    batch, one with a 3 s TTL after its creation, and a group's TTL is
    recorded; each end comes with an expired event whose reason says which
    lifetime was over, and the ended sandbox's status keeps that reason."""
    nc, q = await watch(["sandox.evt.sandbox.py-life-idle", "sandox.evt.sandbox.py-life-ttl"])
    g = aio.SandboxGroup(id="py-life", ttl=timedelta(minutes=10), command_timeout=180)
    try:
        await g.start_sandbox_group()
        group, _ = await g.refresh()
        assert group.expires_at is not None and group.created_at is not None
        assert abs((group.expires_at - group.created_at).total_seconds() - 600) < 1

        idle = await g.create_sandbox("py-life-idle", idle_timeout=2)
        assert idle.status.idle_timeout_seconds == 2
        ttl = await g.create_sandbox("py-life-ttl", ttl=3)  # created, never started: a TTL still ends it
        assert abs((ttl.status.expires_at - ttl.status.created_at).total_seconds() - 3) < 0.01
        await idle.start()
        obs = await idle.send_actions({"terminal_tools.run": {"description": "work", "args": {"command": "echo hi"}}})
        assert obs[0].stdout == "hi\n"
        last_batch = asyncio.get_running_loop().time()

        for sb, why in (("py-life-idle", "idle_timeout"), ("py-life-ttl", "ttl")):
            expired = await until(q, sb, "expired")
            assert expired["reason"] == why, expired
            ended = await until(q, sb, "ended")
            assert ended["sandbox"]["expired"] == why, ended
        assert asyncio.get_running_loop().time() - last_batch >= 2, "the idle timeout ended a sandbox too early"
        for sb in (idle, ttl):
            with pytest.raises(NotFoundError):
                await sb.refresh()

        # A batch that runs longer than the idle timeout does not keep the
        # sandbox alive: it fails when the sandbox expires.
        busy = await g.create_sandbox("py-life-busy", idle_timeout=2)
        await busy.start()
        began = asyncio.get_running_loop().time()
        with pytest.raises(SandboxGoneError, match=r"expired \(idle_timeout\) while the batch ran"):
            await busy.send_actions(
                {"terminal_tools.run": {"description": "long", "args": {"command": "sleep 60", "timeout_seconds": 90}}}
            )
        assert asyncio.get_running_loop().time() - began < 30
    finally:
        await g.end_sandbox_group()
        await g.close()
        await nc.close()


def test_function_tool_runs_in_a_sandbox() -> None:
    """A function of a tool module in tools: the SDK copies its module's
    file (it_tools.py) in, and the sandbox serves every public function of
    it as it_tools.<name>. A lambda is refused before anything is sent."""
    with pytest.raises(BadRequestError, match="lambda"):
        SandboxGroup(id="py-fn", tools=[lambda x: x])
    g = SandboxGroup(id="py-fn", tools=["terminal_tools", shout], sandboxes=[{"id": "py-fn-sb"}])
    try:
        g.start_sandbox_group()
        sb = g.sandbox("py-fn-sb")
        assert sb is not None
        assert "it_tools" in sb.status.tools
        obs = sb.send_actions([
            {"tool": "it_tools.shout", "description": "the function given", "args": {"text": "hi", "times": 2}},
            {"tool": "it_tools.whisper", "description": "its module's other function", "args": {"text": "HI"}},
        ])
        assert [o.error for o in obs] == [None, None], obs
        assert obs[0].return_ == "HI!HI!"
        assert obs[1].return_ == "hi..."
    finally:
        g.end_sandbox_group()
