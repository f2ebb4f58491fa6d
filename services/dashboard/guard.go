package dashboard

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// tokenCookie holds the token in a browser once a page was opened with
// ?token=.
const tokenCookie = "sandox_dashboard"

// guard wraps the dashboard's handler: it answers GET and HEAD only, sets
// headers that keep the pages from being framed or from loading anything
// from elsewhere, refuses on a loopback listener a Host that is not
// loopback (DNS rebinding), and, when token is set, wants it. A request
// with a good ?token= gets a cookie and is sent to the same address
// without it.
func guard(next http.Handler, token string) http.Handler {
	want := sha256.Sum256([]byte(token))
	ok := func(got string) bool {
		sum := sha256.Sum256([]byte(got))
		return subtle.ConstantTimeCompare(sum[:], want[:]) == 1
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "the dashboard is read-only: GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		if local, isAddr := r.Context().Value(http.LocalAddrContextKey).(net.Addr); isAddr && loopback(local.String()) && !loopback(r.Host) {
			http.Error(w, "invalid Host header "+quote(r.Host)+": this dashboard listens on loopback and answers only localhost names", http.StatusForbidden)
			return
		}
		if token == "" {
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && ok(q) {
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			v := u.Query()
			v.Del("token")
			u.RawQuery = v.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		if c, err := r.Cookie(tokenCookie); err == nil && ok(c.Value) {
			next.ServeHTTP(w, r)
			return
		}
		if b, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && ok(b) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "this dashboard wants its token: open it with ?token=TOKEN (sandox dashboard prints the address), or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
	})
}

// loopback reports whether hostport (host, or host:port) names this
// machine: localhost, a name under .localhost, or a loopback IP address.
func loopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// quote quotes s for a message, cut to a length a page can show.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
