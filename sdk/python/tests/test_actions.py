import json

import pytest

import sandox
from sandox.actions import encode, to_list

OBJECT_FORM = {
    "filesystem_tools.write_file": {"description": "take a note", "args": {"path": "notes.txt", "content": "hi\n"}},
    "terminal_tools.run": {"description": "look", "args": {"command": "cat notes.txt"}},
    "greetUse": {"args": {"name": "Ada"}},
}
LIST_FORM = [
    {"tool": "terminal_tools.run", "args": {"command": "echo 1"}},
    {"tool": "terminal_tools.run", "args": {"command": "echo 2"}},
]


@pytest.mark.parametrize(
    "payload,tools",
    [
        (OBJECT_FORM, ["filesystem_tools.write_file", "terminal_tools.run", "greetUse"]),
        (json.dumps(OBJECT_FORM), ["filesystem_tools.write_file", "terminal_tools.run", "greetUse"]),
        (LIST_FORM, ["terminal_tools.run", "terminal_tools.run"]),
        ([sandox.Action(tool="a.b", args={})], ["a.b"]),
        (sandox.Actions.model_validate(LIST_FORM), ["terminal_tools.run", "terminal_tools.run"]),
    ],
    ids=["object", "object json", "list", "models", "Actions"],
)
def test_forms_keep_order(payload, tools) -> None:
    got = to_list(payload)
    assert [a.tool for a in got] == tools
    sent = json.loads(encode(got))
    assert [a["tool"] for a in sent] == tools
    assert all(set(a) <= {"tool", "description", "args"} for a in sent)


@pytest.mark.parametrize(
    "payload",
    [{}, [], "{not json", {"a.b": {"argz": {}}}, [{"description": "no tool"}], {"a.b": {"args": [1]}}, 5],
    ids=["empty object", "empty list", "bad json", "unknown key", "no tool", "args not object", "number"],
)
def test_bad_payloads(payload) -> None:
    with pytest.raises(sandox.BadRequestError):
        to_list(payload)
