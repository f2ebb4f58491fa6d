package checkpoints

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// fixture is a checkpoint service over a real JetStream store and a
// fakeArchiver, with sandbox sb1 running in container c1 whose workspace
// holds some files.
type fixture struct {
	svc  *Service
	arch *fakeArchiver
	sb   Sandbox
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	arch := &fakeArchiver{root: t.TempDir()}
	f := &fixture{
		svc:  New(openTestStore(t, 0), arch, Config{Workspace: "/workspace", UID: os.Getuid(), User: "1000:1000"}),
		arch: arch,
		sb:   Sandbox{ID: "sb1", GroupID: "g1", Container: "c1"},
	}
	f.container(t, "c1")
	f.write(t, "c1", map[string]string{
		"src/main.py":  "print('hi')\n",
		"src/lib/x.py": "x = 1\n",
		"notes.txt":    "notes",
		"@link":        "src/main.py",
	})
	return f
}

// container makes the workspace of a container.
func (f *fixture) container(t *testing.T, id string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(f.arch.dir(id, "/workspace"), 0o755))
}

// write puts files into container id's workspace: a name beginning with
// @ is a symbolic link to its value, a value "" removes the entry.
func (f *fixture) write(t *testing.T, id string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		link := strings.HasPrefix(name, "@")
		p := f.arch.dir(id, "/workspace/"+strings.TrimPrefix(name, "@"))
		require.NoError(t, os.RemoveAll(p))
		if body == "" {
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		if link {
			require.NoError(t, os.Symlink(body, p))
		} else {
			require.NoError(t, os.WriteFile(p, []byte(body), 0o640))
		}
	}
}

// state lists every entry of container id's workspace with its type, mode
// and content digest or link target: equal states are byte-exact equal
// workspaces.
func (f *fixture) state(t *testing.T, id string) []string {
	t.Helper()
	top := f.arch.dir(id, "/workspace")
	var out []string
	require.NoError(t, filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == top {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out = append(out, fmt.Sprintf("L %s -> %s", rel, target))
			return err
		case d.IsDir():
			out = append(out, fmt.Sprintf("D %s %o", rel, info.Mode().Perm()))
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out = append(out, fmt.Sprintf("F %s %o %s", rel, info.Mode().Perm(), hex.EncodeToString(sum[:])))
		}
		return nil
	}))
	return out
}

