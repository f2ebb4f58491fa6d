package filesystem

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sandox/sandox/tools"
)

const (
	// maxLineShown bounds the text of one matching line in the output.
	maxLineShown = 300
	// maxLineScanned is the longest line search_files reads; a file with a
	// longer line is searched up to it.
	maxLineScanned = 4 << 20
)

type searchArgs struct {
	Pattern         string `json:"pattern" jsonschema:"minLength=1,description=Regular expression (Go RE2 syntax) to look for in each line. Taken literally when fixed_string is true."`
	Path            string `json:"path,omitempty" jsonschema:"description=File or directory to search. Default: the working directory."`
	Glob            string `json:"glob,omitempty" jsonschema:"description=Only search files whose path matches this glob as in find_files (*.py or src/**/*.ts)."`
	FixedString     bool   `json:"fixed_string,omitempty" jsonschema:"description=Treat pattern as plain text and not as a regular expression."`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"description=Ignore upper and lower case."`
	IncludeHidden   bool   `json:"include_hidden,omitempty" jsonschema:"description=Also search files and directories whose names start with a dot."`
	MaxMatches      int    `json:"max_matches,omitempty" jsonschema:"minimum=1,description=Most matching lines to return. Default: 200."`
}

// match is one matching line.
type match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// search is the state of one search_files call.
type search struct {
	d          cwd
	re         *regexp.Regexp
	limit      int
	matches    []match
	truncated  bool
	binary     int // files skipped as binary
	unreadable int // files and directories that could not be read
}

func (f *fsys) searchFiles() tools.Tool {
	const op = "search_files"
	return tools.New(Family, op,
		"Search file contents like grep: a regular expression or fixed string over one file or a directory tree. "+
			"Prints one `path:line: text` per matching line, at most max_matches; binary files are skipped.",
		func(ctx context.Context, a searchArgs) (tools.Result, error) {
			d := f.here()
			root, err := d.absOr(op, a.Path, ".")
			if err != nil {
				return tools.Result{}, err
			}
			s := &search{d: d, limit: a.MaxMatches}
			if s.limit <= 0 {
				s.limit = defaultMaxResults
			}
			if s.re, err = compileSearch(a.Pattern, a.FixedString, a.CaseInsensitive); err != nil {
				return tools.Result{}, d.invalid(op, root, "bad regular expression %q: %v (pass fixed_string: true to search for it literally)", a.Pattern, regexpProblem(err))
			}
			var g *glob
			if a.Glob != "" {
				cg, err := compileGlob(a.Glob)
				if err != nil {
					return tools.Result{}, d.invalid(op, root, "bad glob %q: %v", a.Glob, err)
				}
				g = &cg
			}
			info, err := os.Stat(root)
			if err != nil {
				return tools.Result{}, d.fail(op, root, err)
			}
			if !info.IsDir() {
				// A file named outright is searched whatever glob and hidden say.
				if err := s.file(ctx, root); err != nil && !errors.Is(err, errStop) {
					return tools.Result{}, d.fail(op, root, err)
				}
			} else {
				hidden := a.IncludeHidden || (g != nil && g.wantsHidden())
				n, err := walkTree(ctx, root, hidden, func(p, rel string, de fs.DirEntry) error {
					if !de.Type().IsRegular() || (g != nil && !g.match(rel)) {
						return nil
					}
					return s.file(ctx, p)
				})
				s.unreadable += n
				if err != nil {
					return tools.Result{}, d.fail(op, root, err)
				}
			}
			ret, _ := json.Marshal(struct {
				Matches   []match `json:"matches"`
				Truncated bool    `json:"truncated"`
			}{append([]match{}, s.matches...), s.truncated})
			return tools.Result{Stdout: s.text(a.Pattern, d.show(root)), Return: ret}, nil
		})
}

// compileSearch builds the regular expression a search uses.
func compileSearch(pattern string, fixed, fold bool) (*regexp.Regexp, error) {
	if fixed {
		pattern = regexp.QuoteMeta(pattern)
	}
	if fold {
		pattern = "(?i)" + pattern
	}
	return regexp.Compile(pattern)
}

// file searches the file at p. It returns errStop once the match limit is
// reached and ctx's error when ctx is done; a file that cannot be read is
// counted, not an error.
func (s *search) file(ctx context.Context, p string) error {
	file, err := os.Open(p)
	if err != nil {
		s.unreadable++
		return nil
	}
	defer file.Close()
	br := bufio.NewReaderSize(file, 64<<10)
	head, _ := br.Peek(sniffLen)
	if isBinary(head, len(head) == sniffLen) {
		s.binary++
		return nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineScanned)
	for line := 1; sc.Scan(); line++ {
		if line%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !s.re.Match(sc.Bytes()) {
			continue
		}
		if len(s.matches) == s.limit {
			s.truncated = true
			return errStop
		}
		s.matches = append(s.matches, match{Path: s.d.show(p), Line: line, Text: shorten(strings.TrimRight(sc.Text(), "\r"))})
	}
	if sc.Err() != nil {
		s.unreadable++
	}
	return nil
}

// text renders the matches with their notes.
func (s *search) text(pattern, root string) string {
	var b strings.Builder
	for _, m := range s.matches {
		fmt.Fprintf(&b, "%s:%d: %s\n", m.Path, m.Line, m.Text)
	}
	if len(s.matches) == 0 {
		fmt.Fprintf(&b, "no matches for %q in %s\n", pattern, root)
	}
	if s.truncated {
		fmt.Fprintf(&b, "(stopped after %s; narrow the search or raise max_matches)\n", plural(len(s.matches), "match"))
	}
	if s.binary > 0 {
		fmt.Fprintf(&b, "(skipped %s)\n", plural(s.binary, "binary file"))
	}
	if s.unreadable > 0 {
		fmt.Fprintf(&b, "(%d files or directories could not be read completely)\n", s.unreadable)
	}
	return b.String()
}

// shorten cuts a line longer than maxLineShown at a rune boundary.
func shorten(line string) string {
	if len(line) <= maxLineShown {
		return line
	}
	cut := maxLineShown
	for cut > 0 && !utf8.RuneStart(line[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … [line is %d bytes, cut]", line[:cut], len(line))
}

// regexpProblem returns what is wrong with a pattern, without the
// "error parsing regexp: " prefix the regexp package adds.
func regexpProblem(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}
