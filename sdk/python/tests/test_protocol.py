"""The client protocol of docs/subjects.md, on a real NATS server with
sandox's streams. The tests play the other side by hand, as the NATS CLI
would: they read the commands the SDK put in SANDOX_COMMANDS, answer on the
result subjects, serve a sandbox's actions subject, and publish events.
The real orchestrator and executor are exercised by the integration test
(tests/integration, run from integration/python_test.go)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import nats
import pytest

import sandox
from sandox import aio

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas" / "jsonschema"
OBS = {"tool": "terminal_tools.run", "stdout": "hi\n", "stderr": "", "terminal_still_running": False, "duration_ms": 1.5}


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


@pytest.fixture
async def peer(nats_url: str):
    nc = await nats.connect(nats_url)
    yield nc
    await nc.close()


def group(url: str, **kw) -> aio.SandboxGroup:
    kw.setdefault("command_timeout", 10)
    kw.setdefault("action_timeout", 10)
    return aio.SandboxGroup(url=url, credentials="", **kw)


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


def status(id: str, state: str = "running") -> dict:
    return {"id": id, "group_id": "g", "state": state, "image": "sandox/sandbox:latest", "tools": ["terminal_tools"],
            "resources": {"memory_bandwidth_enforced": False}, "image_reused": False, "updated_at": now()}


async def orchestrate(peer, answer):
    """Takes commands off SANDOX_COMMANDS as a worker does and publishes
    answer(command, headers) on each result subject. Returns the commands seen."""
    js = peer.jetstream()
    psub = await js.pull_subscribe("sandox.cmd.>", durable="orchestrator", stream="SANDOX_COMMANDS")
    seen: list[tuple[str, dict, dict]] = []

    async def loop() -> None:
        while True:
            try:
                msgs = await psub.fetch(1, timeout=0.5)
            except nats.errors.TimeoutError:
                continue
            for m in msgs:
                cmd = json.loads(m.data)
                seen.append((m.subject, cmd, dict(m.headers or {})))
                res = {"command_id": cmd["id"], "kind": cmd["kind"], "worker": "pytest", "duration_ms": 0.1, **answer(cmd)}
                await peer.publish(f"sandox.evt.result.{cmd['id']}", json.dumps(res).encode())
                await m.ack()

    task = asyncio.create_task(loop())
    return task, seen


async def test_lifecycle_commands(nats_url: str, peer) -> None:
    """Each command is a JetStream message on sandox.cmd.<kind> with
    Nats-Msg-Id = its id, valid against command.schema.json; results and
    refusals come back from sandox.evt.result.<id>."""

    def answer(cmd: dict) -> dict:
        if cmd["kind"] == "start_group":
            return {"sandboxes": [status("static-1")]}
        if cmd["kind"] == "create_sandbox":
            if cmd["sandbox_id"] == "taken":
                return {"error": {"code": "already_exists", "message": "sandbox \"taken\" exists"}}
            return {"sandboxes": [status(cmd["sandbox_id"], "created")]}
        if cmd["kind"] == "start_sandbox":
            return {"sandboxes": [status(cmd["sandbox_id"])]}
        return {}

    task, seen = await orchestrate(peer, answer)
    try:
        g = group(nats_url, id="g", tools=["filesystem_tools.py"], sandboxes=[{"id": "static-1"}])
        await g.start_sandbox_group()
        assert g.sandbox("static-1") is not None and g.sandbox("static-1").status.state == "running"
        sb = await g.create_sandbox(id="sb-1", tools=["terminal_tools"], compute_resources={"cpu": "0.5"})
        assert sb.status.state == "created"
        await sb.start()
        assert sb.status.state == "running"
        with pytest.raises(sandox.AlreadyExistsError) as e:
            await g.create_sandbox(id="taken")
        assert e.value.code == "already_exists" and e.value.result.kind == "create_sandbox"
        await sb.end()
        await g.end_sandbox_group()
    finally:
        task.cancel()
    validator = jsonschema.Draft202012Validator(schema("command"))
    kinds = []
    for subject, cmd, headers in seen:
        validator.validate(cmd)
        assert subject == f"sandox.cmd.{cmd['kind']}"
        assert headers.get("Nats-Msg-Id") == cmd["id"]
        kinds.append(cmd["kind"])
    assert kinds == ["create_group", "start_group", "create_sandbox", "start_sandbox", "create_sandbox", "end_sandbox", "end_group"]
    assert seen[0][1]["group"]["families"] == ["filesystem_tools"]
    assert seen[0][1]["group"]["sandboxes"] == [{"id": "static-1"}]


async def test_no_stream_is_unavailable(bare_nats_url: str) -> None:
    g = group(bare_nats_url)
    with pytest.raises(sandox.UnavailableError, match="SANDOX_COMMANDS"):
        await g.start_sandbox_group()
    await g.close()


async def test_no_orchestrator_is_unavailable(nats_url: str) -> None:
    g = group(nats_url)
    with pytest.raises(sandox.UnavailableError, match="no orchestrator"):
        await g.attach("sb-x").refresh()
    with pytest.raises(sandox.UnavailableError):
        await g.refresh()
    await g.close()


async def test_status_and_stats_requests(nats_url: str, peer) -> None:
    async def serve(msg):
        if msg.subject == "sandox.req.stats.sandbox.sb-s":
            usage = {"sandbox_id": "sb-s", "cpu_percent": 1.5, "memory_bytes": 1 << 20, "disk_bytes": 4096, "pids": 3,
                     "limits": {"memory_bandwidth_enforced": False}, "read_at": now()}
            await msg.respond(json.dumps({"stats": usage, "sandbox": status("sb-s"), "worker": "pytest"}).encode())
        elif msg.subject.endswith(".sb-s"):
            await msg.respond(json.dumps({"sandbox": status("sb-s"), "worker": "pytest"}).encode())
        else:
            await msg.respond(json.dumps({"error": {"code": "not_found", "message": "no such"}, "worker": "pytest"}).encode())

    sub = await peer.subscribe("sandox.req.>", queue="orchestrator", cb=serve)
    await peer.flush()
    g = group(nats_url)
    try:
        sb = g.attach("sb-s")
        assert (await sb.refresh()).state == "running"
        usage = await sb.stats()
        assert (usage.pids, usage.disk_bytes) == (3, 4096)
        with pytest.raises(sandox.NotFoundError, match="no such"):
            await g.attach("nope").stats()
        with pytest.raises(sandox.NotFoundError):
            await g.refresh()
    finally:
        await sub.unsubscribe()
        await g.close()


async def executor(peer, sandbox_id: str, answer):
    """Serves sandbox.<id>.actions: records each batch and replies answer(batch)."""
    batches: list[dict] = []

    async def serve(msg):
        batch = {"reply": msg.reply, "headers": dict(msg.headers or {}), "payload": json.loads(msg.data)}
        batches.append(batch)
        reply = answer(batch)
        if reply is not None:
            await msg.respond(json.dumps(reply).encode())

    sub = await peer.subscribe(f"sandbox.{sandbox_id}.actions", cb=serve)
    await peer.flush()
    return sub, batches


async def test_sync_batch(nats_url: str, peer) -> None:
    """A batch goes out in the list form, with the reply subject
    sandox.obs.<id>.<batch id> and both headers; a failed action is an
    observation, not an exception."""

    def answer(b):
        failed = {**OBS, "tool": "nope.fly", "stdout": "", "error": {"code": "unknown_tool", "message": "unknown tool"}}
        return {"batch_id": b["headers"]["Sandox-Batch-Id"], "sandbox_id": "sb-a", "observations": [OBS, failed]}

    sub, batches = await executor(peer, "sb-a", answer)
    g = group(nats_url)
    try:
        obs = await g.attach("sb-a").send_actions(
            {"terminal_tools.run": {"description": "d", "args": {"command": "echo hi"}}, "nope.fly": {}},
            stop_on_error=False,
        )
    finally:
        await sub.unsubscribe()
        await g.close()
    assert [o.tool for o in obs] == ["terminal_tools.run", "nope.fly"]
    assert obs[1].error is not None and obs[1].error.code == "unknown_tool"
    (b,) = batches
    batch_id = b["headers"]["Sandox-Batch-Id"]
    assert b["reply"] == f"sandox.obs.sb-a.{batch_id}"
    assert b["headers"]["Sandox-Stop-On-Error"] == "false"
    assert b["payload"] == [{"tool": "terminal_tools.run", "description": "d", "args": {"command": "echo hi"}}, {"tool": "nope.fly"}]
    jsonschema.validate(b["payload"], schema("actions"))


async def test_refused_batch_raises_its_class(nats_url: str, peer) -> None:
    sub, batches = await executor(peer, "sb-r", lambda b: {"sandbox_id": "sb-r", "observations": [],
                                                           "error": {"code": "bad_request", "message": "malformed"}})
    g = group(nats_url)
    try:
        with pytest.raises(sandox.BadRequestError, match="malformed"):
            await g.attach("sb-r").send_actions([{"tool": "a.b"}], stop_on_error=True)
    finally:
        await sub.unsubscribe()
        await g.close()
    assert batches[0]["headers"]["Sandox-Stop-On-Error"] == "true"


async def test_no_executor_is_gone_at_once(nats_url: str) -> None:
    g = group(nats_url)
    start = time.monotonic()
    with pytest.raises(sandox.SandboxGoneError, match="no executor serves sandbox.sb-none.actions"):
        await g.attach("sb-none").send_actions([{"tool": "terminal_tools.run"}])
    assert time.monotonic() - start < 8  # no-responders, not the action timeout
    await g.close()


async def test_async_future_collects_later(nats_url: str, peer) -> None:
    held: list = []

    def answer(b):
        held.append(b)
        return None  # answered below, after poll() saw nothing

    replies: list = []
    sub, _ = await executor(peer, "sb-f", answer)
    g = group(nats_url)
    try:
        fut = await g.attach("sb-f").send_actions([{"tool": "terminal_tools.run"}], async_=True)
        assert isinstance(fut, aio.Future)
        for _ in range(100):
            if held:
                break
            await asyncio.sleep(0.02)
        assert await fut.poll() == ([], False)
        await peer.publish(held[0]["reply"], json.dumps({"sandbox_id": "sb-f", "observations": [OBS]}).encode())
        obs = await fut.wait()
        assert obs[0].stdout == "hi\n" and fut.done()
        assert await fut.wait() == obs  # the answer is kept
        replies.append(fut.batch_id)
    finally:
        await sub.unsubscribe()
        await g.close()
    assert held[0]["headers"]["Sandox-Batch-Id"] == replies[0]


@pytest.mark.parametrize("kind,lost", [("restarted", True), ("exited", True), ("expired", True), ("ended", True), ("start_failed", True),
                                       ("oom_killed", False), ("started", False)])
async def test_events_that_lose_batches(nats_url: str, peer, kind: str, lost: bool) -> None:
    """An event whose kind loses batches settles the future at once; other kinds do not."""
    sid = f"sb-ev-{kind.replace('_', '-')}"
    held: list = []
    sub, _ = await executor(peer, sid, lambda b: held.append(b))
    g = group(nats_url)
    try:
        fut = await g.attach(sid).send_actions([{"tool": "terminal_tools.run"}], async_=True)
        for _ in range(100):
            if held:
                break
            await asyncio.sleep(0.02)
        ev = {"kind": kind, "group_id": "g", "sandbox_id": sid, "reason": "it ran out of memory", "time": now()}
        await peer.publish(f"sandox.evt.sandbox.{sid}", json.dumps(ev).encode())
        if lost:
            with pytest.raises(sandox.SandboxGoneError, match=f"{kind} \\(it ran out of memory\\)"):
                await fut.wait(timeout=5)
        else:
            await peer.publish(held[0]["reply"], json.dumps({"sandbox_id": sid, "observations": [OBS]}).encode())
            assert len(await fut.wait(timeout=5)) == 1
    finally:
        await sub.unsubscribe()
        await g.close()


async def test_answer_before_the_event_is_taken(nats_url: str, peer) -> None:
    """The executor answered, then the sandbox restarted: the answer wins."""
    held: list = []
    sub, _ = await executor(peer, "sb-race", lambda b: held.append(b))
    g = group(nats_url)
    try:
        fut = await g.attach("sb-race").send_actions([{"tool": "terminal_tools.run"}], async_=True)
        for _ in range(100):
            if held:
                break
            await asyncio.sleep(0.02)
        await peer.publish(held[0]["reply"], json.dumps({"sandbox_id": "sb-race", "observations": [OBS]}).encode())
        ev = {"kind": "restarted", "group_id": "g", "sandbox_id": "sb-race", "time": now()}
        await peer.publish("sandox.evt.sandbox.sb-race", json.dumps(ev).encode())
        await peer.flush()
        await asyncio.sleep(0.2)  # both are in before the future looks
        assert len(await fut.wait(timeout=5)) == 1
    finally:
        await sub.unsubscribe()
        await g.close()


async def test_status_check_finds_the_sandbox_gone(nats_url: str, peer) -> None:
    """An executor took the batch and vanished without an event: the status
    check 1 s after sending says the sandbox no longer exists."""
    sub, _ = await executor(peer, "sb-lost", lambda b: None)

    async def serve(msg):
        await msg.respond(json.dumps({"error": {"code": "not_found", "message": "sandbox \"sb-lost\" does not exist"},
                                      "worker": "pytest"}).encode())

    req = await peer.subscribe("sandox.req.status.sandbox.sb-lost", cb=serve)
    await peer.flush()
    g = group(nats_url)
    try:
        start = time.monotonic()
        with pytest.raises(sandox.NotFoundError, match="ended or never created"):
            await g.attach("sb-lost").send_actions([{"tool": "terminal_tools.run"}], timeout=8)
        assert 0.9 < time.monotonic() - start < 5
    finally:
        await sub.unsubscribe()
        await req.unsubscribe()
        await g.close()


async def test_timeout_then_wait_again(nats_url: str, peer) -> None:
    held: list = []
    sub, _ = await executor(peer, "sb-slow", lambda b: held.append(b))
    g = group(nats_url)
    try:
        fut = await g.attach("sb-slow").send_actions([{"tool": "terminal_tools.run"}], async_=True)
        with pytest.raises(sandox.TimeoutError):
            await fut.wait(timeout=0.3)
        assert not fut.done()
        await peer.publish(held[0]["reply"], json.dumps({"sandbox_id": "sb-slow", "observations": [OBS]}).encode())
        assert len(await fut.wait(timeout=5)) == 1
    finally:
        await sub.unsubscribe()
        await g.close()


async def test_close_gives_futures_up(nats_url: str, peer) -> None:
    sub, _ = await executor(peer, "sb-c", lambda b: None)
    g = group(nats_url)
    fut = await g.attach("sb-c").send_actions([{"tool": "terminal_tools.run"}], async_=True)
    fut2 = await g.attach("sb-c").send_actions([{"tool": "terminal_tools.run"}], async_=True)
    await fut.close()
    with pytest.raises(sandox.ClosedError):
        await fut.wait()
    await g.close()
    with pytest.raises(sandox.ClosedError):
        await fut2.wait()
    with pytest.raises(sandox.ClosedError):
        await g.attach("sb-c").send_actions([{"tool": "terminal_tools.run"}])
    await sub.unsubscribe()


def test_sync_api_on_its_own_loop(nats_url: str) -> None:
    """The synchronous API: send_actions waits; send_actions(async_=True)
    returns an ActionFuture at once, awaitable (it gives itself back once
    the batch is sent) and collected later with result()."""

    async def serve_forever(stop: asyncio.Event) -> None:
        nc = await nats.connect(nats_url)

        async def serve(msg):
            await msg.respond(json.dumps({"sandbox_id": "sb-sync", "observations": [OBS]}).encode())

        await nc.subscribe("sandbox.sb-sync.actions", cb=serve)
        await nc.flush()
        ready.set()
        await stop.wait()
        await nc.close()

    import threading

    ready = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    t = threading.Thread(target=loop.run_until_complete, args=(serve_forever(stop),))
    t.start()
    assert ready.wait(10)
    try:
        g = sandox.SandboxGroup(url=nats_url, credentials="", action_timeout=10)
        sb = g.attach("sb-sync")
        assert sb.send_actions({"terminal_tools.run": {"args": {"command": "echo hi"}}})[0].stdout == "hi\n"
        fut = sb.send_actions([{"tool": "terminal_tools.run"}], async_=True)
        assert fut.result()[0].stdout == "hi\n"
        assert fut.done()

        async def in_async_code():
            f = await sb.send_actions([{"tool": "terminal_tools.run"}], async_=True)
            assert isinstance(f, sandox.ActionFuture)
            return await f.async_result()

        assert asyncio.run(in_async_code())[0].stdout == "hi\n"
        g.close()
    finally:
        loop.call_soon_threadsafe(stop.set)
        t.join(10)
