package integration

import (
	"bytes"
	"flag"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/tools/web"
)

// dashboardShot, when set, is where TestDashboard writes its screenshot of
// the overview (docs/images/dashboard.png is taken so).
var dashboardShot = flag.String("dashboard-screenshot", "", "write TestDashboard's screenshot of the dashboard to this PNG file")

// TestDashboard serves the dashboard of the test system and drives it in
// the distribution's Chromium: a sandbox created and a batch sent through
// the SDK appear on the open page without a reload, the sandbox's page
// shows its live use and its history, a dashboard with audit credentials
// reads the same pages, and an unknown sandbox is a 404 page.
func TestDashboard(t *testing.T) {
	url, page := openDashboard(t)
	_, err := page.Timeout(10 * time.Second).Element("#hosts")
	require.NoError(t, err, "the overview shows its hosts")
	// A reload would drop this mark.
	_, err = page.Eval(`() => { window.sandoxMark = "same page" }`)
	require.NoError(t, err)

	group := newGroup(t, sdk.GroupConfig{ID: "it-dash", ComputeResources: schemas.ComputeResources{Memory: "256MiB"}})
	sb := startSandbox(t, group, "it-dash-1", sdk.SandboxOptions{})
	sandboxRow := `#sandboxes tr[data-sandbox="it-dash-1"]`
	_, err = page.Timeout(30 * time.Second).Element(sandboxRow)
	require.NoError(t, err, "the new sandbox appears in the overview")
	poll.Until(t, 30*time.Second, "the sandbox's row to say running", func() bool {
		return strings.Contains(text(t, page, sandboxRow), "running")
	})
	assert.Contains(t, text(t, page, sandboxRow), "256.0 MiB", "its memory limit")

	mustOK(t, send(t, sb, `{"terminal_tools.run": {"description": "greet the dashboard", "args": {"command": "echo hello dashboard"}}}`)[0])
	feedRow := `#feed tr[data-kind="observations"][data-sandbox="it-dash-1"]`
	_, err = page.Timeout(30 * time.Second).Element(feedRow)
	require.NoError(t, err, "the batch's answer appears in the live feed")
	got := text(t, page, feedRow)
	assert.Contains(t, got, "terminal_tools.run")
	assert.Regexp(t, `\d+(\.\d+)? (ms|s)`, got, "with the tool's duration")
	_, err = page.Timeout(5 * time.Second).Element(`#feed tr[data-kind="batch"][data-sandbox="it-dash-1"]`)
	require.NoError(t, err, "and the batch as the executor took it")
	mark, err := page.Eval(`() => window.sandoxMark`)
	require.NoError(t, err)
	assert.Equal(t, "same page", mark.Value.Str(), "the page was not reloaded")
	screenshot(t, page)

	t.Run("sandbox page shows live use and history", func(t *testing.T) {
		require.NoError(t, page.Navigate(url+"/sandboxes/it-dash-1"))
		require.NoError(t, page.WaitLoad())
		_, err := page.Timeout(30 * time.Second).Element("#usage .use-memory")
		require.NoError(t, err, "live use is read (%s)", text(t, page, "#usage"))
		assert.Contains(t, text(t, page, "#usage"), "256.0 MiB")
		history := text(t, page, "#history")
		assert.Contains(t, history, "greet the dashboard")
		assert.Contains(t, history, "hello dashboard", "the observation's stdout")

		mustOK(t, send(t, sb, `{"filesystem_tools.write_file": {"args": {"path": "seen.txt", "content": "x"}}}`)[0])
		_, err = page.Timeout(30*time.Second).ElementR(`#feed tr[data-kind="observations"]`, "filesystem_tools.write_file")
		require.NoError(t, err, "a new batch reaches the sandbox's page live")
	})

	t.Run("sandbox page lists its jobs", func(t *testing.T) {
		job, _, err := sb.StartJob(t.Context(), "echo working; exit 3", sdk.JobOptions{ID: "it-dash-job"})
		require.NoError(t, err)
		exit, err := job.Wait(t.Context())
		require.NoError(t, err)
		require.Equal(t, 3, exit.ExitCode)
		require.NoError(t, page.Navigate(url+"/sandboxes/it-dash-1"))
		require.NoError(t, page.WaitLoad())
		row := text(t, page, `#jobs tr[data-job="it-dash-job"]`)
		assert.Contains(t, row, "echo working; exit 3")
		assert.Contains(t, row, "exited")
		assert.Contains(t, text(t, page, `#jobs tr[data-job="it-dash-job"] td.exit`), "3")
	})

	t.Run("sandbox page lists its checkpoints", func(t *testing.T) {
		ck, err := sb.Checkpoint(t.Context(), "")
		require.NoError(t, err)
		require.NoError(t, page.Navigate(url+"/sandboxes/it-dash-1"))
		require.NoError(t, page.WaitLoad())
		row := `#checkpoints tr[data-checkpoint="` + ck.ID + `"]`
		assert.Contains(t, text(t, page, row+` td.taken`), "asked")
		assert.Equal(t, strconv.Itoa(ck.Files), text(t, page, row+` td.files`))
	})

	t.Run("audit credentials read everything but live use", func(t *testing.T) {
		nc, err := connectAs(auth.RoleAudit)
		require.NoError(t, err)
		t.Cleanup(nc.Close)
		dash, err := dashboard.New(nc, dashboard.Options{NoUsage: true})
		require.NoError(t, err)
		srv := httptest.NewServer(dash.Handler())
		t.Cleanup(srv.Close)
		for path, want := range map[string]string{
			"/":                    `href="/sandboxes/it-dash-1"`,
			"/groups/it-dash":      "Group it-dash",
			"/sandboxes/it-dash-1": "hello dashboard",
		} {
			resp, err := http.Get(srv.URL + path)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode, path)
			assert.Contains(t, string(body), want, path)
		}
	})

	t.Run("unknown sandbox is a 404 page", func(t *testing.T) {
		require.NoError(t, page.Navigate(url+"/sandboxes/it-dash-nope"))
		require.NoError(t, page.WaitLoad())
		assert.Contains(t, text(t, page, ".error-title"), "404")
		assert.Contains(t, text(t, page, "#error-message"), `sandbox "it-dash-nope"`)
	})
}

