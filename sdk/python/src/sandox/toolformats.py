"""A sandbox's tools in the function-calling formats of model APIs, as the
Go SDK's sdk/toolformats.go and sdk/toolnames.go write them
(docs/tool-formats.md)."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .errors import BadRequestError
from .models import Action, ToolDescription

FORMATS = ("openai", "anthropic", "mcp", "jsonschema")
"""Every format, in the order the CLI documents them."""

MAX_MODEL_TOOL_NAME = 64
"""The longest tool name the OpenAI and Anthropic APIs accept."""

_SEP = "__"
_OTHER = re.compile(r"[^A-Za-z0-9_-]")


def model_tool_name(tool: str) -> str:
    """Returns the name under which a sandox tool name is offered to a model
    API that allows only letters, digits, "_" and "-" and at most 64
    characters: the dot becomes "__", any other character outside the set
    "_"; a longer name keeps 55 characters and ends with "_" and 8 hex digits
    of its SHA-256 (sdk.ModelToolName in Go)."""
    name = "".join(_SEP if ch == "." else ("_" if _OTHER.match(ch) else ch) for ch in tool)
    if not name:
        return "_"
    if len(name.encode()) <= MAX_MODEL_TOOL_NAME:
        return name
    return name[: MAX_MODEL_TOOL_NAME - 9] + "_" + hashlib.sha256(tool.encode()).hexdigest()[:8]


def object_schema(params: Any) -> dict[str, Any]:
    """Returns a tool's parameter schema as every format wants it: an object
    schema whose type is "object" (sdk.ObjectSchema in Go)."""
    if params is None:
        return {"type": "object", "properties": {}}
    if not isinstance(params, dict):
        raise BadRequestError(f"parameters are not a JSON object: {json.dumps(params)[:80]}")
    if "type" not in params:
        return {**params, "type": "object"}
    if params["type"] != "object":
        raise BadRequestError(f'parameters have type {json.dumps(params["type"])}, want "object"')
    return params


class ToolNames:
    """Maps the names a model uses for a sandbox's tools back to sandox tool
    names (sdk.ToolNames in Go)."""

    def __init__(self, tools: list[ToolDescription] | None = None) -> None:
        self._by_model: dict[str, str] = {}
        for t in tools or []:
            m = model_tool_name(t.name)
            prev = self._by_model.get(m)
            if prev is not None and prev != t.name:
                raise BadRequestError(f"tools {prev!r} and {t.name!r} share the model name {m!r}")
            self._by_model[m] = t.name

    def resolve(self, model_name: str) -> str:
        """Returns the sandox tool name for a name as a model wrote it."""
        if model_name in self._by_model:
            return self._by_model[model_name]
        if "." in model_name:
            return model_name
        mod, sep, fn = model_name.partition(_SEP)
        if sep and mod and fn:
            return mod + "." + fn
        return model_name

    def action(self, name: str, arguments: Any = None, call_id: str = "") -> Action:
        """Turns a model's tool call into an action: arguments are a dict, a
        JSON string holding one (OpenAI), or None."""
        if not name:
            raise BadRequestError(f"tool call {call_id!r} has no name")
        if isinstance(arguments, (str, bytes)):
            text = arguments.strip()
            try:
                arguments = json.loads(text) if text else {}
            except ValueError as e:
                raise BadRequestError(f"tool call {name} ({call_id}): arguments: {e}") from e
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise BadRequestError(f"tool call {name} ({call_id}): arguments must be a JSON object")
        return Action(
            tool=self.resolve(name),
            args=arguments,
            description=f"model tool call {call_id}" if call_id else None,
        )


def convert(tools: list[ToolDescription], format: str) -> list[dict[str, Any]]:
    """Converts tool descriptions to a format's JSON list (sdk.ExportTools in
    Go). Raises BadRequestError for an unknown format, two tools with the
    same model name, or parameters that are not an object schema."""
    if format not in FORMATS:
        raise BadRequestError(f"unknown tool format {format!r} (want openai, anthropic, mcp or jsonschema)")
    ToolNames(tools)
    out: list[dict[str, Any]] = []
    for t in tools:
        try:
            params = object_schema(t.parameters)
        except BadRequestError as e:
            raise BadRequestError(f"tool {t.name}: {e.message}") from e
        name = model_tool_name(t.name)
        desc = {"description": t.description} if t.description else {}
        if format == "openai":
            out.append({"type": "function", "function": {"name": name, **desc, "parameters": params}})
        elif format == "anthropic":
            out.append({"name": name, **desc, "input_schema": params})
        elif format == "mcp":
            out.append({"name": name, **desc, "inputSchema": params})
        else:
            out.append({**t.model_dump(), "parameters": params})
    return out
