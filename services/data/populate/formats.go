package populate

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/sandox/sandox/schemas"
)

// The formats.
const (
	FormatJSONL         = "jsonl"
	FormatJSON          = "json"
	FormatCSV           = "csv"
	FormatMarkdown      = "markdown"
	FormatText          = "text"
	FormatNodes         = "nodes"
	FormatRelationships = "relationships"
	FormatCypher        = "cypher"
)

// formatOf is the source's format: as configured, else by extension.
func formatOf(configured, name string) (string, error) {
	if configured != "" {
		return configured, nil
	}
	switch strings.ToLower(path.Ext(strings.SplitN(name, "?", 2)[0])) {
	case ".jsonl", ".ndjson":
		return FormatJSONL, nil
	case ".json":
		return FormatJSON, nil
	case ".csv":
		return FormatCSV, nil
	case ".md", ".markdown":
		return FormatMarkdown, nil
	case ".txt", ".text":
		return FormatText, nil
	case ".cypher", ".cql":
		return FormatCypher, nil
	}
	return "", fmt.Errorf("unknown format of %s: set format (jsonl, json, csv, markdown, text, nodes, relationships, cypher)", name)
}

// row is one record of a file and the line it starts on.
type row struct {
	Line int
	Doc  schemas.VectorDocument
	Err  error // a bad row: skipped, reported
}

// wireDoc is a document as files spell it.
type wireDoc struct {
	ID       any            `json:"id"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata"`
	Vector   []float32      `json:"vector"`
}

func (w wireDoc) doc() (schemas.VectorDocument, error) {
	var id string
	switch x := w.ID.(type) {
	case string:
		id = x
	case float64:
		id = strconv.FormatFloat(x, 'f', -1, 64)
	}
	if id == "" {
		return schemas.VectorDocument{}, errors.New("no id")
	}
	if strings.TrimSpace(w.Text) == "" {
		return schemas.VectorDocument{}, errors.New("no text")
	}
	return schemas.VectorDocument{ID: id, Text: w.Text, Metadata: w.Metadata, Vector: w.Vector}, nil
}

// readJSONL yields one document per non-empty line.
func readJSONL(r io.Reader, yield func(row) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var w wireDoc
		rw := row{Line: line}
		if err := json.Unmarshal(text, &w); err != nil {
			rw.Err = fmt.Errorf("invalid JSON: %w", err)
		} else {
			rw.Doc, rw.Err = w.doc()
		}
		if err := yield(rw); err != nil {
			return err
		}
	}
	return sc.Err()
}

// readJSON yields the documents of a JSON array (or of {"documents": [...]})
// with the line each starts on.
func readJSON(r io.Reader, yield func(row) error) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	body := bytes.TrimSpace(data)
	base := bytes.Index(data, body[:min(1, len(body))])
	if bytes.HasPrefix(body, []byte("{")) {
		var wrapped struct {
			Documents json.RawMessage `json:"documents"`
		}
		if err := json.Unmarshal(body, &wrapped); err != nil || wrapped.Documents == nil {
			return yield(row{Line: 1, Err: errors.New("want an array of documents, or an object with documents")})
		}
		base = bytes.Index(data, wrapped.Documents)
		body = wrapped.Documents
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return yield(row{Line: 1, Err: errors.New("want an array of documents")})
	}
	lineAt := func(off int64) int {
		o := base + int(off)
		for o < len(data) && unicode.IsSpace(rune(data[o])) || o < len(data) && data[o] == ',' {
			o++
		}
		return 1 + bytes.Count(data[:min(o, len(data))], []byte("\n"))
	}
	for dec.More() {
		line := lineAt(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return yield(row{Line: line, Err: fmt.Errorf("invalid JSON: %w", err)})
		}
		var w wireDoc
		rw := row{Line: line}
		if err := json.Unmarshal(raw, &w); err != nil {
			rw.Err = fmt.Errorf("invalid document: %w", err)
		} else {
			rw.Doc, rw.Err = w.doc()
		}
		if err := yield(rw); err != nil {
			return err
		}
	}
	return nil
}

// csvRows yields a CSV file's rows as header → value maps, with lines.
func csvRows(r io.Reader, yield func(line int, rec map[string]string, err error) error) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return yield(1, nil, fmt.Errorf("no header: %w", err))
	}
	for i := range header {
		header[i] = strings.TrimSpace(strings.TrimPrefix(header[i], "\ufeff"))
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		line, _ := cr.FieldPos(0)
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if err := yield(pe.StartLine, nil, fmt.Errorf("invalid CSV: %w", pe.Err)); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if len(rec) != len(header) {
			if err := yield(line, nil, fmt.Errorf("%d fields, the header has %d", len(rec), len(header))); err != nil {
				return err
			}
			continue
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			m[h] = rec[i]
		}
		if err := yield(line, m, nil); err != nil {
			return err
		}
	}
}

