"""The spec's walkthrough, as written (but for async_), against the real
system: real NATS with credentials, a real orchestrator, real containers."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from sandox import (
    BadRequestError,
    ComputeResources,
    DatabaseAccess,
    DatabaseGrant,
    InitialSandbox,
    NotFoundError,
    SandboxGoneError,
    SandboxGroup,
)
from sandox import aio

MY_TOOLS = '''"""The user's tools, copied into the sandbox as my_tools.py."""
import time


def greet(name: str) -> dict:
    """Greets someone by name."""
    print(f"hello {name}")
    return {"greeted": name}


def nap(seconds: float) -> str:
    """Sleeps, to keep a batch in flight."""
    time.sleep(seconds)
    return "rested"
'''


@pytest.fixture
def tool_files(tmp_path: Path) -> dict[str, str]:
    my_tools = tmp_path / "my_tools.py"
    my_tools.write_text(MY_TOOLS)
    population = tmp_path / "population.yml"
    # The data service's format (docs/databases.md); the namespace starts
    # empty here, the Go integration tests load and search real sources.
    population.write_text("databases:\n  qdrant:\n    docs: []\n")
    return {"my_tools": str(my_tools), "population": str(population)}


def test_walkthrough(tool_files: dict[str, str]) -> None:
    # The spec's calls, as written.
    sandboxgroup = SandboxGroup(
        database_access=DatabaseAccess([DatabaseGrant(database="qdrant", namespace="docs", read=True, write=False)]),
        compute_resources=ComputeResources(cpu="0.5", memory="256MiB"),
        tools=["filesystem_tools.py", "terminal_tools.py", tool_files["my_tools"]],
        initial_database_population_config=tool_files["population"],
        id="py-walk",
        sandboxes=[InitialSandbox(id="py-static", tools=[])],
    )
    try:
        sandboxgroup.start_sandbox_group()
        static = sandboxgroup.sandbox("py-static")
        assert static is not None and static.status.state == "running"
        assert static.send_actions({"greetUse": {"description": "static", "args": {"name": "Grace"}}})[0].return_ == {
            "greeted": "Grace"
        }

        sandbox = sandboxgroup.create_sandbox(
            id="py-sb",
            tools=["terminal_tools.py"],
            compute_resources=ComputeResources(memory="512MiB"),
            attached_databases=DatabaseAccess([]),
        )
        assert sandbox.status.state == "created"
        assert "my_tools" in sandbox.status.tools
        sandbox.start()
        assert sandbox.status.state == "running"
        assert sandbox.status.resources.memory_bytes == 512 << 20

        actions = {
            "filesystem_tools.write_file": {"description": "take a note", "args": {"path": "notes.txt", "content": "hi\n"}},
            "terminal_tools.run": {"description": "look", "args": {"command": "cat notes.txt; pwd"}},
            "greetUse": {"description": "user tool", "args": {"name": "Ada"}},
            "nope_tools.fly": {"description": "no such tool", "args": {}},
        }
        observations = sandbox.send_actions(actions)
        assert [o.tool for o in observations] == [
            "filesystem_tools.write_file", "terminal_tools.run", "my_tools.greet", "nope_tools.fly"
        ]
        for o in observations[:3]:
            assert o.error is None, (o.tool, o.stdout, o.stderr, o.error)
        assert observations[1].stdout.startswith("hi\n") and observations[1].exit_code == 0
        assert observations[2].stdout == "hello Ada\n" and observations[2].return_ == {"greeted": "Ada"}
        assert observations[3].error is not None and observations[3].error.code == "unknown_tool"
        assert not any(o.terminal_still_running for o in observations)

        async def agent_step():
            # The spec's line: observations2 = await sandbox.send_actions(actions, async=True)
            future = await sandbox.send_actions(
                [{"tool": "filesystem_tools.read_file", "args": {"path": "notes.txt"}}], async_=True
            )
            return future

        future = asyncio.run(agent_step())
        observations2 = future.result(timeout=120)
        assert observations2[0].error is None and "hi" in observations2[0].stdout

        # A plain call, no await: the future is collected later.
        later = sandbox.send_actions([{"tool": "terminal_tools.run", "args": {"command": "echo later"}}], async_=True)
        assert later.result(timeout=120)[0].stdout == "later\n"

        usage = sandbox.stats()
        assert usage.sandbox_id == "py-sb"
        assert usage.limits.memory_bytes == 512 << 20
        assert usage.memory_bytes > 0 and usage.pids > 0

        tools = {t.name for t in sandbox.tools()}
        assert {"filesystem_tools.read_file", "terminal_tools.run", "my_tools.greet"} <= tools
        openai = sandbox.tools(format="openai")
        assert any(t["function"]["name"] == "my_tools__greet" for t in openai)

        group, statuses = sandboxgroup.refresh()
        assert group.state == "running" and {"py-static", "py-sb"} <= {s.id for s in statuses}

        sandbox.end()
        with pytest.raises(NotFoundError):
            sandbox.send_actions({"terminal_tools.run": {"args": {"command": "echo gone"}}})
    finally:
        sandboxgroup.end_sandbox_group()
    with pytest.raises(NotFoundError):
        sandboxgroup.refresh()
    sandboxgroup.close()


def test_bad_requests(tool_files: dict[str, str]) -> None:
    """Refusals come back as BadRequestError, from the SDK or the orchestrator."""
    with pytest.raises(BadRequestError, match="sandbox id"):
        SandboxGroup(id="py-bad", sandboxes=[{"id": "no.dots"}])
    group = SandboxGroup(id="py-bad", tools=["terminal_tools.py"])
    try:
        group.start_sandbox_group()
        with pytest.raises(BadRequestError) as e:
            group.create_sandbox(id="py-bad-cpu", compute_resources=ComputeResources(cpu="lots"))
        assert e.value.code == "bad_request"
        with pytest.raises(BadRequestError) as e:
            group.create_sandbox(id="py-bad-family", tools=["nope_tools.py"])
        assert "nope_tools" in str(e.value)
        with pytest.raises(BadRequestError, match="no actions"):
            group.attach("py-bad-cpu").send_actions({})
    finally:
        group.end_sandbox_group()
        group.close()


def test_gone_while_running(tool_files: dict[str, str]) -> None:
    """A batch in flight when its sandbox ends fails at once with
    SandboxGoneError (the `ended` event), not after the action timeout."""
    group = SandboxGroup(id="py-gone", tools=[tool_files["my_tools"]], action_timeout=120)
    try:
        group.start_sandbox_group()
        sandbox = group.create_sandbox(id="py-gone-sb")
        sandbox.start()
        future = sandbox.send_actions({"my_tools.nap": {"args": {"seconds": 60}}}, async_=True)
        time.sleep(1)
        assert future.poll() == ([], False)
        start = time.monotonic()
        sandbox.end()
        with pytest.raises(SandboxGoneError, match="ended"):
            future.result(timeout=60)
        assert time.monotonic() - start < 45
    finally:
        group.end_sandbox_group()
        group.close()


async def test_asyncio_client(tool_files: dict[str, str]) -> None:
    """sandox.aio, for frameworks that run an event loop, with the
    credentials from $SANDOX_NATS_CREDS and the URL from $SANDOX_NATS_URL."""
    assert os.environ["SANDOX_NATS_CREDS"]
    async with aio.SandboxGroup(id="py-aio", tools=["filesystem_tools", tool_files["my_tools"]]) as group:
        await group.start_sandbox_group()
        try:
            sandbox = await group.create_sandbox(id="py-aio-sb")
            await sandbox.start()
            futures = [
                await sandbox.send_actions({"greetUse": {"args": {"name": f"n{i}"}}}, async_=True) for i in range(3)
            ]
            results = [await f.wait() for f in futures]
            assert [r[0].return_ for r in results] == [{"greeted": f"n{i}"} for i in range(3)]
            obs = await sandbox.send_actions([{"tool": "filesystem_tools.list_directory", "args": {"path": "."}}])
            assert obs[0].error is None
        finally:
            await group.end_sandbox_group()


def test_tool_formats_match_go() -> None:
    """sandbox.tools(format=...) is what the Go SDK's ToolsAs writes for the
    same sandbox (integration/python_test.go wrote it to SANDOX_IT_FORMATS)."""
    import json

    from sandox.toolformats import FORMATS

    want_dir = Path(os.environ["SANDOX_IT_FORMATS"])
    group = SandboxGroup(id="py-formats-attach")
    sandbox = group.attach(os.environ["SANDOX_IT_FORMATS_SANDBOX"])
    for fmt in FORMATS:
        want = json.loads((want_dir / f"{fmt}.json").read_text())
        got = sandbox.tools(format=fmt)
        assert got == want, fmt
        assert any("shout" in json.dumps(t) for t in got), fmt
    group.close()
