package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// ErrDenied means a destination is not on the allowlist.
var ErrDenied = errors.New("not on the sandbox's egress allowlist")

// Allowlist is a parsed list of allowed destinations.
type Allowlist struct {
	hosts    []string // exact names, lower case
	suffixes []string // ".example.com" for "*.example.com"
	nets     []*net.IPNet
}

// ParseAllowlist parses host names ("example.com", "*.example.com"), IP
// addresses and CIDRs. An empty or malformed entry is an error.
func ParseAllowlist(entries []string) (Allowlist, error) {
	var a Allowlist
	var errs []error
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			errs = append(errs, errors.New("an empty entry"))
		case strings.Contains(e, "/"):
			_, n, err := net.ParseCIDR(e)
			if err != nil {
				errs = append(errs, fmt.Errorf("%q: %w", e, err))
				continue
			}
			a.nets = append(a.nets, n)
		case net.ParseIP(e) != nil:
			ip := net.ParseIP(e)
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			a.nets = append(a.nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
		case strings.HasPrefix(e, "*."):
			a.suffixes = append(a.suffixes, e[1:])
		case strings.ContainsAny(e, "*:? "):
			errs = append(errs, fmt.Errorf("%q: want a host name, *.domain, an IP address or a CIDR", e))
		default:
			a.hosts = append(a.hosts, strings.TrimSuffix(e, "."))
		}
	}
	return a, errors.Join(errs...)
}

// allowsName reports whether a host name is listed.
func (a Allowlist) allowsName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range a.hosts {
		if h == host {
			return true
		}
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// allowsIP reports whether ip is inside a listed CIDR.
func (a Allowlist) allowsIP(ip net.IP) bool {
	for _, n := range a.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Allows reports whether host (a name or an address) may be reached at
// all, before resolution: the early check that answers 403.
func (a Allowlist) Allows(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return a.allowsIP(ip)
	}
	return a.allowsName(host) || len(a.nets) > 0
}

// DialContext connects to addr ("host:port") if the allowlist lets it: a
// listed name to any of its addresses, anything else only to addresses
// inside a listed CIDR. It dials the address it checked, so a name cannot
// resolve differently between the check and the connection. It fits
// http.Transport.DialContext.
func (a Allowlist) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if ips, err = net.DefaultResolver.LookupIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	byName := net.ParseIP(host) == nil && a.allowsName(host)
	var d net.Dialer
	var errs []error
	for _, ip := range ips {
		if !byName && !a.allowsIP(ip) {
			errs = append(errs, fmt.Errorf("%s (%s): %w", host, ip, ErrDenied))
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("%s: no address", host)
	}
	return nil, errors.Join(errs...)
}
