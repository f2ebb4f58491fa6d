package filesystem

import (
	"os"

	"github.com/sandox/sandox/tools"
	"github.com/sandox/sandox/tools/catalog"
)

// Family is the family's name (catalog.Filesystem), the part before the dot in
// "filesystem_tools.read_file".
const Family = catalog.Filesystem

// DefaultMaxReadBytes is the read limit when Config.MaxReadBytes is zero.
const DefaultMaxReadBytes = 10 << 20

// Config configures the filesystem tools.
type Config struct {
	// Dir returns the directory relative paths resolve against. It is called
	// once per tool call, so it can follow a shell's working directory. Nil,
	// or an empty result, means the process's working directory.
	Dir func() string
	// MaxReadBytes bounds the bytes read_file and download_file return and
	// the size of a file the edit tools load into memory. Zero or less means
	// DefaultMaxReadBytes.
	MaxReadBytes int64
}

// Tools returns the tools of the module, built on cfg. The tools are safe
// for concurrent use, although concurrent edits of one file race as they
// would in a shell.
func Tools(cfg Config) []tools.Tool {
	if cfg.MaxReadBytes <= 0 {
		cfg.MaxReadBytes = DefaultMaxReadBytes
	}
	f := &fsys{cfg: cfg}
	return []tools.Tool{
		f.readFile(),
		f.createFile(),
		f.writeFile(),
		f.appendFile(),
		f.insertLines(),
		f.replaceInFile(),
		f.deletePath(),
		f.movePath(),
		f.copyPath(),
		f.makeDirectory(),
		f.listDirectory(),
		f.statPath(),
		f.findFiles(),
		f.searchFiles(),
		f.uploadFile(),
		f.downloadFile(),
	}
}

// fsys holds the configuration the tool bodies share.
type fsys struct {
	cfg Config
}

// here returns the working directory of one call.
func (f *fsys) here() cwd {
	if f.cfg.Dir != nil {
		if d := f.cfg.Dir(); d != "" {
			return cwd(d)
		}
	}
	d, err := os.Getwd()
	if err != nil {
		return cwd("/")
	}
	return cwd(d)
}
