package populate

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// VectorSink takes documents of a namespace (data.Vectors).
type VectorSink interface {
	Upsert(ctx context.Context, ns string, docs []schemas.VectorDocument) (schemas.VectorResult, error)
}

// GraphSink takes nodes, relationships and Cypher of a namespace
// (data.Graph).
type GraphSink interface {
	AddNode(ctx context.Context, ns string, a schemas.GraphNodeArgs) (schemas.GraphResult, error)
	AddRelationship(ctx context.Context, ns string, a schemas.GraphRelationshipArgs) (schemas.GraphResult, error)
	Query(ctx context.Context, ns string, a schemas.GraphQueryArgs, write bool) (schemas.GraphResult, error)
}

// Runner loads a population config into a group's databases.
type Runner struct {
	GroupID string
	Vectors VectorSink // nil when the group has no Qdrant
	Graph   GraphSink  // nil when the group has no Neo4j
	// Dir is where relative local paths resolve.
	Dir string
	// Dial, when set, makes every connection of http(s) and s3 sources
	// (no proxy is used then, so it sees the real destination); the
	// default transports when nil.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Allow, when set, says whether a URL source's host may be fetched;
	// a source whose host it refuses is reported and skipped. Nil allows
	// every host.
	Allow func(host string) bool
	// Progress gets an event after every batch and at the end of every
	// source; nil discards them.
	Progress func(schemas.PopulationEvent)
	// BatchSize is how many documents go in one upsert (64 when zero).
	BatchSize int
	Log       *slog.Logger
}

