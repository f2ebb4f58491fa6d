package build

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// progressf writes one line of progress.
func (b *Builder) progressf(format string, args ...any) {
	fmt.Fprintf(b.cfg.Progress, format, args...)
}

// syncWriter serialises writes to w, so that builds running at once do not
// interleave inside a line.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// prefixWriter writes each complete line it is given to w with a prefix,
// keeping a partial line until its end arrives. It is not safe for
// concurrent use; each build has its own.
type prefixWriter struct {
	w      io.Writer
	prefix []byte
	buf    []byte
}

func newPrefixWriter(w io.Writer, prefix string) *prefixWriter {
	if pw, ok := w.(*prefixWriter); ok {
		// A builder made from another's: one prefix, the innermost.
		w = pw.w
	}
	return &prefixWriter{w: w, prefix: []byte(prefix)}
}

func (p *prefixWriter) Write(data []byte) (int, error) {
	p.buf = append(p.buf, data...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(data), nil
		}
		line := append(append([]byte{}, p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(data), err
		}
	}
}
