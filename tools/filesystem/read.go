package filesystem

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// sniffLen is how much of a file decides whether it is binary.
const sniffLen = 8 << 10

type readArgs struct {
	Path        string `json:"path" jsonschema:"description=File to read. Relative paths start at the working directory."`
	StartLine   int    `json:"start_line,omitempty" jsonschema:"minimum=1,description=First line to return (1-based). Default: the first line."`
	EndLine     int    `json:"end_line,omitempty" jsonschema:"minimum=1,description=Last line to return (1-based and inclusive). Default: the last line."`
	LineNumbers bool   `json:"line_numbers,omitempty" jsonschema:"description=Prefix each line with its line number and a tab."`
	Encoding    string `json:"encoding,omitempty" jsonschema:"enum=text,enum=base64,description=text (the default) returns the file as text; base64 returns the whole file's bytes base64-encoded and is the way to read a binary file."`
}

func (f *fsys) readFile() tools.Tool {
	const op = "read_file"
	return tools.New(Family, op,
		"Read a file. Returns the text of the whole file or of a line range (start_line/end_line), optionally with line numbers. "+
			"Binary files must be read with encoding \"base64\". Files over the read limit must be read by line range.",
		func(ctx context.Context, a readArgs) (tools.Result, error) {
			d := f.here()
			abs, err := d.abs(op, a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			ranged := a.StartLine > 0 || a.EndLine > 0
			if a.EndLine > 0 && a.EndLine < max(a.StartLine, 1) {
				return tools.Result{}, d.invalid(op, abs, "end_line %d is before start_line %d", a.EndLine, max(a.StartLine, 1))
			}
			if a.Encoding == "base64" && (ranged || a.LineNumbers) {
				return tools.Result{}, d.invalid(op, abs, "line ranges and line numbers apply to text; encoding \"base64\" reads the whole file")
			}
			file, info, err := d.openRegular(op, abs)
			if err != nil {
				return tools.Result{}, err
			}
			defer file.Close()
			if a.Encoding == "base64" {
				data, err := d.readBounded(op, abs, file, info, f.cfg.MaxReadBytes, "")
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Stdout: base64.StdEncoding.EncodeToString(data)}, nil
			}
			br := bufio.NewReaderSize(file, 64<<10)
			head, _ := br.Peek(sniffLen)
			if isBinary(head, len(head) == sniffLen) {
				return tools.Result{}, d.invalid(op, abs, "binary file (%s) cannot be read as text; read it with encoding \"base64\"", byteSize(info.Size()))
			}
			if !ranged && !a.LineNumbers {
				data, err := d.readBounded(op, abs, br, info, f.cfg.MaxReadBytes, "read a line range with start_line and end_line")
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Stdout: string(data)}, nil
			}
			out, err := d.readLines(ctx, op, abs, br, lineRange{a.StartLine, a.EndLine, a.LineNumbers}, f.cfg.MaxReadBytes)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.Result{Stdout: out}, nil
		})
}

// openRegular opens abs for reading after checking that it is a regular
// file, so that a named pipe cannot block the call.
func (d cwd) openRegular(op, abs string) (*os.File, os.FileInfo, error) {
	info, err := os.Stat(abs)
	if err != nil {
		return nil, nil, d.fail(op, abs, err)
	}
	if info.IsDir() {
		return nil, nil, d.isDirErr(op, abs)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, d.errAt(op, abs, fmt.Errorf("%w: not a regular file (%s)", schemas.CodeUnsupported, info.Mode().Type()), "")
	}
	file, err := os.Open(abs)
	if err != nil {
		return nil, nil, d.fail(op, abs, err)
	}
	return file, info, nil
}

// readBounded reads all of r, a file of the given info, failing with
// tools.ErrTooLarge beyond limit bytes. hint follows the error.
func (d cwd) readBounded(op, abs string, r io.Reader, info os.FileInfo, limit int64, hint string) ([]byte, error) {
	if info.Size() > limit {
		return nil, d.tooLargeErr(op, abs, info.Size(), limit, hint)
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, d.fail(op, abs, err)
	}
	if int64(len(data)) > limit {
		return nil, d.tooLargeErr(op, abs, int64(len(data)), limit, hint)
	}
	return data, nil
}

// lineRange selects lines of a file: start and end are 1-based and
// inclusive, zero meaning the first and the last line.
type lineRange struct {
	start, end int
	numbers    bool
}

// readLines returns the lines of r in rng, each prefixed with its number
// when asked. The result is bounded by limit bytes.
func (d cwd) readLines(ctx context.Context, op, abs string, r *bufio.Reader, rng lineRange, limit int64) (string, error) {
	start := max(rng.start, 1)
	var out bytes.Buffer
	line, atLineStart := 0, true
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			if atLineStart {
				line++
				if line%4096 == 0 && ctx.Err() != nil {
					return "", ctx.Err()
				}
				if rng.end > 0 && line > rng.end {
					break
				}
				if line >= start && rng.numbers {
					fmt.Fprintf(&out, "%6d\t", line)
				}
			}
			if line >= start {
				out.Write(chunk)
				if int64(out.Len()) > limit {
					return "", d.errAt(op, abs, fmt.Errorf("%w: lines %d to %d are over the %s limit", tools.ErrTooLarge, start, line, byteSize(limit)), "ask for fewer lines")
				}
			}
			atLineStart = chunk[len(chunk)-1] == '\n'
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", d.fail(op, abs, err)
		}
	}
	if start > line && !(line == 0 && start == 1) {
		return "", d.invalid(op, abs, "start_line %d is past the end of the file, which has %d lines", start, line)
	}
	return out.String(), nil
}

// isBinary reports whether head, the start of a file, looks binary: it
// holds a NUL byte or is not UTF-8. When truncated, a rune cut off at the
// end of head does not count.
func isBinary(head []byte, truncated bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && size == 1 {
			return !(truncated && !utf8.FullRune(head[i:]))
		}
		i += size
	}
	return false
}
