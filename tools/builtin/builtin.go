// Package builtin is the list of sandox's built-in tool families. The
// orchestrator reads it to check which families a sandbox names and what
// its image needs; the executor reads it to open the families it serves.
// Adding a family is adding one entry to Modules.
package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/database"
	"github.com/sandox/sandox/tools/filesystem"
	"github.com/sandox/sandox/tools/terminal"
	"github.com/sandox/sandox/tools/web"
)

// Modules returns the built-in tool families, in the order the executor
// opens them.
func Modules() []tools.Module {
	return []tools.Module{
		terminal.Family(),
		filesystem.Family(),
		web.Family(),
		database.Family(),
	}
}

// Default are the families a sandbox gets when neither it nor its group
// names one.
var Default = []string{filesystem.Module, terminal.Module}
