package limits

import "testing"

// BenchmarkCheck times one Check against this machine's own cgroup files
// (the memory and pids counters of the root cgroup, where they exist), as
// the executor makes after every action.
func BenchmarkCheck(b *testing.B) {
	w, err := New(Config{Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	if w.memory.events == "" && w.pids.events == "" {
		b.Skip("no cgroup counter files on this machine")
	}
	b.ReportAllocs()
	for b.Loop() {
		if hits := w.Check(); len(hits) > 100 {
			b.Fatal(hits)
		}
	}
}
