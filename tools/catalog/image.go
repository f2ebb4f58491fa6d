package catalog

import (
	"slices"
	"sort"
)

// ImageNeeds is what a family adds to the default sandbox image. The
// orchestrator puts the needs of the chosen families into the generated
// Dockerfile, so a sandbox image holds what its families need and nothing
// more.
type ImageNeeds struct {
	// Apt are Debian packages installed with apt-get (from the machine's
	// own mirror, as the base image's sources name it).
	Apt []string
	// Files are written into the image. A family that ships a file embeds
	// it in this package (go:embed), so that reading the catalog links no
	// family's code.
	Files []ImageFile
}

// Empty reports whether the family needs nothing beyond the default image.
func (n ImageNeeds) Empty() bool { return len(n.Apt) == 0 && len(n.Files) == 0 }

// ImageFile is a file a family puts into the sandbox image.
type ImageFile struct {
	// Path is absolute, in the image.
	Path    string
	Content []byte
	// Mode is the file's permission bits; 0644 when zero.
	Mode uint32
}

// Needs returns what the families need in their image together: each apt
// package once, sorted, and every file (a path given twice keeps the last).
func (l List) Needs() ImageNeeds {
	var n ImageNeeds
	files := map[string]ImageFile{}
	for _, f := range l {
		n.Apt = append(n.Apt, f.Image.Apt...)
		for _, file := range f.Image.Files {
			files[file.Path] = file
		}
	}
	slices.Sort(n.Apt)
	n.Apt = slices.Compact(n.Apt)
	for _, f := range files {
		n.Files = append(n.Files, f)
	}
	sort.Slice(n.Files, func(i, j int) bool { return n.Files[i].Path < n.Files[j].Path })
	return n
}
