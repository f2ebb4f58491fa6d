// Package webtest serves a small website for the web tools' tests: pages
// that link to each other, a table, a code block, navigation, a header and
// a footer on every page, a page that renders its data with JavaScript, a
// login form that sets a cookie and a page behind it, plus robots.txt, a
// PDF, a 404 and an oversize page. The unit tests serve it on loopback, the
// integration tests on the sandbox network's gateway.
package webtest

import (
	"fmt"
	"net/http"
	"strings"
)

// The texts the tests look for. Each page's own text appears on that page
// only; Nav, Header and Footer appear on every page.
const (
	Nav    = "NAVLINKS-SITEWIDE"
	Header = "HEADER-BANNER-SITEWIDE"
	Footer = "FOOTER-COPYRIGHT-SITEWIDE"

	HomeText    = "Welcome to the sandox test site, home text."
	DocsText    = "The docs page explains the fetch command."
	CodeText    = `fmt.Println("hello from a code block")`
	TableText   = "The table page lists three fruits."
	LoginText   = "Please log in to see your account."
	PrivateText = "Private text that robots may not read."
	SecretText  = "Account balance: 4242 credits."
	Username    = "ada"
	Password    = "lovelace"
	Cookie      = "sandox_session"
)

// Records are the rows the JavaScript page renders, in order.
var Records = []map[string]string{
	{"name": "alpha", "price": "1.50"},
	{"name": "beta", "price": "2.75"},
	{"name": "gamma", "price": "9.00"},
}

// Pages are the HTML pages a crawl from "/" reaches, each with its own text.
var Pages = map[string]string{
	"/":      HomeText,
	"/docs":  DocsText,
	"/table": TableText,
	"/js":    "This page renders its records with JavaScript.",
	"/login": LoginText,
}

// TableRows are the fruit table's rows (name, colour).
var TableRows = [][2]string{{"Apple", "red"}, {"Banana", "yellow"}, {"Cherry", "dark red"}}

// Handler returns the site.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", page("Home", `<p>`+HomeText+`</p><p>Read the <a href="/docs">docs</a> or the <a href="/table#fruits">table</a>.</p>`))
	mux.HandleFunc("GET /docs", page("Docs", `<h2>Usage</h2><p>`+DocsText+`</p>
<ul><li>first step</li><li>second step</li></ul>
<pre><code class="language-go">`+htmlEscape(CodeText)+`</code></pre>
<p>Back <a href="/">home</a>. Do not read <a href="/private">the private page</a>, <a href="/report.pdf">the report</a> or <a href="/gone">a gone page</a>.</p>`))
	mux.HandleFunc("GET /table", page("Table", `<p>`+TableText+`</p>`+table()))
	mux.HandleFunc("GET /js", page("Records", `<p>`+Pages["/js"]+`</p><ul id="records"></ul>
<script>
setTimeout(function () {
  const records = `+recordsJSON()+`;
  const ul = document.getElementById("records");
  for (const r of records) {
    const li = document.createElement("li");
    li.className = "record";
    li.innerHTML = '<span class="name">' + r.name + '</span> costs <span class="price">' + r.price + '</span>';
    ul.appendChild(li);
  }
}, 200);
</script>`))
	mux.HandleFunc("GET /login", page("Login", `<p>`+LoginText+`</p>
<form method="post" action="/login">
<input name="username" id="username"> <input name="password" id="password" type="password">
<select name="remember" id="remember"><option value="no">No</option><option value="yes">Remember me</option></select>
<button type="submit">Log in</button>
</form>`))
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("username") != Username || r.FormValue("password") != Password {
			http.Error(w, "wrong user name or password", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: Cookie, Value: "ok-" + r.FormValue("remember"), Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/welcome", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /welcome", authed(page("Welcome", `<p>You are logged in. See <a href="/account">your account</a>.</p>`)))
	mux.HandleFunc("GET /account", authed(page("Account", `<p id="balance">`+SecretText+`</p>`)))
	mux.HandleFunc("GET /private", page("Private", `<p>`+PrivateText+`</p>`))
	mux.HandleFunc("GET /robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	})
	mux.HandleFunc("GET /report.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4\n%%EOF\n"))
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><main>")
		for range 20000 {
			fmt.Fprint(w, "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>\n")
		}
		fmt.Fprint(w, "</main></body></html>")
	})
	return mux
}

// page serves an HTML page with the site's navigation, header and footer
// around body.
func page(title, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><style>body{font-family:sans-serif}</style></head><body>
<header><p>%s</p></header>
<nav><span>%s</span> <a href="/">Home</a> <a href="/docs">Docs</a> <a href="/table">Table</a> <a href="/js">Records</a> <a href="/login">Login</a></nav>
<main><h1>%s</h1>
%s
</main>
<footer><p>%s</p><script>console.log("footer script")</script></footer>
</body></html>`, title, Header, Nav, title, body, Footer)
	}
}

// authed lets through requests with the login cookie; others get 401.
func authed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(Cookie); err != nil || !strings.HasPrefix(c.Value, "ok-") {
			http.Error(w, "log in first", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}

func table() string {
	var b strings.Builder
	b.WriteString(`<table id="fruits"><thead><tr><th>Name</th><th>Colour</th></tr></thead><tbody>`)
	for _, r := range TableRows {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td></tr>", r[0], r[1])
	}
	b.WriteString("</tbody></table>")
	return b.String()
}

func recordsJSON() string {
	parts := make([]string, len(Records))
	for i, r := range Records {
		parts[i] = fmt.Sprintf(`{"name": %q, "price": %q}`, r["name"], r["price"])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
