//go:build unix

package filesystem

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives file the owner and group of the file info describes, so
// that a file rewritten by a root executor stays writable by the sandbox
// user who owned it. It is best effort: an unprivileged process cannot
// change owners, and then the file keeps the writer's.
func keepOwner(file *os.File, info fs.FileInfo) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	uid, gid := int(st.Uid), int(st.Gid)
	if uid == os.Geteuid() && gid == os.Getegid() {
		return
	}
	_ = file.Chown(uid, gid)
}