// openBrowser launches the distribution's Chromium, headless, without its
// sandbox (the tests may run as root) and without talking to anything but
// the dashboard; it is killed when the test ends.
func openBrowser(t *testing.T) *rod.Browser {
	t.Helper()
	l := launcher.New().Bin(web.DefaultChromium).Headless(true).NoSandbox(true).
		Set(flags.Flag("disable-gpu")).
		Set(flags.Flag("disable-background-networking")).
		Set(flags.Flag("disable-dev-shm-usage"))
	u, err := l.Launch()
	require.NoError(t, err)
	t.Cleanup(func() {
		l.Kill()
		l.Cleanup()
	})
	b := rod.New().ControlURL(u)
	require.NoError(t, b.Connect())
	return b
}

// text returns the text of the first element matching selector on page.
func text(t *testing.T, page *rod.Page, selector string) string {
	t.Helper()
	el, err := page.Timeout(10 * time.Second).Element(selector)
	require.NoError(t, err, "element %s", selector)
	s, err := el.Text()
	require.NoError(t, err)
	return s
}

// screenshot takes a PNG of page, checks that it decodes, and writes it to
// -dashboard-screenshot when set.
func screenshot(t *testing.T, page *rod.Page) {
	t.Helper()
	data, err := page.Screenshot(false, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	require.NoError(t, err)
	_, err = png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	if *dashboardShot != "" {
		require.NoError(t, os.WriteFile(*dashboardShot, data, 0o644))
	}
}
