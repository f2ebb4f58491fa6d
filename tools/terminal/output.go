package terminal

import (
	"bytes"
	"fmt"
	"strings"
)

// outputBuffer keeps the most recent output of a session. Every byte has an
// absolute offset, counted from the session's start, so that an offset an
// agent was given stays valid while output goes on. It keeps at least limit
// bytes (at most a quarter more, so that dropping old output is a rare
// copy). It is not safe for concurrent use; session.mu guards it.
type outputBuffer struct {
	data  []byte
	base  int64 // offset of data[0]
	limit int
}

func (b *outputBuffer) write(p []byte) {
	b.data = append(b.data, p...)
	if over := len(b.data) - b.limit; over > b.limit/4 {
		n := copy(b.data, b.data[over:])
		b.data = b.data[:n]
		b.base += int64(over)
	}
}

// start is the offset of the oldest byte kept.
func (b *outputBuffer) start() int64 { return b.base }

// end is the offset just past the newest byte.
func (b *outputBuffer) end() int64 { return b.base + int64(len(b.data)) }

// bytes returns the kept bytes in [from, to).
func (b *outputBuffer) bytes(from, to int64) []byte {
	from, to = max(from, b.base), min(to, b.end())
	if from >= to {
		return nil
	}
	return b.data[from-b.base : to-b.base]
}

// view is output made ready for an observation.
type view struct {
	text  string
	notes []string
	// next is the offset just past what text shows; the next read starts
	// there.
	next int64
}

// viewOptions says how to show a range of output.
type viewOptions struct {
	max  int  // bytes to show at most
	raw  bool // keep escape sequences
	more bool // output may go on past the range
}

func (o viewOptions) text(b []byte, more bool) (string, int) {
	if o.raw {
		return rawText(b, more)
	}
	return plainText(b, more)
}

// summary shows the output in [from, to). Past opt.max bytes it keeps the
// first and the last half, cut at line ends, and puts a marker line where
// the rest was left out, with a note saying how to read it.
func (b *outputBuffer) summary(from, to int64, opt viewOptions) view {
	var v view
	if from < b.start() {
		v.notes = append(v.notes, fmt.Sprintf("%d bytes of older output were dropped: a session keeps its last %d bytes", b.start()-from, b.limit))
		from = b.start()
	}
	to = max(from, min(to, b.end()))
	if to-from <= int64(opt.max) {
		text, used := opt.text(b.bytes(from, to), opt.more)
		v.text, v.next = text, from+int64(used)
		return v
	}
	half := int64(opt.max / 2)
	headEnd := lineCut(b.bytes(from, from+half), from, true)
	tailStart := lineCut(b.bytes(to-half, to), to-half, false)
	head, _ := opt.text(b.bytes(from, headEnd), false)
	tail, used := opt.text(b.bytes(tailStart, to), opt.more)
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	gap := tailStart - headEnd
	v.text = fmt.Sprintf("%s[... %d bytes truncated; read the rest with terminal_tools.read_output offset=%d ...]\n%s", head, gap, headEnd, tail)
	v.notes = append(v.notes, fmt.Sprintf("output truncated: %d bytes from offset %d to %d are not shown; read them with terminal_tools.read_output offset=%d", gap, headEnd, tailStart, headEnd))
	v.next = tailStart + int64(used)
	return v
}

// page shows up to opt.max bytes from offset from on, cut at a line end,
// with a note giving the offset to read next when there is more.
func (b *outputBuffer) page(from int64, opt viewOptions) view {
	var v view
	if from < b.start() {
		v.notes = append(v.notes, fmt.Sprintf("bytes before offset %d were dropped: a session keeps its last %d bytes", b.start(), b.limit))
		from = b.start()
	}
	if from > b.end() {
		from = b.end()
	}
	to := min(b.end(), from+int64(opt.max))
	more := opt.more
	if to < b.end() {
		to = lineCut(b.bytes(from, to), from, true)
		more = false
	}
	text, used := opt.text(b.bytes(from, to), more)
	v.text, v.next = text, from+int64(used)
	if rest := b.end() - v.next; rest > 0 {
		v.notes = append(v.notes, fmt.Sprintf("%d more bytes: read them with terminal_tools.read_output offset=%d", rest, v.next))
	}
	return v
}

// lineCut moves a cut in chunk (which starts at offset base) to a line
// boundary: with atEnd, just after the last newline of the chunk's second
// half; otherwise just after the first newline of the chunk's first half.
// It keeps the chunk's own end or start when there is no such newline.
func lineCut(chunk []byte, base int64, atEnd bool) int64 {
	n := len(chunk)
	if atEnd {
		if i := bytes.LastIndexByte(chunk, '\n'); i >= n/2 {
			return base + int64(i) + 1
		}
		return base + int64(n)
	}
	if i := bytes.IndexByte(chunk, '\n'); i >= 0 && i < n/2 {
		return base + int64(i) + 1
	}
	return base
}
