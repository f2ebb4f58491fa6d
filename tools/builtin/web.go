//go:build !nowebtools

package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/web"
)

// webBuilt says this build holds the web family.
const webBuilt = true

// addWeb adds the web family, which links the browser driver, the scraper
// and the HTML-to-Markdown converter.
func addWeb(m map[string]tools.OpenFunc) { m[web.Family] = web.Open }
