package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

//go:embed templates/*.html
var templateFS embed.FS

// staticFS holds the stylesheet and the script, served under /static/.
//
//go:embed static
var staticFS embed.FS

// pages holds one template set per page, each with the layout and the
// shared fragments; fragments renders the fragments alone (for the live
// parts).
type pages struct {
	byName    map[string]*template.Template
	fragments *template.Template
}

// The pages, each a file of templates/ that defines "content".
var pageNames = []string{"overview", "group", "sandbox", "error"}

func parsePages() (*pages, error) {
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/fragments.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}, fragments: base}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", name, err)
		}
		p.byName[name] = t
	}
	return p, nil
}

// page renders the page name with data into w with status code. It renders
// to a buffer first, so that a template error becomes a plain 500 rather
// than half a page.
func (p *pages) page(w http.ResponseWriter, code int, name string, data any) {
	var buf bytes.Buffer
	if err := p.byName[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		http.Error(w, "dashboard: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// fragment renders the fragment name with data to a string.
func (p *pages) fragment(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := p.fragments.ExecuteTemplate(&buf, name, data); err != nil {
		return "", fmt.Errorf("render %s: %w", name, err)
	}
	return buf.String(), nil
}

var funcs = template.FuncMap{
	// code shows an error's wire code (tool_error), not its class in words.
	"code": func(c schemas.ErrorCode) string { return string(c) },
	"bytes": func(n int64) string { // a limit: "—" for none
		if n == 0 {
			return "—"
		}
		return resources.FormatBytes(n)
	},
	"size": resources.FormatBytes,
	"cpus": func(nano int64) string {
		if nano == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2g", float64(nano)/1e9)
	},
	"count": func(n int64) string {
		if n == 0 {
			return "—"
		}
		return fmt.Sprint(n)
	},
	"percent": func(part, whole int64) string {
		if part == 0 || whole == 0 {
			return ""
		}
		return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(whole))
	},
	"ms": func(ms float64) string {
		if ms >= 1000 {
			return fmt.Sprintf("%.2f s", ms/1000)
		}
		return fmt.Sprintf("%.1f ms", ms)
	},
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Local().Format("15:04:05")
	},
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"ago": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
	"join": strings.Join,
	"cut": func(n int, s string) string {
		if len(s) <= n {
			return s
		}
		return s[:n] + "…"
	},
	"access": func(read, write bool) string {
		switch {
		case read && write:
			return "read, write"
		case write:
			return "write"
		case read:
			return "read"
		}
		return "none"
	},
}
