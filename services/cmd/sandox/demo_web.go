package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// demoSite is a two-page site with navigation and a footer, and a page
// that renders its records with JavaScript. The web sandbox serves it on
// its own loopback: a sandbox has no network by default (egress "none"),
// and nothing outside this machine is needed.
var demoSite = map[string]string{
	"site/index.html": `<html><head><title>Tea shop</title></head><body>
<nav><a href="/">Home</a> <a href="/prices.html">Prices</a></nav>
<main><h1>Tea shop</h1><p>We sell green and black tea from small farms.</p>
<p>See the <a href="/prices.html">price list</a>.</p></main>
<footer>Copyright the tea shop</footer></body></html>`,
	"site/prices.html": `<html><head><title>Prices</title></head><body>
<nav><a href="/">Home</a> <a href="/prices.html">Prices</a></nav>
<main><h1>Prices</h1><table><tr><th>Tea</th><th>Price</th></tr>
<tr><td>Sencha</td><td>12</td></tr><tr><td>Assam</td><td>9</td></tr></table></main>
<footer>Copyright the tea shop</footer></body></html>`,
	"site/records.html": `<html><head><title>Stock</title></head><body><ul id="stock"></ul>
<script>for (const [n, q] of [["Sencha", 40], ["Assam", 25]]) {
  const li = document.createElement("li"); li.className = "record";
  li.innerHTML = '<span class="name">' + n + '</span> <span class="qty">' + q + '</span>';
  document.getElementById("stock").appendChild(li);
}</script></body></html>`,
}

// startWebSandbox creates and starts the sandbox that demoWeb uses, one
// given web_tools: its image adds Chromium, the longest build of the
// demo, so the demo starts it first, in the background. It blocks until
// the sandbox runs.
func startWebSandbox(ctx context.Context, group *sdk.SandboxGroup, id string) (*sdk.Sandbox, error) {
	sb, err := group.CreateSandbox(ctx, id, sdk.SandboxOptions{
		Tools:            []string{"filesystem_tools.py", "terminal_tools.py", "web_tools.py"},
		ComputeResources: &schemas.ComputeResources{Memory: "1GiB", Disk: "256MiB"},
	})
	if err != nil {
		return nil, err
	}
	return sb, sb.Start(ctx)
}

// demoWeb shows web_tools in a sandbox that was given that family: a site
// scraped to markdown, records a page renders with JavaScript read through
// the browser, and web_search answered by the control plane's search
// service (which says which setting it lacks when no provider has a key).
// It ends the sandbox.
func demoWeb(ctx context.Context, web *background[*sdk.Sandbox]) error {
	step("web_tools: a sandbox created with tools [filesystem_tools.py, terminal_tools.py, web_tools.py] (its image adds Chromium)")
	sb, err := web.wait(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := sb.End(context.WithoutCancel(ctx)); err != nil {
			fmt.Println("end web sandbox:", err)
		}
	}()
	fmt.Printf("sandbox %s serves %v (started in the background %s after the demo began)\n", sb.ID(), sb.Status().Tools, web.took.Round(time.Millisecond))

	var actions schemas.Actions
	for path, content := range demoSite {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		actions = append(actions, schemas.Action{Tool: "filesystem_tools.write_file", Args: args})
	}
	actions = append(actions, schemas.Action{Tool: "terminal_tools.run", Description: "serve the site on the sandbox's loopback",
		Args: json.RawMessage(`{"command": "cd site && (python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 &) && sleep 1 && echo serving"}`)})
	if _, err := sb.SendActions(ctx, actions); err != nil {
		return err
	}
	obs, err := sb.SendActionsJSON(ctx, []byte(`{
		"web_tools.scrape_website": {"description": "the whole site as markdown", "args": {"url": "http://127.0.0.1:8765/", "max_pages": 5}},
		"web_tools.browser_open": {"description": "a page that renders with JavaScript", "args": {"url": "http://127.0.0.1:8765/records.html", "wait_selector": "li.record"}},
		"web_tools.browser_extract": {"description": "its records as JSON", "args": {"selector": "li.record", "fields": {"name": {"selector": ".name"}, "qty": {"selector": ".qty"}}}},
		"web_tools.web_search": {"description": "through the control plane's search service", "args": {"query": "green tea"}}
	}`))
	if err != nil {
		return err
	}
	printObservations(obs)
	if len(obs) > 0 {
		fmt.Printf("\nthe scrape, in full:\n%s\n", obs[0].Stdout)
	}
	return nil
}
