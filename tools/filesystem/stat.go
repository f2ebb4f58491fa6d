package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/sandox/sandox/tools"
)

type statArgs struct {
	Path string `json:"path" jsonschema:"description=File or directory to describe. A symbolic link is described itself along with its target."`
}

// status is the structured result of stat_path.
type status struct {
	Path     string    `json:"path"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Mode     string    `json:"mode"`
	Modified time.Time `json:"modified"`
	Target   string    `json:"target,omitempty"`      // of a symbolic link
	Points   string    `json:"target_type,omitempty"` // what the link leads to, or "broken"
	Entries  *int      `json:"entries,omitempty"`     // of a directory
}

func (f *fsys) statPath() tools.Tool {
	const op = "stat_path"
	return tools.New(Family, op,
		"Describe a path: its type (file, directory, symlink, …), size in bytes, permissions, modification time and, for a symbolic link, its target.",
		func(_ context.Context, a statArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			info, err := os.Lstat(abs)
			if err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			st := status{
				Path:     d.show(abs),
				Type:     kind(info.Mode()),
				Size:     info.Size(),
				Mode:     fmt.Sprintf("%s (%04o)", info.Mode(), info.Mode().Perm()),
				Modified: info.ModTime().UTC(),
			}
			switch {
			case info.Mode()&fs.ModeSymlink != 0:
				st.Target, _ = os.Readlink(abs)
				st.Points = "broken"
				if ti, err := os.Stat(abs); err == nil {
					st.Points = kind(ti.Mode())
				}
			case info.IsDir():
				if des, err := os.ReadDir(abs); err == nil {
					n := len(des)
					st.Entries = &n
				}
			}
			ret, _ := json.Marshal(st)
			return tools.Result{Stdout: st.text(), Return: ret}, nil
		})
}

// text renders st one field per line.
func (st status) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "path: %s\ntype: %s\nsize: %s\nmode: %s\nmodified: %s\n",
		st.Path, st.Type, byteSize(st.Size), st.Mode, st.Modified.Format(time.RFC3339))
	if st.Target != "" {
		fmt.Fprintf(&b, "target: %s (%s)\n", st.Target, st.Points)
	}
	if st.Entries != nil {
		fmt.Fprintf(&b, "entries: %d\n", *st.Entries)
	}
	return b.String()
}