// typed reads a CSV value: an integer, a number, a boolean, or the string.
func typed(s string) any {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f
	}
	if b, err := strconv.ParseBool(s); err == nil && (s == "true" || s == "false") {
		return b
	}
	return s
}

// readCSV yields a document per row: columns id and text, an optional
// vector (a JSON array), every other column a metadata field.
func readCSV(r io.Reader, yield func(row) error) error {
	return csvRows(r, func(line int, rec map[string]string, err error) error {
		rw := row{Line: line, Err: err}
		if err == nil {
			w := wireDoc{ID: rec["id"], Text: rec["text"], Metadata: map[string]any{}}
			for k, v := range rec {
				switch k {
				case "id", "text":
				case "vector":
					if v != "" {
						if err := json.Unmarshal([]byte(v), &w.Vector); err != nil {
							rw.Err = fmt.Errorf("vector: %w", err)
						}
					}
				default:
					w.Metadata[k] = typed(v)
				}
			}
			if rw.Err == nil {
				rw.Doc, rw.Err = w.doc()
			}
		}
		return yield(rw)
	})
}

// readChunks yields the chunks of a Markdown or text file as documents
// <name>#<n>, with metadata source, chunk and (Markdown) heading.
func readChunks(r io.Reader, name string, markdown bool, c Chunking, yield func(row) error) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for i, ch := range chunk(string(data), markdown, c.orDefault()) {
		meta := map[string]any{"source": name, "chunk": int64(i)}
		if ch.heading != "" {
			meta["heading"] = ch.heading
		}
		if err := yield(row{Line: ch.line, Doc: schemas.VectorDocument{ID: fmt.Sprintf("%s#%d", name, i), Text: ch.text, Metadata: meta}}); err != nil {
			return err
		}
	}
	return nil
}

type piece struct {
	text    string
	line    int
	heading string
}

// chunk splits text into chunks of at most c.Size characters: it gathers
// whole paragraphs (split at blank lines and, in Markdown, before every
// heading) while they fit, and in Markdown never across a heading; a paragraph longer than Size is cut at the last
// space before Size, and the next piece repeats the last c.Overlap
// characters (from a word start). Each chunk keeps the line it starts on
// and, in Markdown, the heading above it.
func chunk(text string, markdown bool, c Chunking) []piece {
	type para struct {
		text    string
		line    int
		heading string
	}
	var paras []para
	var cur []string
	start, heading := 1, ""
	flush := func(next int) {
		if t := strings.TrimSpace(strings.Join(cur, "\n")); t != "" {
			paras = append(paras, para{t, start, heading})
		}
		cur, start = nil, next
	}
	for i, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		line := i + 1
		isHeading := markdown && strings.HasPrefix(strings.TrimSpace(l), "#")
		if strings.TrimSpace(l) == "" || isHeading {
			flush(line + 1)
			if isHeading {
				heading = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
				start = line
				cur = []string{l}
			}
			continue
		}
		if len(cur) == 0 {
			start = line
		}
		cur = append(cur, l)
	}
	flush(0)

	var out []piece
	var acc []string
	accLine, accHeading := 0, ""
	emit := func() {
		if len(acc) > 0 {
			out = append(out, piece{strings.Join(acc, "\n\n"), accLine, accHeading})
		}
		acc = nil
	}
	size := func() int {
		n := 0
		for _, a := range acc {
			n += len(a) + 2
		}
		return n
	}
	for _, p := range paras {
		if len(acc) > 0 && (size()+len(p.text) > c.Size || markdown && p.heading != accHeading) {
			emit()
		}
		if len(acc) == 0 {
			accLine, accHeading = p.line, p.heading
		}
		if len(p.text) <= c.Size {
			acc = append(acc, p.text)
			continue
		}
		// A long paragraph: windows with overlap.
		emit()
		rest := p.text
		for len(rest) > 0 {
			if len(rest) <= c.Size {
				out = append(out, piece{rest, p.line, p.heading})
				break
			}
			cut := strings.LastIndexByte(rest[:c.Size], ' ')
			if cut <= c.Overlap {
				cut = c.Size
			}
			out = append(out, piece{strings.TrimSpace(rest[:cut]), p.line, p.heading})
			next := cut - c.Overlap
			if sp := strings.IndexByte(rest[next:cut], ' '); sp >= 0 {
				next += sp + 1
			}
			rest = strings.TrimSpace(rest[next:])
		}
	}
	emit()
	return out
}
