package schemas

import (
	"fmt"
	"net/url"
	"strings"
)

// WebhookAllowed checks that raw, the webhook URL of a job, is an http or
// https URL that one of allow permits. An entry of allow is a URL prefix:
// the same scheme and host (with port) and a path that starts the URL's
// path at a '/' boundary ("https://hooks.example.com/ci/" permits
// "https://hooks.example.com/ci/done", not "https://hooks.example.com.evil/"
// nor ".../cix"). An empty allow refuses every URL. A malformed URL is
// CodeBadRequest, one no entry permits CodeAccessDenied.
func WebhookAllowed(raw string, allow []string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Errorf(CodeBadRequest, "webhook %q: want an http or https URL without user info", raw)
	}
	for _, a := range allow {
		p, err := url.Parse(a)
		if err != nil || p.Scheme != u.Scheme || !strings.EqualFold(p.Host, u.Host) {
			continue
		}
		prefix := p.Path
		if prefix == "" || prefix == "/" || u.Path == prefix ||
			strings.HasPrefix(u.Path, strings.TrimSuffix(prefix, "/")+"/") {
			return nil
		}
	}
	if len(allow) == 0 {
		return Errorf(CodeAccessDenied, "webhook %q: the operator allows no webhooks (orchestrator -webhook-allow)", raw)
	}
	return Errorf(CodeAccessDenied, "webhook %q: not under any URL the operator allows (%s)", raw, fmt.Sprint(allow))
}
