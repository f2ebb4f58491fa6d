// Package filesystem is the built-in tool module "filesystem_tools": read,
// write, edit, move, copy, delete, list, find and search files inside the
// sandbox, and move bytes in and out of it as base64.
//
// Relative paths resolve against the directory Config.Dir returns (the
// terminal session's working directory); absolute paths are used as given,
// since the sandbox container is the isolation boundary. Paths in output are
// shown relative to that directory when they lie below it, so that a model
// can pass them straight back as arguments.
//
// Errors name the tool, the path and the cause, and wrap the tools error
// classes: tools.ErrNotFound for a missing path, schemas.CodeAccessDenied for a
// permission or read-only failure, tools.ErrTooLarge for a file over the read
// limit, schemas.CodeInvalidArgs for arguments that cannot work (a bad pattern,
// a line past the end, a binary file read as text). Filesystem conflicts
// wrap the matching errno (syscall.EISDIR, syscall.ENOTDIR,
// syscall.ENOTEMPTY, syscall.ENOSPC) or fs.ErrExist.
package filesystem
