package checkpoints

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// fakeArchiver is a test double of runtime.Archiver over host directories:
// a container id names a directory below root that stands for the
// container's file system. Archive and Extract read and write tar streams
// there as the engine's archive API does (entries named after the
// directory's base name, then the paths below it), and Exec runs the
// command on the host with every absolute argument moved below the
// container's directory, so the real swap script runs (python3) on a real
// file system. A unit test uses it where a container cannot be had; the
// integration tests (integration/checkpoints_test.go) run the same code
// against the Docker engine.
type fakeArchiver struct {
	root string
	// room, when above 0, is how many bytes of file content one Extract
	// may write; past it the write fails as a full disk does (ENOSPC),
	// leaving what it wrote.
	room int64
}

var _ runtime.Archiver = (*fakeArchiver)(nil)

// dir is the host directory standing for path p of container id.
func (a *fakeArchiver) dir(id, p string) string {
	return filepath.Join(a.root, id, filepath.FromSlash(p))
}

// Archive returns a tar stream of dir of container id.
func (a *fakeArchiver) Archive(ctx context.Context, id, dir string) (io.ReadCloser, error) {
	top := a.dir(id, dir)
	if _, err := os.Stat(top); err != nil {
		return nil, fmt.Errorf("archive %s of container %s: %w", dir, id, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	base := filepath.Base(dir)
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if d.Type()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(top, p)
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(filepath.Join(base, rel))
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		return nil, err
	}
	return io.NopCloser(&buf), nil
}

// Extract unpacks the tar stream r into dir of container id, keeping the
// modes its headers give (owners are the test's own).
func (a *fakeArchiver) Extract(ctx context.Context, id, dir string, r io.Reader) error {
	top := a.dir(id, dir)
	if _, err := os.Stat(top); err != nil {
		return fmt.Errorf("extract into %s of container %s: %w", dir, id, err)
	}
	tr := tar.NewReader(r)
	written := int64(0)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(hdr.Name, "/")
		if !filepath.IsLocal(name) {
			return fmt.Errorf("extract: %q leaves the directory", hdr.Name)
		}
		p := filepath.Join(top, filepath.FromSlash(name))
		mode := fs.FileMode(hdr.Mode) & fs.ModePerm
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				return err
			}
			err = os.Chmod(p, mode)
		case tar.TypeSymlink:
			err = os.Symlink(hdr.Linkname, p)
		case tar.TypeReg:
			if a.room > 0 && written+hdr.Size > a.room {
				return fmt.Errorf("extract %s: write %s: %w", dir, name, syscall.ENOSPC)
			}
			written += hdr.Size
			err = writeFile(p, tr, mode)
		default:
			return fmt.Errorf("extract: %s: unexpected type %c", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(p string, r io.Reader, mode fs.FileMode) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// Exec runs cmd on the host, its absolute arguments moved below container
// id's directory; user is not switched to.
func (a *fakeArchiver) Exec(ctx context.Context, id, user string, cmd []string) (runtime.ExecResult, error) {
	if _, err := os.Stat(a.dir(id, "/")); err != nil {
		return runtime.ExecResult{}, fmt.Errorf("exec in container %s: %w", id, err)
	}
	args := make([]string, len(cmd))
	for i, c := range cmd {
		args[i] = c
		if strings.HasPrefix(c, "/") {
			args[i] = a.dir(id, c)
		}
	}
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return runtime.ExecResult{ExitCode: exit.ExitCode(), Output: string(out)}, nil
	}
	if err != nil {
		return runtime.ExecResult{}, err
	}
	return runtime.ExecResult{Output: string(out)}, nil
}
