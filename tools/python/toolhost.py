"""The sandox Python tool host.

The executor (package tools/python) starts this script once per sandbox as
``python3 toolhost.py TOOL_DIR``. It imports every ``*.py`` file in TOOL_DIR,
describes their public functions in a hello message, then runs one call at a
time. It speaks JSON lines on file descriptors the executor passes in:

    fd 3  requests from the executor  {"id", "op": "call", "module", "function", "args", "cwd"}
    fd 4  messages to the executor    {"op": "hello", ...} first, then {"id", "ok", "return" | "error"}
    fd 5  file that receives a call's stdout (the executor truncates it per call)
    fd 6  file that receives a call's stderr

Nothing but protocol messages is ever written to fd 4. While a function runs,
fds 1 and 2 point at fds 5 and 6, so prints, C extensions and child processes
are all captured. toolschema.py, beside this file, turns signatures into JSON
Schema. The host uses the Python standard library only.
"""

import sys

# The interpreter put this script's directory first on sys.path. Drop it
# before importing anything: nothing there is meant to be imported by name.
if not getattr(sys.flags, "safe_path", False):
    del sys.path[0]

import faulthandler  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import traceback  # noqa: E402

PROTOCOL = 1
REQUESTS, RESPONSES, CALL_STDOUT, CALL_STDERR = 3, 4, 5, 6
HOST_FILE = os.path.abspath(__file__)
SCHEMA_FILE = os.path.join(os.path.dirname(HOST_FILE), "toolschema.py")
IMPORTLIB_DIR = os.path.dirname(importlib.__file__)


