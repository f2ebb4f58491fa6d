//go:build nowebtools

package builtin

import "github.com/sandox/sandox/tools"

// webModules is empty in a build with the tag nowebtools: see the package
// comment.
func webModules() []tools.Module { return nil }
