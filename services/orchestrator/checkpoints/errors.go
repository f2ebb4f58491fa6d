package checkpoints

import (
	"strings"

	"github.com/sandox/sandox/schemas"
)

// storeFull reports whether err is JetStream refusing a write because the
// checkpoint store (or the server's JetStream storage) is full.
func storeFull(err error) bool {
	// The server's codes for these refusals are not among the client's
	// named ones; its descriptions are stable.
	msg := err.Error()
	return strings.Contains(msg, "maximum bytes") || strings.Contains(msg, "insufficient resources") ||
		strings.Contains(msg, "resource limits exceeded") || strings.Contains(msg, "insufficient storage")
}

// storeError turns a full store into CodeResourceExhausted and leaves any
// other error as it is.
func storeError(err error, what string) error {
	if err == nil {
		return nil
	}
	if storeFull(err) {
		return schemas.Errorf(schemas.CodeResourceExhausted, "%s: the checkpoint store is full (delete checkpoints, or raise its limit): %w", what, err)
	}
	return err
}

// noSpace reports whether err is a file system out of room: the
// sandbox's disk, while a rollback stages its files.
func noSpace(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "no space left on device") || strings.Contains(err.Error(), "disk quota exceeded"))
}
