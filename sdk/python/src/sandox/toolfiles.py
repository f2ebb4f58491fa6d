"""Reading a tools list, as the Go SDK's readTools does (sdk/toolfiles.go),
and, for Python only, taking a function for the module that defines it."""

from __future__ import annotations

import base64
import os
import re
import inspect
import sysconfig
import types
from collections.abc import Sequence
from typing import Any, Callable, Union

from .errors import BadRequestError
from .models import ToolFile

# A tool module named alone, with or without ".py".
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.py)?$")

ToolEntry = Union[str, "os.PathLike[str]", Callable[..., Any]]
"""One entry of a tools list: a family's name, a tool file's path, or a
function of a tool module."""


def read_tools(entries: Sequence[ToolEntry] | None) -> tuple[list[ToolFile], list[str]]:
    """Sorts a tools list into tool files and tool families.

    An entry that is a bare module name ("web_tools.py", "web_tools") and no
    file at that path names a built-in family, sent without ".py"; the
    orchestrator knows the families and refuses a name that is none of
    them. Every other string or path is a tool file, read from disk, that
    keeps its base name. A function stands for the source file of the
    module that defines it (function_file says which functions qualify);
    the sandbox then calls it, and every other public function of that
    file, as module.function. A module given by several functions, or by
    a function and its path, is sent once.

    Raises BadRequestError naming every entry that cannot be used: a file
    that cannot be read, a function that cannot be copied, or any other
    object.
    """
    files: list[ToolFile] = []
    families: list[str] = []
    errs: list[str] = []
    sent: dict[str, str] = {}  # file name -> the real path it was read from
    for entry in entries or []:
        if isinstance(entry, (str, os.PathLike)):
            p = os.fspath(entry)
            if not isinstance(p, str):
                errs.append(f"tool entry {entry!r}: a path must be text, not bytes")
                continue
            from_function = False
        elif callable(entry):
            try:
                p = function_file(entry)
            except BadRequestError as e:
                errs.append(e.message)
                continue
            from_function = True
        else:
            errs.append(
                f"tool entry {entry!r} ({type(entry).__name__}): want a family's name, "
                "a tool file's path, or a function of a tool module"
            )
            continue
        name = os.path.basename(p)
        real = os.path.realpath(p)
        if from_function and name in sent:
            if sent[name] != real:
                errs.append(f"tool {_describe(entry)}: {p} is named {name}, as {sent[name]} is: rename one")
            continue  # this module is sent already
        try:
            with open(p, "rb") as f:
                data = f.read()
        except FileNotFoundError as e:
            if not from_function and _MODULE_NAME.match(p):
                families.append(p.removesuffix(".py"))
                continue
            errs.append(f"tool file: {e}")
            continue
        except OSError as e:
            errs.append(f"tool file: {e}")
            continue
        sent.setdefault(name, real)
        files.append(ToolFile(name=name, content=base64.b64encode(data).decode()))
    if errs:
        raise BadRequestError("; ".join(errs))
    return files, families


def function_file(fn: Callable[..., Any]) -> str:
    """Returns the source file of the module that defines fn, to be copied
    into the sandbox under its own name, so that fn is the tool
    module.function there.

    fn must be a plain function (def) at the top level of a module whose
    source is a .py file of the user's own: not a lambda, a builtin, a
    method, a nested function, a class or another callable object; not
    private (its name starting with "_": the sandbox makes tools of public
    functions only); not from the standard library or an installed
    package; and not from __main__. A script's own file is refused even
    when it has one: the sandbox imports a tool file, which would run the
    script's top level there (and a REPL or `python -c` has no file at
    all); put the tools in a module of their own and import it. Raises
    BadRequestError saying which rule fn breaks.
    """
    what = _describe(fn)
    if isinstance(fn, types.BuiltinFunctionType) or not isinstance(fn, types.FunctionType):
        raise BadRequestError(
            f"tool {what}: a {type(fn).__name__} is not a function of a tool module; "
            "pass a function defined with def in a .py file of yours, or the file's path"
        )
    if fn.__name__ == "<lambda>":
        raise BadRequestError(f"tool {what}: a lambda has no name to call it by; define it with def in a tool module")
    if fn.__qualname__ != fn.__name__:
        raise BadRequestError(
            f"tool {what}: only a function at the top level of its module can be a tool "
            f"({fn.__qualname__} is nested in a function or class)"
        )
    if fn.__name__.startswith("_"):
        raise BadRequestError(f"tool {what}: a private function (starting with _) is not a tool")
    if fn.__module__ == "__main__":
        raise BadRequestError(
            f"tool {what}: defined in the script or session being run (__main__), "
            "whose file the sandbox would import and so run again there; "
            "put the tool functions in a module of their own (my_tools.py) and pass those"
        )
    # The file the function was compiled from: that of its module, found
    # without asking sys.modules, where another module may have taken its
    # name since.
    path = inspect.unwrap(fn).__code__.co_filename
    if not path.endswith(".py") or not os.path.isfile(path):
        raise BadRequestError(f"tool {what}: it has no Python source file to copy ({path})")
    if _installed(path):
        raise BadRequestError(
            f"tool {what}: from {path}, part of the standard library or an installed package; "
            "pass a function of a module of your own"
        )
    name = os.path.basename(path)
    if name == "__init__.py":
        raise BadRequestError(
            f"tool {what}: defined in the package {fn.__module__}'s __init__.py; "
            "the sandbox names a tool module after its file: move the tools to a module file"
        )
    if name.startswith("_"):
        raise BadRequestError(f"tool {what}: its module file {name} starts with _, which the sandbox does not take as tools")
    return path


def _installed(path: str) -> bool:
    """Reports whether path is in the standard library or the
    site-packages of this Python."""
    real = os.path.realpath(path)
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        root = paths.get(key)
        if root and real.startswith(os.path.realpath(root) + os.sep):
            return True
    return False


def _describe(entry: object) -> str:
    module = getattr(entry, "__module__", None)
    qualname = getattr(entry, "__qualname__", None)
    if module and qualname:
        return f"{module}.{qualname}"
    return repr(entry)
