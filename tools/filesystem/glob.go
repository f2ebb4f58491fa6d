package filesystem

import (
	"path"
	"strings"
)

// glob is a compiled find_files pattern. A pattern without a slash matches
// the base name at any depth; one with a slash matches the whole path
// relative to the search root, segment by segment, where a "**" segment
// stands for any number of directories, none included. Within a segment,
// path.Match syntax applies.
type glob struct {
	segs []string
	base bool // match the base name only
}

// compileGlob checks and compiles pattern. The error is path.ErrBadPattern.
func compileGlob(pattern string) (glob, error) {
	pattern = strings.TrimPrefix(pattern, "/")
	for strings.HasPrefix(pattern, "./") {
		pattern = strings.TrimPrefix(pattern, "./")
	}
	var segs []string
	for s := range strings.SplitSeq(pattern, "/") {
		if s == "" || s == "." {
			continue
		}
		if _, err := path.Match(s, ""); err != nil {
			return glob{}, err
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return glob{}, path.ErrBadPattern
	}
	return glob{segs: segs, base: !strings.Contains(pattern, "/")}, nil
}

// match reports whether rel, a slash-separated path below the root,
// matches.
func (g glob) match(rel string) bool {
	if g.base {
		ok, _ := path.Match(g.segs[0], path.Base(rel))
		return ok
	}
	return matchSegs(g.segs, strings.Split(rel, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// prefix returns the leading segments of a path pattern that hold no
// wildcard, the directory below the root a walk can start from.
func (g glob) prefix() string {
	if g.base {
		return ""
	}
	var lit []string
	for _, s := range g.segs[:len(g.segs)-1] {
		if strings.ContainsAny(s, `*?[\`) {
			break
		}
		lit = append(lit, s)
	}
	return strings.Join(lit, "/")
}

// wantsHidden reports whether the pattern names a dot-file or
// dot-directory itself, such as ".env" or ".github/**".
func (g glob) wantsHidden() bool {
	for _, s := range g.segs {
		if strings.HasPrefix(s, ".") {
			return true
		}
	}
	return false
}
