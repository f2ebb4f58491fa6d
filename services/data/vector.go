package data

import (
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/connectivity"

	"github.com/sandox/sandox/schemas"
)

// ErrVectorArgs means a vector operation's arguments are invalid.
var ErrVectorArgs = errors.New("invalid vector arguments")

// The named vectors of every collection, and the BM25 model Qdrant embeds
// server-side.
const (
	denseVector  = "dense"
	sparseVector = "bm25"
	bm25Model    = "qdrant/bm25"
	// prefetchFactor times top_k candidates come from each of the dense and
	// BM25 searches before RRF fuses them.
	prefetchFactor = 4
)

// Vectors runs vector operations on one group's Qdrant. A namespace is a
// collection of its own (the group's Qdrant serves only that group), so a
// query of one namespace cannot reach another's points. A point's id is
// derived from the namespace and the document id (PointID), so writing a
// document again replaces it.
type Vectors struct {
	client *qdrant.Client
	embed  Embedder

	mu    sync.Mutex
	ready map[string]bool // collections known to exist
}

// OpenVectors connects to Qdrant's gRPC API at address (host:port) and
// waits until it answers.
func OpenVectors(ctx context.Context, address string, embed Embedder) (*Vectors, error) {
	host, portS, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("qdrant address %q: %w", address, err)
	}
	port, err := strconv.Atoi(portS)
	if err != nil {
		return nil, fmt.Errorf("qdrant address %q: %w", address, err)
	}
	c, err := qdrant.NewClient(&qdrant.Config{Host: host, Port: port})
	if err != nil {
		return nil, fmt.Errorf("qdrant client: %w", err)
	}
	if _, err := c.HealthCheck(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("qdrant at %s: %w", address, err)
	}
	return &Vectors{client: c, embed: embed, ready: map[string]bool{}}, nil
}

// Close closes the client.
func (v *Vectors) Close() error { return v.client.Close() }

// wake makes a client whose connection is failing dial again at once,
// rather than after gRPC's reconnect backoff (which grows to minutes): its
// Qdrant may have come back, after a restart or with the group started
// again on its kept volume, at the same address. It waits up to a second
// for the new attempt to begin, so that the next call waits for the
// connection instead of failing at once.
func (v *Vectors) wake(ctx context.Context) {
	conn := v.client.GetGrpcClient().Conn()
	if conn.GetState() != connectivity.TransientFailure {
		return
	}
	conn.ResetConnectBackoff()
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn.WaitForStateChange(wctx, connectivity.TransientFailure)
}

// PointID is the Qdrant point id of document id in namespace ns: a
// name-based UUID (SHA-1, version 5 layout) of both, so the same document
// always lands on the same point.
func PointID(ns, id string) string {
	h := sha1.Sum([]byte("sandox\x00" + ns + "\x00" + id))
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// collection makes sure the namespace's collection exists: a dense vector
// (cosine, the embedder's dimension) and a BM25 sparse vector with IDF.
func (v *Vectors) collection(ctx context.Context, ns string, create bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ready[ns] {
		return nil
	}
	ok, err := v.client.CollectionExists(ctx, ns)
	if err != nil {
		return err
	}
	if !ok && !create {
		return fmt.Errorf("%w: namespace %s holds no documents yet", ErrVectorArgs, ns)
	}
	if !ok {
		dim := v.embed.Dim()
		if dim == 0 {
			probe, err := v.embed.Embed(ctx, []string{"dimension probe"})
			if err != nil {
				return err
			}
			dim = len(probe[0])
		}
		err := v.client.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: ns,
			VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
				denseVector: {Size: uint64(dim), Distance: qdrant.Distance_Cosine},
			}),
			SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
				sparseVector: {Modifier: qdrant.Modifier_Idf.Enum()},
			}),
		})
		if err != nil {
			return fmt.Errorf("create collection %s: %w", ns, err)
		}
	}
	v.ready[ns] = true
	return nil
}

