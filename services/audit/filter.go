package audit

import (
	"slices"
	"time"
)

// Filter selects entries. A zero field selects everything.
type Filter struct {
	Group   string
	Sandbox string
	// Since and Until bound the server time of the entries, inclusive.
	Since, Until time.Time
	// Kinds selects entries whose Kind, or whose What (an event kind
	// such as "expired", a command kind such as "end_sandbox"), is listed.
	Kinds []string
}

// Match reports whether f selects e.
func (f Filter) Match(e Entry) bool {
	switch {
	case f.Group != "" && e.GroupID != f.Group:
		return false
	case f.Sandbox != "" && e.SandboxID != f.Sandbox:
		return false
	case !f.Since.IsZero() && e.Time.Before(f.Since):
		return false
	case !f.Until.IsZero() && e.Time.After(f.Until):
		return false
	case len(f.Kinds) > 0 && !slices.Contains(f.Kinds, string(e.Kind)) && !slices.Contains(f.Kinds, e.What):
		return false
	}
	return true
}
