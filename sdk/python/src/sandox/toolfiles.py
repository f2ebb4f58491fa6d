"""Reading a tools list, as the Go SDK's readTools does (sdk/toolfiles.go)."""

from __future__ import annotations

import base64
import os
import re

from .errors import BadRequestError
from .models import ToolFile

# A tool module named alone, with or without ".py".
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.py)?$")


def read_tools(entries: list[str | os.PathLike[str]] | None) -> tuple[list[ToolFile], list[str]]:
    """Sorts a tools list into tool files and tool families.

    An entry that is a bare module name ("web_tools.py", "web_tools") and no
    file at that path names a built-in family, sent without ".py"; the
    orchestrator knows the families and refuses a name that is none of
    them. Every other entry is a tool file, read from disk, that keeps its
    base name. Raises BadRequestError naming every file that cannot be read.
    """
    files: list[ToolFile] = []
    families: list[str] = []
    errs: list[str] = []
    for entry in entries or []:
        p = os.fspath(entry)
        try:
            with open(p, "rb") as f:
                data = f.read()
        except FileNotFoundError as e:
            if _MODULE_NAME.match(p):
                families.append(p.removesuffix(".py"))
                continue
            errs.append(f"tool file: {e}")
            continue
        except OSError as e:
            errs.append(f"tool file: {e}")
            continue
        files.append(ToolFile(name=os.path.basename(p), content=base64.b64encode(data).decode()))
    if errs:
        raise BadRequestError("; ".join(errs))
    return files, families
