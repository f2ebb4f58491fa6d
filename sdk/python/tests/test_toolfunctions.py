"""A function in a tools list stands for the file of the module that
defines it (sandox.toolfiles.function_file); anything else that is not a
path or a family's name is refused with BadRequestError saying why, never
a raw TypeError."""

from __future__ import annotations

import base64
import functools
import importlib
import json
import os.path
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

import sandox
from sandox.config import group_spec, sandbox_spec
from sandox.toolfiles import read_tools

SOURCE = '''"""Tools of the test."""


def greet(name: str) -> str:
    """Greets someone."""
    return "hello " + name


def shout(text: str) -> str:
    """Shouts."""
    return text.upper()


def _private() -> None:
    pass


def outer():
    def inner() -> None:
        pass

    return inner


class Thing:
    def method(self) -> None:
        pass


square = lambda x: x * x  # noqa: E731
'''


def load(path: Path) -> ModuleType:
    """Imports the module at path under its file's name."""
    sys.path.insert(0, str(path.parent))
    try:
        return importlib.import_module(path.stem)
    finally:
        sys.path.remove(str(path.parent))


@pytest.fixture
def mod(tmp_path: Path) -> Iterator[ModuleType]:
    """A tool module of the user's, pt_tools.py, imported."""
    f = tmp_path / "pt_tools.py"
    f.write_text(SOURCE)
    m = load(f)
    yield m
    sys.modules.pop("pt_tools", None)


def test_function_sends_its_module(mod: ModuleType) -> None:
    files, families = read_tools([mod.greet, "terminal_tools"])
    assert families == ["terminal_tools"]
    assert [f.name for f in files] == ["pt_tools.py"]
    assert base64.b64decode(files[0].content).decode() == SOURCE


def test_module_sent_once(mod: ModuleType) -> None:
    """Two functions of one module, and the module's path too, are one file."""
    files, _ = read_tools([mod.__file__, mod.greet, mod.shout])
    assert [f.name for f in files] == ["pt_tools.py"]


def test_two_modules_of_one_name(mod: ModuleType, tmp_path: Path) -> None:
    other = tmp_path / "other" / "pt_tools.py"
    other.parent.mkdir()
    other.write_text("def greet(): pass\n")
    sys.modules.pop("pt_tools")
    second = load(other)
    with pytest.raises(sandox.BadRequestError, match="is named pt_tools.py, as .* is: rename one"):
        read_tools([mod.greet, second.greet])


def in_main() -> object:
    """A function defined in __main__ that has a file: a script."""
    ns: dict = {"__name__": "__main__"}
    exec("def helper(x):\n    return x\n", ns)  # noqa: S102
    return ns["helper"]


@pytest.fixture
def script_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """A function of a __main__ module that has a file, as `python agent.py` makes."""
    script = tmp_path / "agent.py"
    script.write_text("def helper(x):\n    return x\n")
    main = ModuleType("__main__")
    main.__file__ = str(script)
    exec(compile(script.read_text(), str(script), "exec"), main.__dict__)  # noqa: S102
    monkeypatch.setitem(sys.modules, "__main__", main)
    return main.helper


REFUSED = [
    ("a lambda", lambda m: m.square, "a lambda has no name"),
    ("a builtin", lambda m: len, "a builtin_function_or_method is not a function of a tool module"),
    ("a nested function", lambda m: m.outer(), r"outer.<locals>.inner is nested"),
    ("a method", lambda m: m.Thing().method, "a method is not a function of a tool module"),
    ("a class", lambda m: m.Thing, "a type is not a function of a tool module"),
    ("a partial", lambda m: functools.partial(m.greet, "x"), "a partial is not a function"),
    ("a private function", lambda m: m._private, "private function"),
    ("a standard library function", lambda m: json.dumps, "standard library or an installed package"),
    ("a frozen standard library function", lambda m: os.path.join, "no Python source file"),
    ("an installed package's function", lambda m: jsonschema.validate, "standard library or an installed package"),
    ("a number", lambda m: 42, r"tool entry 42 \(int\): want a family's name"),
    ("a dict", lambda m: {"x": 1}, r"\(dict\): want"),
    ("bytes", lambda m: b"my_tools.py", r"\(bytes\): want"),
    ("a module object", lambda m: m, r"\(module\): want"),
]


@pytest.mark.parametrize("name,entry,want", REFUSED, ids=[c[0] for c in REFUSED])
def test_refused(mod: ModuleType, name: str, entry, want: str) -> None:
    with pytest.raises(sandox.BadRequestError, match=want) as e:
        read_tools([entry(mod)])
    assert e.value.__class__ is sandox.BadRequestError


def test_interactive_main_refused() -> None:
    """A function of a REPL or `python -c` (a __main__ without a file)."""
    with pytest.raises(sandox.BadRequestError, match="__main__"):
        read_tools([in_main()])


def test_script_main_refused(script_main) -> None:
    """A script's own functions are refused even though it has a file:
    importing it in the sandbox would run the script there."""
    with pytest.raises(sandox.BadRequestError, match="would import and so run again there"):
        read_tools([script_main])


def test_package_init_refused(tmp_path: Path) -> None:
    pkg = tmp_path / "pt_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("def tool(): pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        m = importlib.import_module("pt_pkg")
    finally:
        sys.path.remove(str(tmp_path))
    try:
        with pytest.raises(sandox.BadRequestError, match="__init__.py"):
            read_tools([m.tool])
    finally:
        sys.modules.pop("pt_pkg", None)


def test_every_error_named(mod: ModuleType) -> None:
    """All the bad entries of one list are named in one error."""
    with pytest.raises(sandox.BadRequestError) as e:
        read_tools([mod.square, 42, mod.greet])
    assert "lambda" in str(e.value) and "42" in str(e.value)


def test_in_specs_and_groups(mod: ModuleType) -> None:
    """Functions are taken wherever a tools list is: the group's, an
    initial sandbox's, create_sandbox's; a refusal names the sandbox."""
    spec = group_spec("g", None, None, [mod.greet], None, [{"id": "i", "tools": [mod.shout]}], None)
    assert [t.name for t in spec.tools] == ["pt_tools.py"]
    assert [t.name for t in spec.sandboxes[0].tools] == ["pt_tools.py"]
    assert [t.name for t in sandbox_spec("s", [mod.greet], None, None).tools] == ["pt_tools.py"]
    with pytest.raises(sandox.BadRequestError, match="sandbox s: tool .*lambda"):
        sandbox_spec("s", [mod.square], None, None)
    g = sandox.SandboxGroup(tools=[mod.greet])
    assert [t.name for t in g.spec.tools] == ["pt_tools.py"]
    g.close()


@pytest.mark.parametrize("tools", ["my_tools.py", Path("my_tools.py")])
def test_a_lone_entry_is_not_a_list(tools) -> None:
    with pytest.raises(sandox.BadRequestError, match="want a list"):
        sandox.SandboxGroup(tools=tools)
