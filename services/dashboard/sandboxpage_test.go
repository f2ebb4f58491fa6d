package dashboard

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startSandboxPage starts a seeded system and checks that the page of
// sandbox sb-1 says empty (for example "No jobs.") while nothing of the
// kind is recorded.
func startSandboxPage(t *testing.T, empty string) *system {
	t.Helper()
	s := startSystem(t, Options{})
	seed(t, s)
	code, body := s.get(t, "/sandboxes/sb-1")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, empty, "the page before any is recorded")
	return s
}

// pageRow is a table row a page must show: the value of its data
// attribute and strings its cells hold.
type pageRow struct {
	key  string
	want []string
}

// checkRows fetches the page of sandbox sb-1 and checks its table rows
// <tr data-attr="…">: exactly want's, in want's order, each holding its
// strings.
func (s *system) checkRows(t *testing.T, attr string, want []pageRow) {
	t.Helper()
	code, body := s.get(t, "/sandboxes/sb-1")
	require.Equal(t, http.StatusOK, code)
	rows := regexp.MustCompile(`<tr data-`+attr+`="([^"]+)">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r[1]
	}
	wantKeys := make([]string, len(want))
	for i, w := range want {
		wantKeys[i] = w.key
	}
	require.Equal(t, wantKeys, keys, "the sandbox's rows, in order, and not another sandbox's")
	for i, w := range want {
		t.Run(w.key, func(t *testing.T) {
			for _, cell := range w.want {
				assert.Contains(t, rows[i][2], cell)
			}
		})
	}
}
