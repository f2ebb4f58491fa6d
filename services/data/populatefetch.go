package data

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sandox/sandox/services/egress"
)

// populateFetch is how the data service reaches URL population sources:
// only the hosts on its allowlist, checked before a fetch and again by the
// dialer of every connection (so a redirect or a name that resolves
// elsewhere cannot leave the list).
type populateFetch struct {
	allow  egress.Allowlist
	client *http.Client
}

func newPopulateFetch(entries []string) (populateFetch, error) {
	allow, err := egress.ParseAllowlist(entries)
	if err != nil {
		return populateFetch{}, fmt.Errorf("population allowlist (SANDOX_POPULATE_ALLOW): %w", err)
	}
	// No proxy from the environment: the dialer must see the host it
	// connects to.
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           allow.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   4,
	}
	return populateFetch{allow: allow, client: &http.Client{Transport: tr}}, nil
}
