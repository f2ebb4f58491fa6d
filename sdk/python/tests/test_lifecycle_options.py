"""The lifecycle options both SDKs expose (docs/python.md#lifecycle-options):
a group's TTL and keep_database_data, a sandbox's TTL and idle timeout,
checked as the Go SDK checks them (sdk/lifetime_test.go's
TestLifecycleOptionsValidated) and carried on the wire as the schema
says; and the server lists a url setting may hold."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import nats
import pytest

import sandox
from sandox import aio
from sandox.config import group_spec, sandbox_spec
from sandox.aio.conn import new_command
from sandox.credentials import server_list
from sandox.models import CheckpointPolicy

from test_protocol import orchestrate, schema, status

DEAD = "nats://127.0.0.1:1"
"""A server URL nothing answers on."""


@pytest.fixture
async def peer(nats_url: str):
    nc = await nats.connect(nats_url)
    yield nc
    await nc.close()


def answer(cmd: dict) -> dict:
    if cmd["kind"] == "start_group":
        return {"sandboxes": [status(sb["id"]) for sb in cmd.get("group", {}).get("sandboxes", [])]}
    if cmd["kind"] in ("create_sandbox", "start_sandbox"):
        return {"sandboxes": [status(cmd["sandbox_id"])]}
    return {}


def check_lifetimes(seen: list) -> None:
    """The commands are valid against command.schema.json and carry the
    lifetimes the test set."""
    validator = jsonschema.Draft202012Validator(schema("command"))
    for _, cmd, _ in seen:
        validator.validate(cmd)
    by_kind = {cmd["kind"]: cmd for _, cmd, _ in seen}
    group = by_kind["create_group"]["group"]
    assert group["ttl_seconds"] == 3600
    assert group["keep_database_data"] is True
    assert group["sandboxes"] == [{"id": "static-1", "ttl_seconds": 60, "idle_timeout_seconds": 1.5}]
    sb = by_kind["create_sandbox"]["sandbox"]
    assert sb["ttl_seconds"] == 90
    assert sb["idle_timeout_seconds"] == 2.5


async def test_lifetimes_on_the_wire_aio(nats_url: str, peer) -> None:
    """The asyncio client, given its servers as a comma-separated string
    whose first server does not answer."""
    task, seen = await orchestrate(peer, answer)
    try:
        g = aio.SandboxGroup(
            id="g", url=f"{DEAD},{nats_url}", credentials="", command_timeout=10, ttl=timedelta(hours=1),
            keep_database_data=True, sandboxes=[sandox.InitialSandbox(id="static-1", ttl=60, idle_timeout=1.5)],
        )
        await g.start_sandbox_group()
        await g.create_sandbox("sb-1", ttl=timedelta(seconds=90), idle_timeout=2.5)
        await g.close()
    finally:
        task.cancel()
    check_lifetimes(seen)


async def test_lifetimes_on_the_wire_sync(nats_url: str, peer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The synchronous client, given its servers as $SANDOX_NATS_URL,
    comma-separated as docs/deploy.md writes it, and as a list."""
    task, seen = await orchestrate(peer, answer)
    try:
        for url in ("", [DEAD, nats_url]):
            monkeypatch.setenv("SANDOX_NATS_URL", f"{DEAD}, {nats_url}")
            seen.clear()
            g = sandox.SandboxGroup(
                id="g", url=url, credentials="", command_timeout=10, ttl=3600, keep_database_data=True,
                sandboxes=[{"id": "static-1", "ttl": 60, "idle_timeout": timedelta(seconds=1.5)}],
            )
            # The sync client blocks on its own loop's thread: let this
            # test's loop serve the commands meanwhile.
            await asyncio.to_thread(g.start_sandbox_group)
            await asyncio.to_thread(g.create_sandbox, "sb-1", ttl=90, idle_timeout=2.5)
            await asyncio.to_thread(g.close)
            check_lifetimes(seen)
    finally:
        task.cancel()


def test_no_lifetime_is_omitted() -> None:
    """Unset and 0 are no limit, sent as nothing (the Go SDK's zero value)."""
    spec = group_spec("g", None, None, None, None, [{"id": "s", "ttl": 0}], None)
    dumped = json.loads(spec.model_dump_json(exclude_none=True))
    assert "ttl_seconds" not in dumped and "keep_database_data" not in dumped
    assert dumped["sandboxes"] == [{"id": "s"}]
    assert "ttl_seconds" not in sandbox_spec("s", None, None, None, ttl=timedelta(0)).model_dump(exclude_none=True)


