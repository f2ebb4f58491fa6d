package executor

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWorkspaceFingerprint(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b.txt", "one")
	before := workspaceFingerprint(dir)
	if got := workspaceFingerprint(dir); got != before {
		t.Fatalf("got %x, want %x for an unchanged workspace", got, before)
	}
	write(rollbackPrefix+"x-stage/f", "staged")
	if got := workspaceFingerprint(dir); got != before {
		t.Errorf("got %x, want %x: a rollback's staging directory is not a change", got, before)
	}
	steps := []struct {
		name   string
		change func()
	}{
		{"a new file", func() { write("c.txt", "new") }},
		{"a rewrite to the same size", func() {
			write("a/b.txt", "two")
			later := time.Now().Add(time.Second)
			_ = os.Chtimes(filepath.Join(dir, "a/b.txt"), later, later)
		}},
		{"a mode", func() { _ = os.Chmod(filepath.Join(dir, "c.txt"), 0o600) }},
		{"a removal", func() { _ = os.Remove(filepath.Join(dir, "c.txt")) }},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			prev := workspaceFingerprint(dir)
			s.change()
			if got := workspaceFingerprint(dir); got == prev {
				t.Errorf("got the same fingerprint %x after %s, want another", got, s.name)
			}
		})
	}
}
