// Package tools defines what a sandbox tool is and how tools are found.
//
// A Tool is one function of a tool module ("filesystem_tools.read_file").
// The built-in modules are Go packages below this one (filesystem,
// terminal); user tool files are Python and reach the registry through
// package python. A Registry resolves the name an action uses to one Tool.
package tools
