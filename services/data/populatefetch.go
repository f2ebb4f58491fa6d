package data

import (
	"fmt"

	"github.com/sandox/sandox/internal/egress"
)

// parsePopulateAllow parses the hosts URL population sources may reach
// (SANDOX_POPULATE_ALLOW). The Runner checks a source's host before it
// fetches it, and its dialer (egress.Allowlist.DialContext) checks every
// connection again, so a redirect or a name that resolves elsewhere cannot
// leave the list.
func parsePopulateAllow(entries []string) (egress.Allowlist, error) {
	allow, err := egress.ParseAllowlist(entries)
	if err != nil {
		return allow, fmt.Errorf("population allowlist (SANDOX_POPULATE_ALLOW): %w", err)
	}
	return allow, nil
}
