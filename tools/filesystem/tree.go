package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type deleteArgs struct {
	Path      string `json:"path" jsonschema:"description=File or directory to delete. A symbolic link is removed itself and not what it points to."`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"description=Delete a directory with everything in it. Without it only files and empty directories are deleted."`
}

func (f *fsys) deletePath() tools.Tool {
	const op = "delete_path"
	return tools.New(Family, op,
		"Delete a file, a symbolic link or an empty directory; a directory with content only when recursive is true.",
		func(_ context.Context, a deleteArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			if abs == filepath.VolumeName(abs)+string(filepath.Separator) {
				return tools.Result{}, d.invalid(op, abs, "refusing to delete the root directory")
			}
			info, err := os.Lstat(abs)
			if err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			if !info.IsDir() {
				if err := os.Remove(abs); err != nil {
					return tools.Result{}, d.fail(op, abs, err)
				}
				return tools.Result{Stdout: fmt.Sprintf("deleted %s %s", kind(info.Mode()), d.show(abs))}, nil
			}
			if a.Recursive {
				if err := os.RemoveAll(abs); err != nil {
					return tools.Result{}, d.fail(op, abs, err)
				}
				return tools.Result{Stdout: fmt.Sprintf("deleted directory %s and everything in it", d.show(abs))}, nil
			}
			if err := os.Remove(abs); err != nil {
				if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
					entries, _ := os.ReadDir(abs)
					return tools.Result{}, d.errAt(op, abs, fmt.Errorf("%w: it holds %s", syscall.ENOTEMPTY, plural(len(entries), "entry")),
						"pass recursive: true to delete it with everything in it")
				}
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("deleted empty directory %s", d.show(abs))}, nil
		})
}

type mkdirArgs struct {
	Path string `json:"path" jsonschema:"description=Directory to create. Missing parent directories are created too."`
}

func (f *fsys) makeDirectory() tools.Tool {
	const op = "make_directory"
	return tools.New(Family, op,
		"Create a directory and any missing parent directories. An existing directory is not an error.",
		func(_ context.Context, a mkdirArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			if info, err := os.Stat(abs); err == nil {
				if !info.IsDir() {
					return tools.Result{}, d.errAt(op, abs, fmt.Errorf("%w: a %s is in the way", syscall.ENOTDIR, kind(info.Mode())), "")
				}
				return tools.Result{Stdout: fmt.Sprintf("directory %s already exists", d.show(abs))}, nil
			}
			if err := os.MkdirAll(abs, newDirMode); err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("created directory %s", d.show(abs))}, nil
		})
}

type relocateArgs struct {
	Source      string `json:"source" jsonschema:"description=File or directory to take."`
	Destination string `json:"destination" jsonschema:"description=Its new path. End it with / to put the source inside that directory under its own name."`
	Overwrite   bool   `json:"overwrite,omitempty" jsonschema:"description=Replace what is at the destination. Without it an existing destination is an error."`
}

func (f *fsys) movePath() tools.Tool {
	const op = "move_path"
	return tools.New(Family, op,
		"Move or rename a file or directory. Refuses to replace an existing destination unless overwrite is true; missing parent directories of the destination are created.",
		func(ctx context.Context, a relocateArgs) (tools.Result, error) {
			d := f.here()
			r, err := d.relocate(op, a, false)
			if err != nil {
				return tools.Result{}, err
			}
			err = replacing(r.dst, r.dstExists, r.dstIsDir, func() error { return moveTree(ctx, r.src, r.dst) })
			if err != nil {
				return tools.Result{}, d.fail(op, r.dst, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("moved %s %s to %s", kind(r.info.Mode()), d.show(r.src), d.show(r.dst))}, nil
		})
}

func (f *fsys) copyPath() tools.Tool {
	const op = "copy_path"
	return tools.New(Family, op,
		"Copy a file or a whole directory tree, keeping file modes; symbolic links inside a tree are copied as links. "+
			"Refuses to replace an existing destination unless overwrite is true.",
		func(ctx context.Context, a relocateArgs) (tools.Result, error) {
			d := f.here()
			r, err := d.relocate(op, a, true)
			if err != nil {
				return tools.Result{}, err
			}
			if m := r.info.Mode(); !m.IsDir() && !m.IsRegular() && m&fs.ModeSymlink == 0 {
				return tools.Result{}, d.errAt(op, r.src, fmt.Errorf("%w: cannot copy a %s", schemas.CodeUnsupported, kind(m)), "")
			}
			var st copyStats
			err = replacing(r.dst, r.dstExists, r.dstIsDir, func() (err error) {
				st, err = copyTree(ctx, r.src, r.dst)
				return err
			})
			if err != nil {
				return tools.Result{}, d.fail(op, r.dst, err)
			}
			if !r.info.IsDir() {
				return tools.Result{Stdout: fmt.Sprintf("copied %s %s to %s (%s)", kind(r.info.Mode()), d.show(r.src), d.show(r.dst), byteSize(st.bytes))}, nil
			}
			return tools.Result{Stdout: fmt.Sprintf("copied directory %s to %s (%s)", d.show(r.src), d.show(r.dst), st)}, nil
		})
}

// relocation is a checked move or copy: source and destination resolved,
// the source found, and the destination free or allowed to be replaced.
type relocation struct {
	src, dst  string
	info      fs.FileInfo // of the source
	dstExists bool        // something to replace is at dst
	dstIsDir  bool        // and it is a directory
}

// relocate resolves and checks the paths of a move or copy. follow makes a
// symbolic link as the source stand for what it points to.
func (d cwd) relocate(op string, a relocateArgs, follow bool) (relocation, error) {
	var r relocation
	var err error
	if r.src, err = d.abs(op, a.Source); err != nil {
		return r, err
	}
	if r.dst, err = d.abs(op, a.Destination); err != nil {
		return r, err
	}
	if strings.HasSuffix(a.Destination, "/") {
		r.dst = filepath.Join(r.dst, filepath.Base(r.src))
	}
	if follow {
		if resolved, err := filepath.EvalSymlinks(r.src); err == nil {
			r.src = resolved
		}
	}
	if r.info, err = os.Lstat(r.src); err != nil {
		return r, d.fail(op, r.src, err)
	}
	switch {
	case r.src == r.dst:
		return r, d.invalid(op, r.src, "source and destination are the same")
	case r.info.IsDir() && within(r.dst, r.src):
		return r, d.invalid(op, r.dst, "the destination is inside the source directory %q", d.show(r.src))
	case within(r.src, r.dst):
		return r, d.invalid(op, r.dst, "the destination holds the source %q", d.show(r.src))
	}
	dinfo, err := os.Lstat(r.dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, d.fail(op, r.dst, os.MkdirAll(filepath.Dir(r.dst), newDirMode))
	case err != nil:
		return r, d.fail(op, r.dst, err)
	case dinfo.IsDir() && !r.info.IsDir():
		return r, d.errAt(op, r.dst, syscall.EISDIR, `end destination with "/" to put the file inside it`)
	case !dinfo.IsDir() && r.info.IsDir():
		return r, d.errAt(op, r.dst, fmt.Errorf("%w: a %s is in the way", syscall.ENOTDIR, kind(dinfo.Mode())), "delete it first")
	case !a.Overwrite:
		return r, d.errAt(op, r.dst, fs.ErrExist, "pass overwrite: true to replace it")
	}
	r.dstExists, r.dstIsDir = true, dinfo.IsDir()
	return r, nil
}

// kind names the type of a file mode: "file", "directory", "symlink", …
func kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
