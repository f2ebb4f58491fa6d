// Package tools defines what a sandbox tool is, what a built-in tool family
// is, and how tools are found.
//
// A Tool is one function of a tool module ("filesystem_tools.read_file").
// A built-in tool family is a Go package below this one (filesystem,
// terminal, web, database) whose Open builds its tools from an Env. What
// each family is as data (name, summary, image needs) is package catalog;
// the map from a family's name to its Open is package builtin. User tool files are Python and reach the registry
// through package python. A Registry resolves the name an action uses to
// one Tool.
package tools
