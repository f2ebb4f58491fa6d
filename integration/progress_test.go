package integration

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/dashboard"
	"github.com/sandox/sandox/services/data/populate/dummy"
	"github.com/sandox/sandox/tools/web"
)

// serveDashboard serves a dashboard of the test system with client
// credentials until the test ends, and returns its address.
func serveDashboard(t *testing.T) string {
	t.Helper()
	nc, err := connectAs(auth.RoleClient)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	dash, err := dashboard.New(nc, dashboard.Options{Refresh: 300 * time.Millisecond})
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		dash.Run(t.Context())
	}()
	t.Cleanup(func() { <-done })
	srv := httptest.NewServer(dash.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// openDashboard serves a dashboard of the test system (serveDashboard)
// and opens its overview in the distribution's Chromium; it skips the test
// when Chromium is not installed. It returns the dashboard's address and
// the page.
func openDashboard(t *testing.T) (string, *rod.Page) {
	t.Helper()
	if _, err := os.Stat(web.DefaultChromium); err != nil {
		t.Skipf("%s is not installed (build/scripts/test-deps.sh installs it)", web.DefaultChromium)
	}
	url := serveDashboard(t)
	page := openBrowser(t).MustPage("")
	require.NoError(t, page.SetViewport(&proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 860, DeviceScaleFactor: 1}))
	require.NoError(t, page.Navigate(url+"/"))
	require.NoError(t, page.WaitLoad())
	return url, page
}

// progressLog keeps the progress an SDK call reported (sdk.WithProgress).
type progressLog struct {
	mu  sync.Mutex
	got []schemas.Progress
}

func (l *progressLog) add(p schemas.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, p)
}

// of returns the progress reported for phase.
func (l *progressLog) of(phase string) []schemas.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []schemas.Progress
	for _, p := range l.got {
		if p.Phase == phase {
			out = append(out, p)
		}
	}
	return out
}

// TestProgress starts a group whose Qdrant-compatible database is
// populated from a file, and creates a sandbox with a tool file no image
// has yet (so the orchestrator builds one): the SDK's Start and
// CreateSandbox report the population's and the build's progress to the
// WithProgress function while they wait, each ending with everything
// done, and a dashboard open in the distribution's Chromium shows both
// live in its feed.
func TestProgress(t *testing.T) {
	_, page := openDashboard(t)
	_, err := page.Timeout(10 * time.Second).Element("#feed")
	require.NoError(t, err, "the overview shows its feed")

	dir := t.TempDir()
	_, err = dummy.Write(dir)
	require.NoError(t, err)
	population := filepath.Join(dir, "population.yaml")
	require.NoError(t, os.WriteFile(population, []byte(fmt.Sprintf("databases:\n  qdrant:\n    handbook:\n      - source: %s/handbook.jsonl\n", dir)), 0o644))
	// A tool file of its own makes an image no run has built.
	tool := writeFile(t, "progress_tools.py", fmt.Sprintf("# %s\ndef hello() -> None:\n    print(\"hello\")\n", uuid.NewString()))

	const group = "it-progress"
	keepDatabaseVolumes(group)
	var log progressLog
	g := newGroup(t, sdk.GroupConfig{
		ID: group, Tools: []string{tool}, PopulationConfig: population,
		DatabaseAccess: schemas.DatabaseAccess{{Database: schemas.DatabaseQdrant, Namespace: "handbook", Read: true}},
	}, sdk.WithProgress(log.add))

	t.Run("the start reports the population", func(t *testing.T) {
		// Progress comes on its own subject, so its last message may
		// reach the callback just after the command's result.
		poll.Until(t, 10*time.Second, "the population's last progress", func() bool {
			pop := log.of(schemas.PhasePopulation)
			return len(pop) > 0 && pop[len(pop)-1].Finished
		})
		pop := log.of(schemas.PhasePopulation)
		last := pop[len(pop)-1]
		assert.Equal(t, schemas.Progress{GroupID: group, Phase: schemas.PhasePopulation, Done: 1, Total: 1, Message: "populated", Finished: true}, last)
	})

	const sandbox = "it-progress-1"
	startSandbox(t, g, sandbox, sdk.SandboxOptions{})
	t.Run("the create reports the image build", func(t *testing.T) {
		poll.Until(t, 10*time.Second, "the build's last progress", func() bool {
			build := log.of(schemas.PhaseImageBuild)
			return len(build) > 0 && build[len(build)-1].Finished
		})
		build := log.of(schemas.PhaseImageBuild)
		require.GreaterOrEqual(t, len(build), 2, "a step and the end")
		first, last := build[0], build[len(build)-1]
		assert.Equal(t, sandbox, first.SandboxID)
		assert.Equal(t, 0, first.Done)
		assert.Positive(t, first.Total)
		assert.Contains(t, first.Message, "Step 1/")
		assert.True(t, last.Finished)
		assert.Empty(t, last.Error)
		assert.Equal(t, last.Total, last.Done, "every step done")
	})

	t.Run("the dashboard shows both live", func(t *testing.T) {
		row := func(selector, want string) {
			t.Helper()
			var got string
			poll.Until(t, 30*time.Second, selector+" to say "+want, func() bool {
				got = rowsText(t, page, selector)
				return strings.Contains(got, want)
			})
		}
		row(`#feed tr[data-kind="progress"][data-sandbox="`+sandbox+`"]`, "image_build")
		row(`#feed tr[data-kind="progress"][data-sandbox="`+sandbox+`"]`, "built")
		row(`#feed tr[data-kind="progress"]`, "population")
		row(`#feed tr[data-kind="progress"]`, "1/1 populated")
	})
}

// rowsText is the text of every element selector matches on page, one
// line each.
func rowsText(t *testing.T, page *rod.Page, selector string) string {
	t.Helper()
	els, err := page.Elements(selector)
	require.NoError(t, err)
	var b strings.Builder
	for _, el := range els {
		s, err := el.Text()
		require.NoError(t, err)
		b.WriteString(s + "\n")
	}
	return b.String()
}
