package python

// toolFiles are the tool files most tests serve.
var toolFiles = map[string]string{
	"basic.py": `"""Tools for the tests."""
import ctypes
import os
import subprocess
import sys
import time
from os.path import join  # imported: not a tool

calls = 0


def greet(name: str) -> dict:
    """Greet someone."""
    print(f"hello {name}")
    return {"greeted": name}


def fail():
    print("trying")
    raise ValueError("bad value")


def child():
    print("before")
    subprocess.run(["echo", "from-child"], check=True)
    print("after")


def warn():
    sys.stderr.write("careful\n")
    os.write(2, b"raw fd\n")


class Point:
    def __repr__(self):
        return "Point(1, 2)"


def point():
    return Point()


def nothing():
    pass


def count():
    """Count the calls since the host imported this file."""
    global calls
    calls += 1
    return calls


def slow(seconds: float):
    print("sleeping")
    time.sleep(seconds)


def die(code: int):
    print("exiting")
    os._exit(code)


def segfault():
    ctypes.string_at(0)


def cwd():
    return os.getcwd()


def echo(tag: str):
    print(tag)
    time.sleep(0.01)
    print(tag)
    return tag


def _private():
    pass
`,
	"lib_math.py": `def double(x: int) -> int:
    return 2 * x
`,
	"calc.py": `import lib_math
from lib_math import double


def quadruple(x: int) -> int:
    return lib_math.double(double(x))
`,
	"broken.py":  "def oops(:\n    pass\n",
	"_helper.py": "def hidden():\n    pass\n",
}