func TestServiceTakesComparesAndRollsBack(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	before := f.state(t, "c1")

	base, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)
	assert.Equal(t, "g1", base.GroupID)
	assert.Equal(t, 6, base.Files, "src, src/lib, three files, the link")
	assert.Equal(t, base.Bytes, base.NewBytes, "every content is new")
	again, err := f.svc.Take(ctx, f.sb, "", true)
	require.NoError(t, err)
	assert.Zero(t, again.NewBytes, "an unchanged workspace stores no content")
	assert.True(t, again.Auto)

	f.write(t, "c1", map[string]string{"src/main.py": "print('changed')\n", "notes.txt": "", "new.txt": "new"})

	list, err := f.svc.List(ctx, f.sb.ID, f.sb.Container)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{"new.txt", "notes.txt", "src/main.py"}, list[0].ChangedSince)
	stored, err := f.svc.List(ctx, f.sb.ID, "")
	require.NoError(t, err)
	assert.Nil(t, stored[0].ChangedSince, "a stopped sandbox's list reads no workspace")

	d, err := f.svc.Diff(ctx, f.sb.ID, "base", "", f.sb.Container)
	require.NoError(t, err)
	assert.Equal(t, schemas.CheckpointDiff{From: base.ID, Added: []string{"new.txt"}, Changed: []string{"src/main.py"}, Removed: []string{"notes.txt"}}, d)

	changed, err := f.svc.Take(ctx, f.sb, "changed", false)
	require.NoError(t, err)
	d, err = f.svc.Diff(ctx, f.sb.ID, "base", "changed", "")
	require.NoError(t, err)
	assert.Equal(t, changed.ID, d.To)
	assert.Equal(t, []string{"new.txt"}, d.Added)

	got, err := f.svc.Rollback(ctx, f.sb, "base")
	require.NoError(t, err)
	assert.Equal(t, base.ID, got.ID)
	assert.Equal(t, before, f.state(t, "c1"), "the workspace is as the checkpoint saved it")

	got, err = f.svc.Rollback(ctx, f.sb, changed.ID)
	require.NoError(t, err)
	assert.Equal(t, "changed", got.Name, "a checkpoint is found by its id too")
	assert.Contains(t, f.state(t, "c1"), "F new.txt 640 "+sha("new"))
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestServiceRefusesBadRequests(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	_, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"a name taken already", func() error { _, err := f.svc.Take(ctx, f.sb, "base", false); return err }, schemas.CodeAlreadyExists},
		{"a bad name", func() error { _, err := f.svc.Take(ctx, f.sb, "no spaces", false); return err }, schemas.CodeBadRequest},
		{"no checkpoint named", func() error { _, err := f.svc.Rollback(ctx, f.sb, ""); return err }, schemas.CodeBadRequest},
		{"rollback to an unknown checkpoint", func() error { _, err := f.svc.Rollback(ctx, f.sb, "nope"); return err }, schemas.CodeNotFound},
		{"restore an unknown checkpoint", func() error {
			_, err := f.svc.Restore(ctx, "c1", schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "nope"})
			return err
		}, schemas.CodeNotFound},
		{"restore from an unknown sandbox", func() error {
			_, err := f.svc.Restore(ctx, "c1", schemas.CheckpointRef{SandboxID: "sb9", Checkpoint: "base"})
			return err
		}, schemas.CodeNotFound},
		{"diff from an unknown checkpoint", func() error { _, err := f.svc.Diff(ctx, "sb1", "nope", "", "c1"); return err }, schemas.CodeNotFound},
		{"diff to an unknown checkpoint", func() error { _, err := f.svc.Diff(ctx, "sb1", "base", "nope", ""); return err }, schemas.CodeNotFound},
		{"diff with a stopped sandbox", func() error { _, err := f.svc.Diff(ctx, "sb1", "base", "", ""); return err }, schemas.CodeConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			assert.ErrorIs(t, err, tt.want, "got %v", err)
		})
	}
}

// TestServiceReadsNoWorkspaceOfAGoneContainer: a container the engine does
// not have fails a checkpoint, a list with changes and a diff with the
// workspace, and records nothing.
func TestServiceReadsNoWorkspaceOfAGoneContainer(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	_, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)
	gone := Sandbox{ID: "sb1", Container: "gone"}

	_, err = f.svc.Take(ctx, gone, "", false)
	assert.ErrorContains(t, err, "checkpoint sandbox sb1")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = f.svc.List(ctx, "sb1", "gone")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	_, err = f.svc.Diff(ctx, "sb1", "base", "", "gone")
	assert.ErrorIs(t, err, fs.ErrNotExist)
	list, err := f.svc.List(ctx, "sb1", "")
	require.NoError(t, err)
	assert.Len(t, list, 1, "the failed checkpoint is not recorded")
}

