package limits

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sandox/sandox/schemas"
	"github.com/stretchr/testify/require"
)

// cgroupLayout is where one cgroup version keeps the files a Watcher reads.
type cgroupLayout struct {
	name                   string
	oomEvents, memoryLimit string
	pidsEvents, pidsLimit  string
	oomLine                func(n string) string
	pidsLine               func(n string) string
	unlimitedMemory        string
}

var layouts = []cgroupLayout{
	{
		name:      "v1",
		oomEvents: "memory/memory.oom_control", memoryLimit: "memory/memory.limit_in_bytes",
		pidsEvents: "pids/pids.events", pidsLimit: "pids/pids.max",
		oomLine:         func(n string) string { return "oom_kill_disable 0\nunder_oom 0\noom_kill " + n + "\n" },
		pidsLine:        func(n string) string { return "max " + n + "\n" },
		unlimitedMemory: "9223372036854771712\n",
	},
	{
		name:      "v2",
		oomEvents: "memory.events", memoryLimit: "memory.max",
		pidsEvents: "pids.events", pidsLimit: "pids.max",
		oomLine:         func(n string) string { return "low 0\nhigh 0\nmax 4\noom 2\noom_kill " + n + "\noom_group_kill 0\n" },
		pidsLine:        func(n string) string { return "max " + n + "\n" },
		unlimitedMemory: "max\n",
	},
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

func newWatcher(t *testing.T, root string) *Watcher {
	t.Helper()
	w, err := New(Config{CgroupRoot: root, Workspace: t.TempDir()})
	require.NoError(t, err)
	return w
}

func TestCheckCounters(t *testing.T) {
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			root := t.TempDir()
			file := func(rel string) string { return filepath.Join(root, rel) }
			writeFile(t, file(l.oomEvents), l.oomLine("3"))
			writeFile(t, file(l.memoryLimit), "134217728\n")
			writeFile(t, file(l.pidsEvents), l.pidsLine("0"))
			writeFile(t, file(l.pidsLimit), "64\n")
			w := newWatcher(t, root)

			require.Nil(t, w.Check(), "before anything happened, want no hits (the 3 kills before New are not news)")
			writeFile(t, file(l.oomEvents), l.oomLine("4"))
			writeFile(t, file(l.pidsEvents), l.pidsLine("2"))
			want := []schemas.LimitHit{
				{Resource: schemas.LimitMemory, Count: 1, Message: "the kernel killed 1 process: the sandbox ran out of its 128.0 MiB of memory"},
				{Resource: schemas.LimitPIDs, Count: 2, Message: "2 forks refused: the sandbox reached its limit of 64 processes (threads count too)"},
			}
			require.Equal(t, want, w.Check())
			require.Nil(t, w.Check(), "on a second check, want no hits")

			// Without limits the messages say so.
			writeFile(t, file(l.memoryLimit), l.unlimitedMemory)
			writeFile(t, file(l.pidsLimit), "max\n")
			writeFile(t, file(l.oomEvents), l.oomLine("6"))
			writeFile(t, file(l.pidsEvents), l.pidsLine("3"))
			want = []schemas.LimitHit{
				{Resource: schemas.LimitMemory, Count: 2, Message: "the kernel killed 2 processes: the sandbox ran out of memory"},
				{Resource: schemas.LimitPIDs, Count: 1, Message: "1 fork refused: the sandbox reached its process limit"},
			}
			require.Equal(t, want, w.Check())

			// A counter that goes down is a new baseline, not a hit.
			writeFile(t, file(l.oomEvents), l.oomLine("0"))
			require.Nil(t, w.Check(), "after the counter went down, want no hits")
			writeFile(t, file(l.oomEvents), l.oomLine("1"))
			got := w.Check()
			require.Len(t, got, 1, "want one kill counted from the new baseline")
			require.Equal(t, int64(1), got[0].Count, "%+v, want one kill counted from the new baseline", got)
		})
	}
}

func TestCheckMissingOrBadFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
	}{
		{"no cgroup files", nil},
		{"no oom_kill line", map[string]string{"memory.events": "oom 1\n"}},
		{"garbage counter", map[string]string{"pids.events": "max lots\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range tt.files {
				writeFile(t, filepath.Join(root, rel), content)
			}
			w := newWatcher(t, root)
			for rel := range tt.files {
				writeFile(t, filepath.Join(root, rel), "oom_kill 5\nmax 5\n")
			}
			require.Nil(t, w.Check(), "want no hits from counters that could not be read at start")
		})
	}
}

func TestCheckSurvivesVanishedFile(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(root, "memory.events")
	writeFile(t, events, "oom_kill 0\n")
	w := newWatcher(t, root)
	require.NoError(t, os.Remove(events))
	require.Nil(t, w.Check(), "want no hits while the file is gone")
	writeFile(t, events, "oom_kill 1\n")
	got := w.Check()
	require.Len(t, got, 1, "want the kill once the file is back")
	require.Equal(t, schemas.LimitMemory, got[0].Resource, "%+v, want the kill once the file is back", got)
}

func TestNotify(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(root, "memory.events")
	writeFile(t, events, "oom_kill 0\n")
	w := newWatcher(t, root)
	restart := schemas.LimitHit{Resource: schemas.LimitMemory, Count: 1, Message: "the sandbox was restarted"}
	w.Notify(restart)
	writeFile(t, events, "oom_kill 1\n")
	got := w.Check()
	require.Len(t, got, 2, "want the notice first, then the kill")
	require.Equal(t, restart, got[0], "%+v, want the notice first, then the kill", got)
	require.Equal(t, schemas.LimitMemory, got[1].Resource, "%+v, want the notice first, then the kill", got)
	require.Nil(t, w.Check(), "want the notice reported once")
}

func TestNotifyConcurrent(t *testing.T) {
	w := newWatcher(t, t.TempDir())
	const n = 100
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { w.Notify(schemas.LimitHit{Resource: schemas.LimitPIDs, Count: 1, Message: "x"}) })
	}
	var got []schemas.LimitHit
	var mu sync.Mutex
	for range 10 {
		wg.Go(func() {
			hits := w.Check()
			mu.Lock()
			defer mu.Unlock()
			got = append(got, hits...)
		})
	}
	wg.Wait()
	got = append(got, w.Check()...)
	require.Len(t, got, n, "notices, each once")
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no workspace", Config{}},
		{"negative disk limit", Config{Workspace: "/workspace", DiskLimitBytes: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Error(t, err)
		})
	}
}
