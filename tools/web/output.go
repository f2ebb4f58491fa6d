package web

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/sandox/sandox/tools"
)

// previewBytes is how much of an oversize document the observation shows.
const previewBytes = 2 << 10

// deliver returns text as the observation when it fits the observation
// limit. Otherwise it writes text to a file under the workspace's web/
// directory and the observation says where, with the first part of it.
func (w *Web) deliver(kind, text string, pages int) (tools.Result, error) {
	if len(text) <= w.cfg.MaxObservationBytes {
		return tools.Result{Stdout: text}, nil
	}
	path, err := w.saveFile(kind, ".md", []byte(text))
	if err != nil {
		return tools.Result{}, err
	}
	head := text[:min(previewBytes, w.cfg.MaxObservationBytes/2)]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	return tools.Result{Stdout: fmt.Sprintf(
		"The markdown (%d pages, %d bytes) is over the observation limit of %d bytes and was written to %s\n"+
			"Read it with filesystem_tools.read_file. Its first %d bytes:\n\n%s",
		pages, len(text), w.cfg.MaxObservationBytes, path, len(head), head)}, nil
}

// saveFile writes data to a new file named for kind and the time under the
// workspace's web/ directory and returns its absolute path.
func (w *Web) saveFile(kind, ext string, data []byte) (string, error) {
	dir := filepath.Join(w.cfg.Workspace, "web")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("save %s: %w", kind, err)
	}
	name := fmt.Sprintf("%s-%s%s", kind, time.Now().UTC().Format("20060102-150405.000000"), ext)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("save %s: %w", kind, err)
	}
	return path, nil
}