// Upsert writes documents into the namespace, embedding those without a
// vector.
func (v *Vectors) Upsert(ctx context.Context, ns string, docs []schemas.VectorDocument) (schemas.VectorResult, error) {
	if len(docs) == 0 {
		return schemas.VectorResult{}, nil
	}
	if err := v.collection(ctx, ns, true); err != nil {
		return schemas.VectorResult{}, err
	}
	var texts []string
	var idx []int
	for i, d := range docs {
		if d.ID == "" {
			return schemas.VectorResult{}, fmt.Errorf("%w: document %d has no id", ErrVectorArgs, i)
		}
		if len(d.Vector) == 0 {
			texts = append(texts, d.Text)
			idx = append(idx, i)
		}
	}
	vecs := make([][]float32, len(docs))
	for i, d := range docs {
		vecs[i] = d.Vector
	}
	if len(texts) > 0 {
		emb, err := v.embed.Embed(ctx, texts)
		if err != nil {
			return schemas.VectorResult{}, err
		}
		for j, i := range idx {
			vecs[i] = emb[j]
		}
	}
	points := make([]*qdrant.PointStruct, len(docs))
	for i, d := range docs {
		payload := map[string]any{"doc_id": d.ID, "text": d.Text}
		if len(d.Metadata) > 0 {
			payload["meta"] = d.Metadata
		}
		pv, err := qdrant.TryValueMap(payload)
		if err != nil {
			return schemas.VectorResult{}, fmt.Errorf("%w: document %s metadata: %w", ErrVectorArgs, d.ID, err)
		}
		points[i] = &qdrant.PointStruct{
			Id: qdrant.NewID(PointID(ns, d.ID)),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
				denseVector:  qdrant.NewVectorDense(vecs[i]),
				sparseVector: qdrant.NewVectorDocument(&qdrant.Document{Text: d.Text, Model: bm25Model}),
			}),
			Payload: pv,
		}
	}
	wait := true
	if _, err := v.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: ns, Wait: &wait, Points: points}); err != nil {
		return schemas.VectorResult{}, err
	}
	return schemas.VectorResult{Upserted: len(docs)}, nil
}

// filter turns metadata equalities into a Qdrant filter on the meta
// payload.
func filter(m map[string]any) (*qdrant.Filter, error) {
	if len(m) == 0 {
		return nil, nil
	}
	f := &qdrant.Filter{}
	for k, val := range m {
		key := "meta." + k
		switch x := val.(type) {
		case string:
			f.Must = append(f.Must, qdrant.NewMatch(key, x))
		case bool:
			f.Must = append(f.Must, qdrant.NewMatchBool(key, x))
		case float64:
			if x != float64(int64(x)) {
				return nil, fmt.Errorf("%w: filter %s: only strings, integers and booleans match", ErrVectorArgs, k)
			}
			f.Must = append(f.Must, qdrant.NewMatchInt(key, int64(x)))
		case int:
			f.Must = append(f.Must, qdrant.NewMatchInt(key, int64(x)))
		case int64:
			f.Must = append(f.Must, qdrant.NewMatchInt(key, x))
		default:
			return nil, fmt.Errorf("%w: filter %s: only strings, integers and booleans match", ErrVectorArgs, k)
		}
	}
	return f, nil
}

// Search finds the namespace's documents most relevant to the query:
// hybrid (dense and BM25, each top_k×4 candidates, fused by Reciprocal
// Rank Fusion), keyword (BM25 only) or vector (dense only).
func (v *Vectors) Search(ctx context.Context, ns string, a schemas.VectorSearchArgs) (schemas.VectorResult, error) {
	k := a.TopK
	if k == 0 {
		k = 10
	}
	if k < 0 || k > 100 {
		return schemas.VectorResult{}, fmt.Errorf("%w: top_k %d: want 1 to 100", ErrVectorArgs, k)
	}
	if a.Query == "" {
		return schemas.VectorResult{}, fmt.Errorf("%w: query is empty", ErrVectorArgs)
	}
	f, err := filter(a.Filter)
	if err != nil {
		return schemas.VectorResult{}, err
	}
	if err := v.collection(ctx, ns, false); err != nil {
		return schemas.VectorResult{}, err
	}
	limit := uint64(k)
	req := &qdrant.QueryPoints{CollectionName: ns, Limit: &limit, Filter: f, WithPayload: qdrant.NewWithPayload(true)}
	keyword := func(n uint64) *qdrant.PrefetchQuery {
		using := sparseVector
		return &qdrant.PrefetchQuery{Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(&qdrant.Document{Text: a.Query, Model: bm25Model})), Using: &using, Limit: &n, Filter: f}
	}
	dense := func(n uint64) (*qdrant.PrefetchQuery, error) {
		emb, err := v.embed.Embed(ctx, []string{a.Query})
		if err != nil {
			return nil, err
		}
		using := denseVector
		return &qdrant.PrefetchQuery{Query: qdrant.NewQueryDense(emb[0]), Using: &using, Limit: &n, Filter: f}, nil
	}
	switch a.Mode {
	case "", schemas.SearchHybrid:
		d, err := dense(limit * prefetchFactor)
		if err != nil {
			return schemas.VectorResult{}, err
		}
		req.Prefetch = []*qdrant.PrefetchQuery{d, keyword(limit * prefetchFactor)}
		req.Query = qdrant.NewQueryFusion(qdrant.Fusion_RRF)
	case schemas.SearchKeyword:
		p := keyword(limit)
		req.Query, req.Using = p.Query, p.Using
	case schemas.SearchVector:
		p, err := dense(limit)
		if err != nil {
			return schemas.VectorResult{}, err
		}
		req.Query, req.Using = p.Query, p.Using
	default:
		return schemas.VectorResult{}, fmt.Errorf("%w: mode %q: want hybrid, keyword or vector", ErrVectorArgs, a.Mode)
	}
	points, err := v.client.Query(ctx, req)
	if err != nil {
		return schemas.VectorResult{}, err
	}
	out := schemas.VectorResult{Documents: []schemas.VectorDocument{}}
	for _, p := range points {
		d := docOf(p.GetPayload())
		d.Score = p.GetScore()
		out.Documents = append(out.Documents, d)
	}
	return out, nil
}