// Run loads every source of cfg, databases and namespaces in name order
// and sources in the order given. A bad row, or a source that cannot be
// read, is reported in its event and skipped; what loaded stays. Only a
// failing database stops the run.
func (r *Runner) Run(ctx context.Context, cfg Config) ([]schemas.PopulationEvent, error) {
	if r.BatchSize <= 0 {
		r.BatchSize = 64
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	f := newFetcher(r.Dir, r.Dial, r.Allow, cfg.S3)
	var out []schemas.PopulationEvent
	for _, db := range sortedKeys(cfg.Databases) {
		spaces := cfg.Databases[db]
		for _, ns := range sortedKeys(spaces) {
			for _, src := range spaces[ns] {
				ev := schemas.PopulationEvent{GroupID: r.GroupID, Database: db, Namespace: ns, Source: src.Source}
				err := r.source(ctx, f, cfg, src, &ev)
				ev.Done = true
				r.emit(ev)
				out = append(out, ev)
				if err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (r *Runner) emit(ev schemas.PopulationEvent) {
	if r.Progress != nil {
		r.Progress(ev)
	}
}

// source loads one source; its error is a database failure (the run
// stops), while unreadable files and bad rows go into ev.Bad.
func (r *Runner) source(ctx context.Context, f *fetcher, cfg Config, src Source, ev *schemas.PopulationEvent) error {
	if ev.Database == schemas.DatabaseQdrant && r.Vectors == nil || ev.Database == schemas.DatabaseNeo4j && r.Graph == nil {
		return schemas.Errorf(schemas.CodeBadRequest, "population config names %s, which the group does not have", ev.Database)
	}
	files, err := f.files(ctx, src.Source)
	if err != nil {
		ev.Bad = append(ev.Bad, schemas.RowError{Source: src.Source, Reason: err.Error()})
		return nil
	}
	chunking := cfg.Chunk
	if src.Chunk != nil {
		chunking = *src.Chunk
	}
	for _, fl := range files {
		format, err := formatOf(src.Format, fl.Name)
		if err != nil {
			ev.Bad = append(ev.Bad, schemas.RowError{Source: fl.Name, Reason: err.Error()})
			continue
		}
		rc, err := fl.Open(ctx)
		if err != nil {
			ev.Bad = append(ev.Bad, schemas.RowError{Source: fl.Name, Reason: err.Error()})
			continue
		}
		if ev.Database == schemas.DatabaseQdrant {
			err = r.vectorFile(ctx, rc, fl.Name, format, chunking, ev)
		} else {
			err = r.graphFile(ctx, rc, fl.Name, format, ev)
		}
		rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// vectorFile reads documents and upserts them in batches.
func (r *Runner) vectorFile(ctx context.Context, rd io.Reader, name, format string, c Chunking, ev *schemas.PopulationEvent) error {
	var batch []schemas.VectorDocument
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if _, err := r.Vectors.Upsert(ctx, ev.Namespace, batch); err != nil {
			return fmt.Errorf("upsert %d documents of %s into %s: %w", len(batch), name, ev.Namespace, err)
		}
		ev.Loaded += len(batch)
		batch = batch[:0]
		r.emit(*ev)
		return nil
	}
	yield := func(rw row) error {
		if rw.Err != nil {
			ev.Bad = append(ev.Bad, schemas.RowError{Source: name, Line: rw.Line, Reason: rw.Err.Error()})
			return nil
		}
		batch = append(batch, rw.Doc)
		if len(batch) >= r.BatchSize {
			return flush()
		}
		return nil
	}
	var err error
	switch format {
	case FormatJSONL:
		err = readJSONL(rd, yield)
	case FormatJSON:
		err = readJSON(rd, yield)
	case FormatCSV:
		err = readCSV(rd, yield)
	case FormatMarkdown, FormatText:
		err = readChunks(rd, name, format == FormatMarkdown, c, yield)
	default:
		ev.Bad = append(ev.Bad, schemas.RowError{Source: name, Reason: fmt.Sprintf("format %s is not for qdrant", format)})
		return nil
	}
	if err != nil {
		if ferr := flush(); ferr != nil {
			return ferr
		}
		ev.Bad = append(ev.Bad, schemas.RowError{Source: name, Reason: err.Error()})
		return nil
	}
	return flush()
}

// graphFile loads node CSVs (id, labels separated by ';', properties),
// relationship CSVs (from, to, type, properties) and Cypher scripts
// (statements ending in ';' at the end of a line, run confined to the
// namespace, each in its own write transaction).
func (r *Runner) graphFile(ctx context.Context, rd io.Reader, name, format string, ev *schemas.PopulationEvent) error {
	bad := func(line int, err error) {
		ev.Bad = append(ev.Bad, schemas.RowError{Source: name, Line: line, Reason: err.Error()})
	}
	loaded := func() {
		ev.Loaded++
		if ev.Loaded%r.BatchSize == 0 {
			r.emit(*ev)
		}
	}
	switch format {
	case FormatNodes:
		return csvRows(rd, func(line int, rec map[string]string, err error) error {
			if err == nil && rec["id"] == "" {
				err = fmt.Errorf("no id")
			}
			if err != nil {
				bad(line, err)
				return nil
			}
			a := schemas.GraphNodeArgs{ID: rec["id"], Properties: map[string]any{}}
			for k, v := range rec {
				switch k {
				case "id":
				case "labels", "label":
					for _, l := range strings.Split(v, ";") {
						if l = strings.TrimSpace(l); l != "" {
							a.Labels = append(a.Labels, l)
						}
					}
				default:
					if v != "" {
						a.Properties[k] = typed(v)
					}
				}
			}
			if _, err := r.Graph.AddNode(ctx, ev.Namespace, a); err != nil {
				bad(line, err)
				return nil
			}
			loaded()
			return nil
		})
	case FormatRelationships:
		return csvRows(rd, func(line int, rec map[string]string, err error) error {
			if err == nil && (rec["from"] == "" || rec["to"] == "" || rec["type"] == "") {
				err = fmt.Errorf("want from, to and type")
			}
			if err != nil {
				bad(line, err)
				return nil
			}
			a := schemas.GraphRelationshipArgs{From: rec["from"], To: rec["to"], Type: rec["type"], Properties: map[string]any{}}
			for k, v := range rec {
				if k != "from" && k != "to" && k != "type" && v != "" {
					a.Properties[k] = typed(v)
				}
			}
			if _, err := r.Graph.AddRelationship(ctx, ev.Namespace, a); err != nil {
				bad(line, err)
				return nil
			}
			loaded()
			return nil
		})
	case FormatCypher:
		sc := bufio.NewScanner(rd)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var stmt []string
		start := 0
		run := func() {
			q := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.Join(stmt, "\n")), ";"))
			stmt = nil
			if q == "" {
				return
			}
			if _, err := r.Graph.Query(ctx, ev.Namespace, schemas.GraphQueryArgs{Query: q}, true); err != nil {
				bad(start, err)
				return
			}
			loaded()
		}
		for line := 1; sc.Scan(); line++ {
			l := sc.Text()
			t := strings.TrimSpace(l)
			if len(stmt) == 0 && (t == "" || strings.HasPrefix(t, "//")) {
				continue
			}
			if len(stmt) == 0 {
				start = line
			}
			stmt = append(stmt, l)
			if strings.HasSuffix(t, ";") {
				run()
			}
		}
		run()
		return sc.Err()
	}
	bad(0, fmt.Errorf("format %s is not for neo4j", format))
	return nil
}
