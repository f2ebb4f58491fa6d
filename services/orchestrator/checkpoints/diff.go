package checkpoints

import (
	"slices"

	"github.com/sandox/sandox/schemas"
)

// diff compares two sorted manifests' entries: a path in b only is added,
// in a only removed, in both with another type, content, link target or
// mode changed. A directory whose mtime alone moved is not changed (its
// entries say what changed in it).
func diff(a, b []schemas.CheckpointFile) schemas.CheckpointDiff {
	d := schemas.CheckpointDiff{Added: []string{}, Changed: []string{}, Removed: []string{}}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Path < b[j].Path):
			d.Removed = append(d.Removed, a[i].Path)
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			d.Added = append(d.Added, b[j].Path)
			j++
		default:
			if differs(a[i], b[j]) {
				d.Changed = append(d.Changed, a[i].Path)
			}
			i++
			j++
		}
	}
	return d
}

func differs(x, y schemas.CheckpointFile) bool {
	return x.Type != y.Type || x.SHA256 != y.SHA256 || x.Link != y.Link || x.Mode != y.Mode
}

// changedPaths lists every path of d, added, changed or removed, sorted.
func changedPaths(d schemas.CheckpointDiff) []string {
	out := make([]string, 0, len(d.Added)+len(d.Changed)+len(d.Removed))
	out = append(out, d.Added...)
	out = append(out, d.Changed...)
	out = append(out, d.Removed...)
	slices.Sort(out)
	return out
}
