//go:build unix

package filesystem

import (
	"syscall"
	"testing"

	"github.com/sandox/sandox/schemas"
)

func TestReadFileNamedPipe(t *testing.T) {
	fx := newFixture(t, nil, 0)
	if err := syscall.Mkfifo(fx.path("pipe"), 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	// Opening a pipe for reading would block until a writer came; the tool
	// must refuse it from its mode.
	_, err := fx.call(t, "read_file", args{"path": "pipe"})
	checkErr(t, err, schemas.CodeUnsupported, `"pipe"`, "not a regular file")
}