func TestServiceRestoresAForkByteExact(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	base, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)
	for _, fork := range []string{"fork1", "fork2"} {
		f.container(t, fork)
		got, err := f.svc.Restore(ctx, fork, schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "base"})
		require.NoError(t, err)
		assert.Equal(t, base.ID, got.ID)
		assert.Equal(t, f.state(t, "c1"), f.state(t, fork))
	}

	f.container(t, "small")
	f.arch.room = 4 // fewer bytes than the checkpoint holds
	_, err = f.svc.Restore(ctx, "small", schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "base"})
	assert.ErrorIs(t, err, schemas.CodeResourceExhausted, "got %v", err)
	assert.ErrorContains(t, err, "does not fit the new sandbox's disk")

	_, err = f.svc.Restore(ctx, "none", schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "base"})
	assert.ErrorContains(t, err, "restore checkpoint "+base.ID+" of sandbox sb1")
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// TestRollbackThatFailsLeavesTheWorkspace: a rollback whose staging runs
// out of disk, or whose swap fails, leaves the workspace as it was and no
// staged copy behind.
func TestRollbackThatFailsLeavesTheWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	base, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)
	f.write(t, "c1", map[string]string{"src/main.py": "print('changed')\n", "new.txt": "new"})
	changed := f.state(t, "c1")

	t.Run("full disk while staging", func(t *testing.T) {
		f.arch.room = 8 // the first file fits, the second does not
		defer func() { f.arch.room = 0 }()
		_, err := f.svc.Rollback(ctx, f.sb, "base")
		assert.ErrorIs(t, err, schemas.CodeResourceExhausted, "got %v", err)
		assert.ErrorContains(t, err, "the workspace is unchanged")
		assert.Equal(t, changed, f.state(t, "c1"))
	})
	t.Run("swap fails", func(t *testing.T) {
		// The directory the swap moves the old tree to exists already:
		// the swap script stops before it moves anything.
		old := f.arch.dir("c1", "/workspace/"+StagePrefix+base.ID[len(base.ID)-12:]+"-old")
		require.NoError(t, os.Mkdir(old, 0o700))
		defer os.Remove(old)
		_, err := f.svc.Rollback(ctx, f.sb, "base")
		assert.ErrorContains(t, err, "swap in checkpoint "+base.ID)
		require.NoError(t, os.Remove(old))
		assert.Equal(t, changed, f.state(t, "c1"))
	})
	t.Run("the container is gone", func(t *testing.T) {
		_, err := f.svc.Rollback(ctx, Sandbox{ID: "sb1", Container: "gone"}, "base")
		assert.ErrorContains(t, err, "stage checkpoint "+base.ID)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
}

// TestBrokenStoreFailsClearly: a checkpoint whose manifest or a content is
// missing from the object store, or whose content is cut short, fails a
// rollback, a restore and a diff with an error that names what is
// missing, and the workspace stays as it was.
func TestBrokenStoreFailsClearly(t *testing.T) {
	tests := []struct {
		name string
		// breakIt damages checkpoint c in the store.
		breakIt func(t *testing.T, st *Store, c schemas.Checkpoint)
		want    string
		wantIs  error
		diffs   bool // whether a diff, which reads no content, still works
	}{
		{"missing manifest", func(t *testing.T, st *Store, c schemas.Checkpoint) {
			require.NoError(t, st.blobs.Delete(t.Context(), manifestName(c.SandboxID, c.ID)))
		}, "manifest of checkpoint", jetstream.ErrObjectNotFound, false},
		{"corrupted manifest", func(t *testing.T, st *Store, c schemas.Checkpoint) {
			_, err := st.blobs.PutString(t.Context(), manifestName(c.SandboxID, c.ID), "{not json")
			require.NoError(t, err)
		}, "manifest of checkpoint", nil, false},
		{"missing content", func(t *testing.T, st *Store, c schemas.Checkpoint) {
			require.NoError(t, st.blobs.Delete(t.Context(), blobName(sha("notes"))))
		}, "notes.txt: content sha256 " + sha("notes"), jetstream.ErrObjectNotFound, true},
		{"content cut short", func(t *testing.T, st *Store, c schemas.Checkpoint) {
			_, err := st.blobs.PutString(t.Context(), blobName(sha("notes")), "no")
			require.NoError(t, err)
		}, "notes.txt: the store holds 2 bytes, the manifest says 5", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := t.Context()
			c, err := f.svc.Take(ctx, f.sb, "base", false)
			require.NoError(t, err)
			f.write(t, "c1", map[string]string{"new.txt": "new"})
			now := f.state(t, "c1")
			tt.breakIt(t, f.svc.Store(), c)

			_, err = f.svc.Rollback(ctx, f.sb, "base")
			assert.ErrorContains(t, err, tt.want)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs)
			}
			assert.Equal(t, now, f.state(t, "c1"), "the workspace is unchanged")

			f.container(t, "fork")
			_, err = f.svc.Restore(ctx, "fork", schemas.CheckpointRef{SandboxID: "sb1", Checkpoint: "base"})
			assert.ErrorContains(t, err, tt.want)

			_, err = f.svc.Diff(ctx, "sb1", "base", "", "c1")
			if tt.diffs {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.want)
			}
		})
	}
}

