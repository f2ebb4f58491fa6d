//go:build !nowebtools

package builtin

import (
	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/web"
)

// webModules is the web family, which links the browser driver, the
// scraper and the HTML-to-Markdown converter.
func webModules() []tools.Module { return []tools.Module{web.Family()} }
