// Package builtin is the list of sandox's built-in tool families. The
// orchestrator reads it to check which families a sandbox names and what
// its image needs; the executor reads it to open the families it serves.
// Adding a family is adding one entry to Modules.
//
// Built with the build tag nowebtools, the list leaves out the web family
// (web.go): the executor built so (the image's sandox-executor) links
// neither the browser driver nor the scraper, and hands a sandbox that
// names web_tools over to the full build (sandox-executor-full).
package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/database"
	"github.com/sandox/sandox/tools/filesystem"
	"github.com/sandox/sandox/tools/terminal"
)

// Modules returns the built-in tool families, in the order the executor
// opens them.
func Modules() []tools.Module {
	mods := []tools.Module{terminal.Family(), filesystem.Family()}
	mods = append(mods, webModules()...)
	return append(mods, database.Family())
}

// Default are the families a sandbox gets when neither it nor its group
// names one.
var Default = []string{filesystem.Module, terminal.Module}
