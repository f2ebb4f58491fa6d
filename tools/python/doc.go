// Package python serves user tool files written in Python.
//
// A tool file is a plain Python module in the tool directory; each public
// function it defines is one tool, "module.function". Start launches a
// long-lived Python process, the tool host (toolhost.py, embedded in the
// binary), which imports every tool file once and describes its functions:
// the docstring becomes the description and the signature's type hints the
// JSON Schema of the arguments. Each call then runs module.function(**args)
// in that process, with its stdout and stderr captured at the file
// descriptor level, so output of child processes and C code is captured
// too.
//
// The executor and the host talk JSON lines over a pipe pair passed as file
// descriptors 3 and 4; docs/tools/python.md describes the messages. A call
// that outlives its context, or that kills the host (os._exit, a crash),
// costs the host its life: the next call starts a new one, which imports
// the tool files again.
package python
