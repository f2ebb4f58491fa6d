package checkpoints

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/sandox/sandox/internal/natstest"
	"github.com/sandox/sandox/schemas"
)

// entry is one file of a workspace archive a test builds.
type entry struct {
	name, body, link string
	dir              bool
}

// workspaceTar is the tar stream docker cp would give for /workspace
// holding entries.
func workspaceTar(t *testing.T, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(h *tar.Header, body string) {
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	mtime := time.Unix(1700000000, 0)
	write(&tar.Header{Typeflag: tar.TypeDir, Name: "workspace/", Mode: 0o755, ModTime: mtime}, "")
	for _, e := range entries {
		switch {
		case e.dir:
			write(&tar.Header{Typeflag: tar.TypeDir, Name: "workspace/" + e.name + "/", Mode: 0o755, ModTime: mtime}, "")
		case e.link != "":
			write(&tar.Header{Typeflag: tar.TypeSymlink, Name: "workspace/" + e.name, Linkname: e.link, Mode: 0o777, ModTime: mtime}, "")
		default:
			write(&tar.Header{Typeflag: tar.TypeReg, Name: "workspace/" + e.name, Mode: 0o644, Size: int64(len(e.body)), ModTime: mtime}, e.body)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openTestStore(t *testing.T, maxBytes int64) *Store {
	t.Helper()
	nc := natstest.Connect(t, natstest.Start(t))
	st, err := OpenStore(t.Context(), natstest.JetStream(t, nc), StoreConfig{MaxBytes: maxBytes})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// take scans archive into the store as checkpoint id of sandbox sb.
func take(t *testing.T, st *Store, sb, id, name string, archive []byte) (schemas.Checkpoint, error) {
	t.Helper()
	res, err := scan(t.Context(), bytes.NewReader(archive), st.putBlob)
	if err != nil {
		return schemas.Checkpoint{}, err
	}
	c := schemas.Checkpoint{ID: id, Name: name, SandboxID: sb, CreatedAt: time.Now().UTC(), Files: len(res.files), Bytes: res.bytes, NewBytes: res.newBytes}
	return c, st.save(t.Context(), schemas.CheckpointManifest{Checkpoint: c, Files: res.files})
}

func TestStoreSavesContentOnceAndRestoresByteExact(t *testing.T) {
	st := openTestStore(t, 0)
	big := string(bytes.Repeat([]byte("0123456789abcdef"), (spoolInMemory/16)+100)) // spooled to a file
	first := workspaceTar(t,
		entry{name: "src", dir: true},
		entry{name: "src/main.py", body: "print('hi')\n"},
		entry{name: "big.bin", body: big},
		entry{name: "link", link: "src/main.py"},
		entry{name: ".sandox-rollback-x-stage", dir: true},
		entry{name: ".sandox-rollback-x-stage/left", body: "left over"},
	)
	c1, err := take(t, st, "sb1", "c1", "first", first)
	if err != nil {
		t.Fatal(err)
	}
	if c1.Files != 4 || c1.NewBytes != c1.Bytes || c1.Bytes != int64(len(big)+12) {
		t.Fatalf("got files %d bytes %d new %d, want 4 files, %d bytes, all new", c1.Files, c1.Bytes, c1.NewBytes, len(big)+12)
	}
	second := workspaceTar(t,
		entry{name: "src", dir: true},
		entry{name: "src/main.py", body: "print('changed')\n"},
		entry{name: "big.bin", body: big},
		entry{name: "notes.txt", body: "new"},
	)
	c2, err := take(t, st, "sb1", "c2", "", second)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len("print('changed')\n") + 3); c2.NewBytes != want {
		t.Errorf("second checkpoint added %d bytes, want %d (only the changed files)", c2.NewBytes, want)
	}

	list, err := st.List(t.Context(), "sb1")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "c1" || list[1].ID != "c2" {
		t.Fatalf("got list %+v, want c1, c2", list)
	}
	if _, err := st.Resolve(t.Context(), "sb1", "nope"); !errors.Is(err, schemas.CodeNotFound) {
		t.Errorf("got %v for an unknown checkpoint, want not_found", err)
	}
	byName, err := st.Resolve(t.Context(), "sb1", "first")
	if err != nil || byName.ID != "c1" {
		t.Fatalf("resolve by name: got %+v, %v, want c1", byName, err)
	}

	m1, _ := st.Manifest(t.Context(), c1)
	m2, _ := st.Manifest(t.Context(), c2)
	d := diff(m1.Files, m2.Files)
	if !slices.Equal(d.Added, []string{"notes.txt"}) || !slices.Equal(d.Changed, []string{"src/main.py"}) || !slices.Equal(d.Removed, []string{"link"}) {
		t.Errorf("got diff %+v, want added notes.txt, changed src/main.py, removed link", d)
	}

	// The archive written back from the store carries every byte.
	s := New(st, nil, Config{UID: 10001})
	var out bytes.Buffer
	if err := s.writeArchive(t.Context(), &out, m1, ""); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got[h.Name] = string(b) + h.Linkname
		if h.Uid != 10001 {
			t.Errorf("%s: got uid %d, want 10001", h.Name, h.Uid)
		}
	}
	want := map[string]string{"src/": "", "src/main.py": "print('hi')\n", "big.bin": big, "link": "src/main.py"}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %d bytes, want %d", k, len(got[k]), len(v))
		}
	}
}

func TestStoreFullIsResourceExhausted(t *testing.T) {
	st := openTestStore(t, 64<<10)
	body := string(bytes.Repeat([]byte("x"), 200<<10))
	_, err := take(t, st, "sb1", "c1", "", workspaceTar(t, entry{name: "huge", body: body}))
	if !errors.Is(err, schemas.CodeResourceExhausted) {
		t.Fatalf("got %v, want resource_exhausted", err)
	}
	list, err := st.List(context.WithoutCancel(t.Context()), "sb1")
	if err != nil || len(list) != 0 {
		t.Errorf("got %d checkpoints, %v after a refused one, want none", len(list), err)
	}
}