// Get returns the namespace's documents with the given ids (those that
// exist).
func (v *Vectors) Get(ctx context.Context, ns string, a schemas.VectorGetArgs) (schemas.VectorResult, error) {
	if len(a.IDs) == 0 {
		return schemas.VectorResult{}, fmt.Errorf("%w: ids are required", ErrVectorArgs)
	}
	if err := v.collection(ctx, ns, false); err != nil {
		return schemas.VectorResult{}, err
	}
	ids := make([]*qdrant.PointId, len(a.IDs))
	for i, id := range a.IDs {
		ids[i] = qdrant.NewID(PointID(ns, id))
	}
	points, err := v.client.Get(ctx, &qdrant.GetPoints{CollectionName: ns, Ids: ids, WithPayload: qdrant.NewWithPayload(true)})
	if err != nil {
		return schemas.VectorResult{}, err
	}
	out := schemas.VectorResult{Documents: []schemas.VectorDocument{}}
	for _, p := range points {
		out.Documents = append(out.Documents, docOf(p.GetPayload()))
	}
	return out, nil
}

// Delete removes documents by ids, or those matching a metadata filter.
func (v *Vectors) Delete(ctx context.Context, ns string, a schemas.VectorDeleteArgs) (schemas.VectorResult, error) {
	if len(a.IDs) == 0 && len(a.Filter) == 0 {
		return schemas.VectorResult{}, fmt.Errorf("%w: give ids or a filter", ErrVectorArgs)
	}
	if err := v.collection(ctx, ns, false); err != nil {
		return schemas.VectorResult{}, err
	}
	wait := true
	var sel *qdrant.PointsSelector
	if len(a.IDs) > 0 {
		ids := make([]*qdrant.PointId, len(a.IDs))
		for i, id := range a.IDs {
			ids[i] = qdrant.NewID(PointID(ns, id))
		}
		sel = qdrant.NewPointsSelector(ids...)
	} else {
		f, err := filter(a.Filter)
		if err != nil {
			return schemas.VectorResult{}, err
		}
		sel = qdrant.NewPointsSelectorFilter(f)
	}
	if _, err := v.client.Delete(ctx, &qdrant.DeletePoints{CollectionName: ns, Wait: &wait, Points: sel}); err != nil {
		return schemas.VectorResult{}, err
	}
	return schemas.VectorResult{Deleted: len(a.IDs)}, nil
}

// Count returns how many documents the namespace holds.
func (v *Vectors) Count(ctx context.Context, ns string) (uint64, error) {
	if err := v.collection(ctx, ns, false); err != nil {
		return 0, err
	}
	exact := true
	return v.client.Count(ctx, &qdrant.CountPoints{CollectionName: ns, Exact: &exact})
}

func docOf(p map[string]*qdrant.Value) schemas.VectorDocument {
	d := schemas.VectorDocument{ID: p["doc_id"].GetStringValue(), Text: p["text"].GetStringValue()}
	if m := p["meta"].GetStructValue(); m != nil {
		d.Metadata = map[string]any{}
		for k, val := range m.GetFields() {
			d.Metadata[k] = plain(val)
		}
	}
	return d
}

func plain(v *qdrant.Value) any {
	switch x := v.GetKind().(type) {
	case *qdrant.Value_StringValue:
		return x.StringValue
	case *qdrant.Value_IntegerValue:
		return x.IntegerValue
	case *qdrant.Value_DoubleValue:
		return x.DoubleValue
	case *qdrant.Value_BoolValue:
		return x.BoolValue
	case *qdrant.Value_ListValue:
		var out []any
		for _, e := range x.ListValue.GetValues() {
			out = append(out, plain(e))
		}
		return out
	case *qdrant.Value_StructValue:
		out := map[string]any{}
		for k, e := range x.StructValue.GetFields() {
			out[k] = plain(e)
		}
		return out
	}
	return nil
}