func TestPruneAutoKeepsTheNewestAndTheNamed(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	var autos []string
	for i := range 4 {
		if i == 1 {
			_, err := f.svc.Take(ctx, f.sb, "named", false)
			require.NoError(t, err)
		}
		c, err := f.svc.Take(ctx, f.sb, "", true)
		require.NoError(t, err)
		autos = append(autos, c.ID)
	}
	require.NoError(t, f.svc.PruneAuto(ctx, "sb1", 2))
	list, err := f.svc.List(ctx, "sb1", "")
	require.NoError(t, err)
	var got []string
	for _, c := range list {
		got = append(got, c.Name+c.ID)
	}
	assert.Equal(t, []string{"named" + list[0].ID, autos[2], autos[3]}, got)
	require.NoError(t, f.svc.PruneAuto(ctx, "sb1", 5), "fewer than keep")
	require.NoError(t, f.svc.PruneAuto(ctx, "sb-none", 0), "a sandbox without checkpoints")
}

func TestDeleteLeavesNoTrace(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	st := f.svc.Store()
	c, err := f.svc.Take(ctx, f.sb, "base", false)
	require.NoError(t, err)
	require.NoError(t, st.Delete(ctx, c))
	_, err = st.Resolve(ctx, "sb1", "base")
	assert.ErrorIs(t, err, schemas.CodeNotFound)
	_, err = st.Manifest(ctx, c)
	assert.ErrorIs(t, err, jetstream.ErrObjectNotFound)
	require.NoError(t, st.Delete(ctx, c), "deleting again is no error")
}

func TestScanRefusesABrokenArchive(t *testing.T) {
	_, err := scan(t.Context(), strings.NewReader(strings.Repeat("not a tar header ", 64)), nil)
	assert.ErrorContains(t, err, "read the workspace archive")

	archive := workspaceTar(t, entry{name: "a.txt", body: strings.Repeat("x", 2000)})
	_, err = scan(t.Context(), strings.NewReader(string(archive[:1800])), nil)
	assert.ErrorContains(t, err, "a.txt: ", "a content cut short")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = scan(ctx, strings.NewReader(string(archive)), nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestErrorClasses(t *testing.T) {
	tests := []struct {
		err       error
		full, dev bool
	}{
		{errors.New("nats: maximum bytes exceeded"), true, false},
		{errors.New("insufficient resources"), true, false},
		{errors.New("resource limits exceeded for account"), true, false},
		{errors.New("write /workspace/x: no space left on device"), false, true},
		{errors.New("write: disk quota exceeded"), false, true},
		{errors.New("connection refused"), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.Equal(t, tt.full, storeFull(tt.err), "storeFull")
			assert.Equal(t, tt.dev, noSpace(tt.err), "noSpace")
			err := storeError(tt.err, "store")
			assert.Equal(t, tt.full, errors.Is(err, schemas.CodeResourceExhausted), "got %v", err)
			assert.ErrorIs(t, err, tt.err)
		})
	}
	assert.NoError(t, storeError(nil, "store"))
	assert.False(t, noSpace(nil))
}
