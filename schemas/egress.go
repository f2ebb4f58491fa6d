package schemas

import "fmt"

// EgressPolicy says which connections may leave a sandbox.
type EgressPolicy string

// The egress policies.
const (
	// EgressNone lets no connection leave: the sandbox has no network.
	EgressNone EgressPolicy = "none"
	// EgressAllowlist lets HTTP and HTTPS through a proxy, to the host
	// names and CIDRs in Egress.Allow only.
	EgressAllowlist EgressPolicy = "allowlist"
	// EgressOpen puts the sandbox on a network with a route out; other
	// sandboxes stay unreachable.
	EgressOpen EgressPolicy = "open"
)

// Egress is a sandbox's egress policy.
type Egress struct {
	Policy EgressPolicy `json:"policy" jsonschema:"enum=none,enum=allowlist,enum=open"`
	// Allow lists, for the allowlist policy, host names ("example.com", or
	// "*.example.com" for its subdomains), IP addresses and CIDRs
	// ("10.0.0.0/8").
	Allow []string `json:"allow,omitempty"`
}

// ResolveEgress returns the policy of a sandbox: its own when set, else
// its group's, else none.
func ResolveEgress(group, sandbox *Egress) Egress {
	switch {
	case sandbox != nil:
		return *sandbox
	case group != nil:
		return *group
	default:
		return Egress{Policy: EgressNone}
	}
}

// Validate checks the policy's name and that only an allowlist lists
// destinations; it does not parse them (the egress proxy does).
func (e Egress) Validate() error {
	switch e.Policy {
	case EgressNone, EgressOpen:
		if len(e.Allow) > 0 {
			return Errorf(CodeBadRequest, "egress %s: allow is only for the allowlist policy", e.Policy)
		}
	case EgressAllowlist:
		if len(e.Allow) == 0 {
			return Errorf(CodeBadRequest, "egress allowlist: allow lists nothing (use none)")
		}
	default:
		return Errorf(CodeBadRequest, "egress policy %q: want none, allowlist or open", e.Policy)
	}
	return nil
}

func (e Egress) String() string {
	if e.Policy == EgressAllowlist {
		return fmt.Sprintf("%s %v", e.Policy, e.Allow)
	}
	return string(e.Policy)
}
