package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/sandox/sandox/tools"
)

type createArgs struct {
	Path      string `json:"path" jsonschema:"description=File to create. Missing parent directories are created."`
	Content   string `json:"content" jsonschema:"description=Text to write. It is written exactly: end it with a newline if the file should end with one."`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"description=Replace the file if it exists. Without it an existing file is an error."`
}

func (f *fsys) createFile() tools.Tool {
	const op = "create_file"
	return tools.New(Family, op,
		"Create a new file with the given content, creating missing parent directories. Fails if the path exists unless overwrite is true.",
		func(_ context.Context, a createArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			if info, err := os.Stat(abs); err == nil && info.IsDir() {
				return tools.Result{}, d.isDirErr(op, abs)
			}
			if a.Overwrite {
				created, err := replaceFile(abs, []byte(a.Content))
				if err != nil {
					return tools.Result{}, d.fail(op, abs, err)
				}
				verb := "overwrote"
				if created {
					verb = "created"
				}
				return tools.Result{Stdout: fmt.Sprintf("%s %s (%s)", verb, d.show(abs), byteSize(int64(len(a.Content))))}, nil
			}
			if err := createExclusive(abs, []byte(a.Content)); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return tools.Result{}, d.errAt(op, abs, fs.ErrExist, "pass overwrite: true to replace it, or edit it with replace_in_file")
				}
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("created %s (%s)", d.show(abs), byteSize(int64(len(a.Content))))}, nil
		})
}

type writeArgs struct {
	Path    string `json:"path" jsonschema:"description=File to write. Missing parent directories are created."`
	Content string `json:"content" jsonschema:"description=The file's new content in full. It is written exactly: end it with a newline if the file should end with one."`
}

func (f *fsys) writeFile() tools.Tool {
	const op = "write_file"
	return tools.New(Family, op,
		"Write a file in full: create it, or replace the content of an existing file (keeping its permissions). "+
			"The write is atomic: readers see the old or the new content, never a mix.",
		func(_ context.Context, a writeArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			created, err := replaceFile(abs, []byte(a.Content))
			if err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			what := "replaced the existing file"
			if created {
				what = "new file"
			}
			return tools.Result{Stdout: fmt.Sprintf("wrote %s to %s (%s)", byteSize(int64(len(a.Content))), d.show(abs), what)}, nil
		})
}

type appendArgs struct {
	Path    string `json:"path" jsonschema:"description=File to append to. It is created if missing."`
	Content string `json:"content" jsonschema:"description=Text to add at the end of the file exactly as given. Start it with a newline if the file does not end with one."`
}

func (f *fsys) appendFile() tools.Tool {
	const op = "append_file"
	return tools.New(Family, op,
		"Append text to the end of a file, creating the file (and missing parent directories) if needed.",
		func(_ context.Context, a appendArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			size, err := appendTo(abs, []byte(a.Content))
			if err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("appended %s to %s; it is now %s", byteSize(int64(len(a.Content))), d.show(abs), byteSize(size))}, nil
		})
}

// appendTo appends data to abs, creating it and its parents if needed, and
// returns the file's new size.
func appendTo(abs string, data []byte) (int64, error) {
	info, err := os.Stat(abs)
	switch {
	case err == nil && info.IsDir():
		return 0, &fs.PathError{Op: "append", Path: abs, Err: syscall.EISDIR}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(abs), newDirMode); err != nil {
			return 0, err
		}
	}
	file, err := os.OpenFile(abs, os.O_WRONLY|os.O_APPEND|os.O_CREATE, newFileMode)
	if err != nil {
		return 0, err
	}
	_, err = file.Write(data)
	var size int64
	if err == nil {
		var st os.FileInfo
		if st, err = file.Stat(); err == nil {
			size = st.Size()
		}
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	return size, err
}
