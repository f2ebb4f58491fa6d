package disks

import "errors"

// Errors returned by a Pool, wrapped with the name, path or device they
// concern; match them with errors.Is.
var (
	// ErrInvalid marks a name or size that a Pool does not accept.
	ErrInvalid = errors.New("invalid disk request")
	// ErrNoSpace marks an image that does not fit in the free space of
	// the Pool's directory.
	ErrNoSpace = errors.New("not enough free space for disk image")
	// ErrBusy marks a loop device that cannot be detached because it is
	// still in use, usually mounted by the Docker daemon.
	ErrBusy = errors.New("loop device busy")
	// ErrUnsupported marks a host on which disk limits cannot be enforced.
	ErrUnsupported = errors.New("disk limits unsupported on this host")
)
