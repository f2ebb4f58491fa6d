package schemas

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"strings"
)

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
	// PackageIndex, when set, is where uv and pip in the sandbox find
	// Python packages: the http(s) URL of a package index (PEP 503
	// "simple" API, "https://pypi.example.internal/simple"), whose host
	// the allowlist must let through, or the absolute path (or file:// URL)
	// of a directory of wheels in the sandbox, used offline. Unset is the
	// tools' default, PyPI. docs/security.md, "Installing Python packages".
	PackageIndex string `json:"package_index,omitempty"`
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

// Validate checks the policy's name, that only an allowlist lists
// destinations, and that PackageIndex is an http(s) URL or an absolute
// path, reachable under the policy; it does not parse the destinations
// (the egress proxy does), nor match the index's host against them (a
// name may be let through by a listed CIDR).
func (e Egress) Validate() error {
	if err := e.validatePackageIndex(); err != nil {
		return err
	}
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

// validatePackageIndex checks PackageIndex. Under the none policy an
// index on another machine cannot be reached, so only a directory or a
// loopback URL (an index served inside the sandbox) is accepted there.
func (e Egress) validatePackageIndex() error {
	index := e.PackageIndex
	if index == "" {
		return nil
	}
	u, err := url.Parse(index)
	if err != nil {
		return Errorf(CodeBadRequest, "egress package_index %q: %v", index, err)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return Errorf(CodeBadRequest, "egress package_index %q: the URL has no host", index)
		}
		if e.Policy == EgressNone && !isLoopback(u.Hostname()) {
			return Errorf(CodeBadRequest, "egress none: package_index %q cannot be reached without a network (use the allowlist policy listing %s)", index, u.Hostname())
		}
	case "file", "":
		if p := strings.TrimPrefix(index, "file://"); !path.IsAbs(p) {
			return Errorf(CodeBadRequest, "egress package_index %q: want an http(s) URL or the absolute path of a wheel directory", index)
		}
	default:
		return Errorf(CodeBadRequest, "egress package_index %q: want an http(s) URL or the absolute path of a wheel directory", index)
	}
	return nil
}

// isLoopback reports whether host is "localhost" or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (e Egress) String() string {
	s := string(e.Policy)
	if e.Policy == EgressAllowlist {
		s = fmt.Sprintf("%s %v", e.Policy, e.Allow)
	}
	if e.PackageIndex != "" {
		s += " index " + e.PackageIndex
	}
	return s
}