# The same cases as sdk/lifetime_test.go's TestLifecycleOptionsValidated,
# with Python's spelling, and the values only Python can be given.
GROUP_CASES = [
    ("negative group ttl", {"ttl": -1}, "group ttl -1"),
    ("negative group ttl as a timedelta", {"ttl": timedelta(seconds=-1)}, "group ttl"),
    ("nan group ttl", {"ttl": float("nan")}, "group ttl nan"),
    ("text group ttl", {"ttl": "1h"}, "group ttl '1h': want seconds"),
    ("negative ttl of an initial sandbox", {"sandboxes": [{"id": "i", "ttl": -1}]}, "sandbox i: ttl -1"),
    ("group egress allowlist without destinations", {"egress": {"policy": "allowlist"}}, "allow lists nothing"),
    ("group database unknown", {"database_access": [{"database": "mysql", "namespace": "n", "read": True, "write": False}]}, "database"),
    ("group namespace bad", {"database_access": [{"database": "qdrant", "namespace": "a.b", "read": True, "write": False}]}, "namespace 'a.b'"),
    ("placement unknown", {"placement": "scatter"}, "placement 'scatter'"),
    ("keep_database_data not a bool", {"keep_database_data": "yes"}, "keep_database_data 'yes'"),
    ("negative checkpoints keep", {"checkpoints": {"auto": True, "keep": -1}}, "checkpoints.keep -1: want 0 (the default, 10"),
    ("negative checkpoints keep as a model", {"checkpoints": CheckpointPolicy(auto=True, keep=-2)}, "checkpoints.keep -2"),
    ("checkpoints keep a bool", {"checkpoints": {"auto": True, "keep": True}}, "checkpoints.keep True"),
    ("checkpoints unknown field", {"checkpoints": {"auto": True, "every": 3}}, "checkpoints:"),
    ("checkpoints auto not a bool", {"checkpoints": {"auto": "sometimes"}}, "checkpoints:"),
    ("one server URL empty", {"url": "nats://a:4222,"}, "empty server URL"),
    ("no server URL in a list", {"url": [""]}, "empty server URL"),
    ("an empty list of servers", {"url": []}, "empty server URL"),
]

SANDBOX_CASES = [
    ("negative ttl", {"ttl": -60}, "ttl -60"),
    ("negative idle timeout", {"idle_timeout": -1}, "idle timeout -1"),
    ("infinite idle timeout", {"idle_timeout": float("inf")}, "idle timeout inf"),
    ("bool idle timeout", {"idle_timeout": True}, "idle timeout True: want seconds"),
    ("sandbox egress policy unknown", {"egress": {"policy": "some"}}, "egress"),
    ("sandbox namespace bad", {"attached_databases": [{"database": "qdrant", "namespace": "a.b", "read": True, "write": False}]}, "namespace 'a.b'"),
]


@pytest.mark.parametrize("name,kwargs,want", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_group_options_validated(name: str, kwargs: dict, want: str) -> None:
    with pytest.raises(sandox.BadRequestError, match=want.replace("(", r"\(").replace(".", r"\.")):
        sandox.SandboxGroup(id="v", **kwargs)
    with pytest.raises(sandox.BadRequestError, match=want.replace("(", r"\(").replace(".", r"\.")):
        aio.SandboxGroup(id="v", **kwargs)


@pytest.mark.parametrize("name,kwargs,want", SANDBOX_CASES, ids=[c[0] for c in SANDBOX_CASES])
def test_sandbox_options_validated(name: str, kwargs: dict, want: str) -> None:
    """create_sandbox refuses before it connects (the url is dead)."""
    with sandox.SandboxGroup(id="v", url=DEAD) as g:
        with pytest.raises(sandox.BadRequestError, match=f"sandbox sb: {want}"):
            g.create_sandbox("sb", **kwargs)


@pytest.mark.parametrize(
    "url,want",
    [
        ("nats://a:4222", ["nats://a:4222"]),
        ("nats://a:4222,nats://b:4222", ["nats://a:4222", "nats://b:4222"]),
        (" nats://a:4222 , tls://b:4222", ["nats://a:4222", "tls://b:4222"]),
        (["nats://a:4222", "nats://b:4222"], ["nats://a:4222", "nats://b:4222"]),
        (("nats://a:4222,nats://b:4222",), ["nats://a:4222", "nats://b:4222"]),
    ],
)
def test_server_list(url, want) -> None:
    assert server_list(url) == want


@pytest.mark.parametrize("url", ["", ",", "nats://a,,nats://b", [], [1], b"nats://a"])
def test_bad_server_list(url) -> None:
    with pytest.raises(ValueError, match="NATS url"):
        server_list(url)


async def test_dead_servers_are_unavailable() -> None:
    """A list of servers none of which answers is UnavailableError naming them all."""
    g = aio.SandboxGroup(id="g", url=[DEAD, "nats://127.0.0.1:2"], credentials="", connect_timeout=1)
    with pytest.raises(sandox.UnavailableError, match="127.0.0.1:1,nats://127.0.0.1:2"):
        await g.start_sandbox_group()
    await g.close()


def test_population_and_keep_data(tmp_path: Path) -> None:
    pop = tmp_path / "p.yml"
    pop.write_text("qdrant: []\n")
    g = sandox.SandboxGroup(id="g", initial_database_population_config=pop, keep_database_data=True)
    assert g.spec.keep_database_data is True
    g.close()


@pytest.mark.parametrize(
    "value,want",
    [
        ({"auto": True, "keep": 20}, {"auto": True, "keep": 20}),
        ({"auto": True}, {"auto": True}),
        (CheckpointPolicy(auto=True, keep=0), {"auto": True, "keep": 0}),
    ],
)
def test_checkpoints_on_the_wire(value, want: dict) -> None:
    """A group's automatic checkpoints are the spec's checkpoints field
    (GroupConfig.Checkpoints in Go), valid against command.schema.json;
    none set sends none."""
    for make in (sandox.SandboxGroup, aio.SandboxGroup):
        g = make(id="g", checkpoints=value)
        dumped = json.loads(g.spec.model_dump_json(exclude_none=True))
        assert dumped["checkpoints"] == want
        cmd = new_command(kind="create_group", group_id="g", group=g.spec)
        jsonschema.Draft202012Validator(schema("command")).validate(json.loads(cmd.model_dump_json(exclude_none=True)))
        g.close() if isinstance(g, sandox.SandboxGroup) else None
    assert "checkpoints" not in group_spec("g", None, None, None, None, None, None).model_dump(exclude_none=True)
