"""JSON Schema for the arguments of a Python function, from its signature.

Part of the sandox Python tool host (toolhost.py loads it by path). Type hints
map to JSON types (str -> string, int -> integer, float -> number, bool ->
boolean, list -> array, dict -> object, Optional -> also null, Literal and
Enum -> enum); a parameter with a default is optional and records it; *args
is an array argument named after it; **kwargs admits any other argument.
Descriptions come from a Google-style "Args:" section or ":param x:" lines.
Standard library only.
"""

import collections.abc
import enum
import inspect
import json
import re
import types
import typing


def describe_parameters(fn):
    """The JSON Schema of fn's args object."""
    try:
        return parameters_schema(fn)
    except Exception:  # an odd signature must not hide the tool
        return {"type": "object", "additionalProperties": True}


def parameters_schema(fn):
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolvable string annotations
        hints = {}
    docs = parameter_docs(inspect.getdoc(fn) or "")
    props, required, additional = {}, [], False
    for p in sig.parameters.values():
        hint = hints.get(p.name, p.annotation)
        if p.kind is p.VAR_KEYWORD:
            additional = type_schema(hint) or True
            continue
        if p.kind is p.VAR_POSITIONAL:
            schema = {"type": "array"}
            if type_schema(hint):
                schema["items"] = type_schema(hint)
        else:
            schema = type_schema(hint)
            if p.default is p.empty:
                required.append(p.name)
            else:
                default = p.default.value if isinstance(p.default, enum.Enum) else p.default
                if default is None:
                    schema = nullable(schema)
                if is_json(default):
                    schema["default"] = default
        if p.name in docs:
            schema = {"description": docs[p.name], **schema}
        props[p.name] = schema
    out = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    out["additionalProperties"] = additional
    return out


SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean",
          bytes: "string", type(None): "null"}
SIMPLE_NAMES = {t.__name__: name for t, name in SIMPLE.items()}
ARRAYS = (list, set, frozenset, collections.abc.Sequence, collections.abc.MutableSequence,
          collections.abc.Iterable, collections.abc.Collection, collections.abc.Set,
          collections.abc.MutableSet)
OBJECTS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


def type_schema(t):
    """The JSON Schema of a type annotation; {} (any value) when unknown."""
    if t is None:
        return {"type": "null"}
    if isinstance(t, str):  # an annotation get_type_hints could not resolve
        return {"type": SIMPLE_NAMES[t]} if t in SIMPLE_NAMES else {}
    if isinstance(t, typing.NewType):
        return type_schema(t.__supertype__)
    origin, args = typing.get_origin(t), typing.get_args(t)
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        notes = [a for a in args[1:] if isinstance(a, str)]
        return {"description": notes[0], **schema} if notes else schema
    if origin in (typing.Union, types.UnionType):
        return union_schema(args)
    if origin is typing.Literal:
        return enum_schema(list(args))
    if isinstance(t, type) and issubclass(t, enum.Enum):
        return enum_schema([m.value for m in t])
    if t in ARRAYS or origin in ARRAYS:
        schema = {"type": "array"}
        if args and type_schema(args[0]):
            schema["items"] = type_schema(args[0])
        if set in (t, origin) or frozenset in (t, origin):
            schema["uniqueItems"] = True
        return schema
    if t is tuple or origin is tuple:
        return tuple_schema(args)
    if t in OBJECTS or origin in OBJECTS:
        schema = {"type": "object"}
        if len(args) == 2 and type_schema(args[1]):
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    if isinstance(t, type):
        if t in SIMPLE:
            return {"type": SIMPLE[t]}
        if typing.is_typeddict(t) or hasattr(t, "__dataclass_fields__"):
            return {"type": "object"}
    return {}


def union_schema(args):
    schemas = [type_schema(a) for a in args if a is not type(None)]
    if not schemas or {} in schemas:
        return {}  # Any absorbs the rest
    if len(schemas) == 1:
        schema = schemas[0]
    elif all(list(s) == ["type"] for s in schemas):
        schema = {"type": [s["type"] for s in schemas]}
    else:
        schema = {"anyOf": schemas}
    return nullable(schema) if type(None) in args else schema


def enum_schema(values):
    values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    values = [v for v in values if is_json(v)]
    kinds = {json_type(v) for v in values}
    schema = {"enum": values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), **schema}
    return schema


def tuple_schema(args):
    if not args:
        return {"type": "array"}
    if len(args) == 2 and args[1] is Ellipsis:
        item = type_schema(args[0])
        return {"type": "array", "items": item} if item else {"type": "array"}
    return {"type": "array", "prefixItems": [type_schema(a) for a in args],
            "minItems": len(args), "maxItems": len(args)}


def nullable(schema):
    """schema that also admits null."""
    schema = dict(schema)
    if not schema:
        return schema
    if "enum" in schema and None not in schema["enum"]:
        schema["enum"] = schema["enum"] + [None]
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if "null" not in kinds:
            schema["type"] = kinds + ["null"]
        return schema
    if "anyOf" in schema:
        schema["anyOf"] = schema["anyOf"] + [{"type": "null"}]
        return schema
    if "enum" in schema:
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def json_type(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(v), "")


def is_json(v):
    try:
        json.dumps(v, allow_nan=False)
        return True
    except Exception:
        return False


SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):$")
ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
SPHINX = re.compile(r"^\s*:param\s+(?:[^:\s]+\s+)?(\w+)\s*:\s*(.*)$", re.M)


def parameter_docs(doc):
    """Per-parameter descriptions from a Google-style "Args:" section or
    reST ":param name:" lines."""
    out = {m[1]: m[2].strip() for m in SPHINX.finditer(doc)}
    section = entry = name = None  # indents of the section header and its entries
    for line in doc.splitlines():
        text, indent = line.strip(), len(line) - len(line.lstrip())
        if SECTION.match(text):
            section, entry, name = indent, None, None
            continue
        if section is None or not text:
            continue
        if indent <= section:
            section = None
            continue
        entry = indent if entry is None else entry
        m = ENTRY.match(text)
        if indent == entry and m:
            name = m[1]
            out[name] = m[2].strip()
        elif name and indent > entry:
            out[name] = (out[name] + " " + text).strip()
    return out
