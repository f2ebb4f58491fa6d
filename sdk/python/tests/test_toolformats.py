import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

import sandox
from sandox.toolformats import FORMATS, ToolNames, convert, model_tool_name

SHAPES = Path(__file__).resolve().parents[2] / "testdata"
TOOLS = [
    sandox.ToolDescription(name="filesystem_tools.read_file", description="Read a file.",
                           parameters={"type": "object", "properties": {"path": {"type": "string"}}}, source="builtin"),
    sandox.ToolDescription(name="user_tools.shout", description="", parameters=None, source="user_tools.py"),
]


@pytest.mark.parametrize(
    "tool,want",
    [("filesystem_tools.read_file", "filesystem_tools__read_file"), ("my-tools.go", "my-tools__go"),
     ("a b.c/d", "a_b__c_d"), ("", "_")],
)
def test_model_tool_name(tool: str, want: str) -> None:
    assert model_tool_name(tool) == want


def test_long_names_hashed() -> None:
    long = "user_tools." + "a" * 80
    got = model_tool_name(long)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{64}", got)
    assert got == ("user_tools__" + "a" * 80)[:55] + "_" + hashlib.sha256(long.encode()).hexdigest()[:8]
    assert got != model_tool_name("user_tools." + "a" * 79 + "b")


def test_resolve() -> None:
    names = ToolNames(TOOLS)
    assert names.resolve("filesystem_tools__read_file") == "filesystem_tools.read_file"
    assert names.resolve("terminal_tools.run") == "terminal_tools.run"
    assert names.resolve("terminal_tools__run") == "terminal_tools.run"
    assert names.resolve("run") == "run"
    with pytest.raises(sandox.BadRequestError):
        ToolNames([sandox.ToolDescription(name=n, description="", parameters=None, source="") for n in ("a.b__c", "a__b.c")])


def test_action_from_openai_call() -> None:
    a = ToolNames(TOOLS).action("filesystem_tools__read_file", '{"path": "a.txt"}', "call_1")
    assert (a.tool, a.args, a.description) == ("filesystem_tools.read_file", {"path": "a.txt"}, "model tool call call_1")


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_published_shapes(fmt: str) -> None:
    """The export validates against the shape each API publishes (sdk/testdata)."""
    shape = json.loads((SHAPES / f"{fmt}_tools.schema.json").read_text())
    jsonschema.validate(convert(TOOLS, fmt), shape)


def test_jsonschema_format_keeps_names() -> None:
    out = convert(TOOLS, "jsonschema")
    assert [t["name"] for t in out] == ["filesystem_tools.read_file", "user_tools.shout"]
    assert out[1]["parameters"] == {"type": "object", "properties": {}}


def test_bad_format_and_parameters() -> None:
    assert "openai" in FORMATS
    with pytest.raises(sandox.BadRequestError, match="unknown tool format"):
        convert(TOOLS, "gemini")
    bad = [sandox.ToolDescription(name="a.b", description="", parameters={"type": "string"}, source="")]
    with pytest.raises(sandox.BadRequestError, match="want \"object\""):
        convert(bad, "openai")
