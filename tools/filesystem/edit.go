package filesystem

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type insertArgs struct {
	Path    string `json:"path" jsonschema:"description=File to edit."`
	Line    int    `json:"line" jsonschema:"minimum=1,description=Line number (1-based) the text is inserted before. One more than the file's line count appends at the end."`
	Content string `json:"content" jsonschema:"description=Lines to insert. A final newline is added if missing."`
}

func (f *fsys) insertLines() tools.Tool {
	const op = "insert_lines"
	return tools.New(Family, op,
		"Insert lines of text into a file before a given line number (1-based); use the line count plus one to add at the end.",
		func(_ context.Context, a insertArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			data, err := f.loadText(d, op, abs)
			if err != nil {
				return tools.Result{}, err
			}
			n := countLines(data)
			if a.Line > n+1 {
				return tools.Result{}, d.invalid(op, abs, "line %d is past the end: the file has %d lines; use line %d to add at the end", a.Line, n, n+1)
			}
			text := a.Content
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			off := lineOffset(data, a.Line)
			if off == len(data) && off > 0 && data[off-1] != '\n' {
				text = "\n" + text // the last line had no newline to end it
			}
			out := make([]byte, 0, len(data)+len(text))
			out = append(append(append(out, data[:off]...), text...), data[off:]...)
			if _, err := replaceFile(abs, out); err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			added := strings.Count(a.Content, "\n")
			if a.Content != "" && !strings.HasSuffix(a.Content, "\n") {
				added++
			}
			return tools.Result{Stdout: fmt.Sprintf("inserted %s before line %d of %s; the file now has %s",
				plural(added, "line"), a.Line, d.show(abs), plural(countLines(out), "line"))}, nil
		})
}

type replaceArgs struct {
	Path      string `json:"path" jsonschema:"description=File to edit."`
	OldString string `json:"old_string" jsonschema:"minLength=1,description=Exact text to find (whitespace and newlines included). It must occur exactly once unless all is true."`
	NewString string `json:"new_string" jsonschema:"description=Text to put in its place. Empty deletes old_string."`
	All       bool   `json:"all,omitempty" jsonschema:"description=Replace every occurrence instead of requiring exactly one."`
}

func (f *fsys) replaceInFile() tools.Tool {
	const op = "replace_in_file"
	return tools.New(Family, op,
		"Replace an exact string in a file. The string must occur exactly once (include surrounding lines to make it unique) unless all is true; "+
			"the error says how many times it was found.",
		func(_ context.Context, a replaceArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			data, err := f.loadText(d, op, abs)
			if err != nil {
				return tools.Result{}, err
			}
			old := []byte(a.OldString)
			lines := matchLines(data, old)
			switch {
			case len(lines) == 0:
				return tools.Result{}, d.errAt(op, abs, fmt.Errorf("%w: old_string occurs 0 times, want exactly 1", schemas.CodeInvalidArgs),
					"copy it exactly from read_file output, with the same whitespace")
			case len(lines) > 1 && !a.All:
				return tools.Result{}, d.errAt(op, abs, fmt.Errorf("%w: old_string occurs %d times (%s), want exactly 1", schemas.CodeInvalidArgs, len(lines), lineList(lines)),
					"add surrounding lines to old_string to make it unique, or pass all: true")
			}
			out := bytes.ReplaceAll(data, old, []byte(a.NewString))
			if _, err := replaceFile(abs, out); err != nil {
				return tools.Result{}, d.fail(op, abs, err)
			}
			return tools.Result{Stdout: fmt.Sprintf("replaced %s in %s (%s)", plural(len(lines), "occurrence"), d.show(abs), lineList(lines))}, nil
		})
}

// loadText reads a text file whole for an edit, bounded by the read limit.
func (f *fsys) loadText(d cwd, op, abs string) ([]byte, error) {
	file, info, err := d.openRegular(op, abs)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	data, err := d.readBounded(op, abs, file, info, f.cfg.MaxReadBytes, "edit it with a terminal command instead")
	if err != nil {
		return nil, err
	}
	head := data[:min(len(data), sniffLen)]
	if isBinary(head, len(data) > sniffLen) {
		return nil, d.invalid(op, abs, "binary file (%s) cannot be edited as text; use upload_file to replace it", byteSize(info.Size()))
	}
	return data, nil
}

// countLines counts the lines of data; a last line without a newline
// counts.
func countLines(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// lineOffset returns the byte offset where 1-based line starts, or
// len(data) for the line after the last.
func lineOffset(data []byte, line int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return len(data)
		}
		off += i + 1
	}
	return off
}

// matchLines returns the 1-based line on which each non-overlapping
// occurrence of old in data starts.
func matchLines(data, old []byte) []int {
	var lines []int
	line, scanned := 1, 0
	for off := 0; ; {
		i := bytes.Index(data[off:], old)
		if i < 0 {
			return lines
		}
		line += bytes.Count(data[scanned:off+i], []byte{'\n'})
		scanned = off + i
		lines = append(lines, line)
		off += i + len(old)
	}
}

// lineList formats line numbers, "line 4" or "lines 4, 9, 20", naming the
// first ten.
func lineList(lines []int) string {
	const shown = 10
	var b strings.Builder
	if len(lines) == 1 {
		b.WriteString("line ")
	} else {
		b.WriteString("lines ")
	}
	for i, l := range lines[:min(len(lines), shown)] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, l)
	}
	if len(lines) > shown {
		fmt.Fprintf(&b, " and %d more", len(lines)-shown)
	}
	return b.String()
}