def load_schema_module():
    """toolschema.py, which sits beside this file, loaded by path under a
    name no tool file can take."""
    spec = importlib.util.spec_from_file_location("_sandox_toolschema", SCHEMA_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


toolschema = load_schema_module()


def main():
    for fd in (REQUESTS, RESPONSES, CALL_STDOUT, CALL_STDERR):
        os.set_inheritable(fd, False)  # tools' child processes must not hold them
    tool_dir = os.path.abspath(sys.argv[1])
    sys.path.insert(0, tool_dir)  # tool files import each other
    faulthandler.enable()  # a crash dumps the Python stack to fd 2: the call's stderr
    functions, tools, errors = load(tool_dir)
    responses = os.fdopen(RESPONSES, "wb")

    def send(msg):
        responses.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
        responses.flush()

    send({"op": "hello", "protocol": PROTOCOL, "python": sys.version.split()[0],
          "tools": tools, "errors": errors})
    base_cwd = os.getcwd()
    with os.fdopen(REQUESTS, "rb") as requests:
        for line in requests:  # EOF: the executor is done with us
            req = {}
            try:
                req = json.loads(line)
                reply = handle(functions, req, base_cwd)
            except Exception as exc:  # a bug here must not kill the host
                reply = failure("internal", exc)
            reply["id"] = req.get("id") if isinstance(req, dict) else None
            send(reply)


# Loading tool files.

def load(tool_dir):
    """Import every tool file; return the callable functions by (module,
    name), their descriptions, and one error per file that did not import."""
    functions, tools, errors = {}, [], []
    for entry in sorted(os.listdir(tool_dir)):
        path = os.path.join(tool_dir, entry)
        name = entry[:-3]
        if not entry.endswith(".py") or entry.startswith(("_", ".")) or not os.path.isfile(path):
            continue
        try:
            if not name.isidentifier():
                raise ImportError(f"{entry!r} is not a valid Python module name")
            module = import_file(name, path)
        except BaseException as exc:  # SystemExit at import time too
            errors.append({"module": name, "file": entry, "message": exception_line(exc),
                           "traceback": format_traceback(exc)})
            continue
        for fname, fn in vars(module).items():
            if fname.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != name:
                continue  # private, not a function, or imported from elsewhere
            functions[(name, fname)] = fn
            tools.append({"module": name, "function": fname,
                          "description": inspect.getdoc(fn) or "",
                          "parameters": toolschema.describe_parameters(fn)})
    return functions, tools, errors


def import_file(name, path):
    loaded = sys.modules.get(name)
    if loaded is not None and not same_file(getattr(loaded, "__file__", None), path):
        raise ImportError(f"module name {name!r} is taken by {loaded!r}; rename the tool file")
    module = importlib.import_module(name)
    if not same_file(getattr(module, "__file__", None), path):
        raise ImportError(f"importing {name!r} loaded {module!r}, not the tool file; rename it")
    return module


def same_file(a, b):
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


# Calling.

def handle(functions, req, base_cwd):
    if req.get("op") != "call":
        return {"ok": False, "error": {"kind": "protocol", "message": f"unknown op {req.get('op')!r}"}}
    module, function = req.get("module"), req.get("function")
    fn = functions.get((module, function))
    if fn is None:
        return {"ok": False, "error": {"kind": "unknown_tool",
                                       "message": f"no function {function!r} in tool module {module!r}"}}
    try:
        pos, kw = bind(fn, req.get("args") or {})
    except TypeError as exc:
        return {"ok": False, "error": {"kind": "invalid_args", "message": str(exc)}}
    cwd = req.get("cwd") or ""
    try:
        if cwd:
            os.chdir(cwd)
    except OSError as exc:
        return failure("cwd", exc)
    try:
        return run(fn, pos, kw)
    finally:
        try:
            os.chdir(base_cwd)
        except OSError:
            pass


def bind(fn, args):
    """Split the JSON args object into positional and keyword arguments for
    fn, raising TypeError (from Signature.bind) when they do not fit."""
    if not isinstance(args, dict):
        raise TypeError("args must be a JSON object")
    args = dict(args)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    var_pos = next((p for p in params if p.kind is p.VAR_POSITIONAL), None)
    star = args.pop(var_pos.name, None) if var_pos else None
    if star is not None and not isinstance(star, list):
        raise TypeError(f"argument {var_pos.name!r} must be an array")
    pos = []
    for p in params:
        positional = p.kind is p.POSITIONAL_ONLY or (star and p.kind is p.POSITIONAL_OR_KEYWORD)
        if not positional:
            continue
        if p.name in args:
            pos.append(args.pop(p.name))
        elif p.default is not p.empty:
            pos.append(p.default)
        else:
            raise TypeError(f"missing a required argument: {p.name!r}")
    pos += star or []
    sig.bind(*pos, **args)
    return pos, args


def run(fn, pos, kw):
    try:
        value = captured(lambda: invoke(fn, pos, kw))
    except BaseException as exc:  # SystemExit and KeyboardInterrupt are the tool's too
        return failure("exception", exc)
    reply = {"ok": True}
    if value is not None:
        reply["return"] = to_json(value)
    return reply


def invoke(fn, pos, kw):
    value = fn(*pos, **kw)
    if inspect.iscoroutine(value):  # an async def tool
        import asyncio
        value = asyncio.run(value)
    return value


def captured(thunk):
    """Run thunk with fds 1 and 2 pointing at the capture files."""
    flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(CALL_STDOUT, 1)
    os.dup2(CALL_STDERR, 2)
    try:
        return thunk()
    finally:
        flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _libc():
    try:
        import ctypes
        return ctypes.CDLL(None)
    except Exception:
        return None


LIBC = _libc()


def flush():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:
            pass
    if LIBC is not None:
        LIBC.fflush(None)  # C stdio buffers of extensions


def to_json(value):
    """Return value as plain JSON data: values JSON cannot hold become their
    repr(), and so does the whole value if it still does not encode."""
    try:
        return json.loads(json.dumps(value, default=repr, allow_nan=False))
    except Exception:
        return safe(repr, value)


def failure(kind, exc):
    return {"ok": False, "error": {"kind": kind, "type": type(exc).__name__,
                                   "message": exception_line(exc),
                                   "traceback": format_traceback(exc)}}


def exception_line(exc):
    text = safe(str, exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def format_traceback(exc):
    """The traceback without the host's and importlib's own frames; empty
    when nothing is left to show beyond the exception line."""
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(
        [f for f in te.stack if not host_frame(f.filename)])
    if not te.stack and not isinstance(exc, SyntaxError) and not te.__cause__ and not te.__context__:
        return ""
    return "".join(te.format())


def host_frame(filename):
    return (filename in (HOST_FILE, SCHEMA_FILE) or filename.startswith("<frozen importlib")
            or os.path.dirname(filename) == IMPORTLIB_DIR)


def safe(fn, value):
    try:
        return fn(value)
    except Exception:
        return f"<{type(value).__name__} object>"


if __name__ == "__main__":
    main()
