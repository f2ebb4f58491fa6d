// Package tools defines what a sandbox tool is, what a built-in tool family
// is, and how tools are found.
//
// A Tool is one function of a tool module ("filesystem_tools.read_file").
// A Module is a built-in tool family: its name, what its sandbox image
// needs, and how the executor opens it from an Env. The list of built-in
// families is package builtin; each family is a Go package below this one
// (filesystem, terminal). User tool files are Python and reach the registry
// through package python. A Registry resolves the name an action uses to
// one Tool.
package tools
