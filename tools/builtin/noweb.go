//go:build nowebtools

package builtin

import "github.com/sandox/sandox/tools"

// webBuilt says this build holds the web family.
const webBuilt = false

// addWeb adds nothing in a build with the tag nowebtools: see the package
// comment.
func addWeb(map[string]tools.OpenFunc) {}
