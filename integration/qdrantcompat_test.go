package integration

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/qdrant/go-client/qdrant"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// qdrantTarget is the Qdrant a compatibility test talks to.
type qdrantTarget struct {
	// client is the current client; restart replaces it.
	client *qdrant.Client
	// restart restarts the server keeping its data and connects a new
	// client; nil for an external Qdrant (SANDOX_QDRANT_URL).
	restart func(t *testing.T) *qdrant.Client
	// edge is true for the qdrant-edge container.
	edge bool
}

// newQdrantTarget connects to SANDOX_QDRANT_URL when it is set
// ("host:6334", "http://host:6334" or "https://host:6334"; API key from
// SANDOX_QDRANT_API_KEY), else starts a container of the qdrant-edge image
// with a volume for its data, removed when t ends.
func newQdrantTarget(t *testing.T) *qdrantTarget {
	t.Helper()
	if raw := os.Getenv("SANDOX_QDRANT_URL"); raw != "" {
		cfg, err := qdrantConfig(raw)
		require.NoError(t, err)
		c, err := qdrant.NewClient(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return &qdrantTarget{client: c}
	}
	ctx := t.Context()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	bcfg := build.DefaultConfig(root)
	if testing.Verbose() {
		bcfg.Progress = os.Stderr
	}
	image, err := build.NewBuilder(env.docker, bcfg).QdrantEdge(ctx)
	require.NoError(t, err)

	name := fmt.Sprintf("sandox-it-qdrant-%d", time.Now().UnixNano())
	require.NoError(t, env.docker.CreateVolume(ctx, name, map[string]string{"dev.sandox.test": "true"}, nil))
	id, err := env.docker.Create(ctx, docker.ContainerSpec{
		Name:         name,
		Image:        image,
		Labels:       map[string]string{runtime.LabelManaged: "true", "dev.sandox.test": "true"},
		Binds:        []string{name + ":/data"},
		PublishLocal: map[string]string{"6334/tcp": "0"},
		Hardened:     true,
		Memory:       1 << 30,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		if t.Failed() {
			logs, _ := env.docker.Logs(ctx, id, 50)
			t.Logf("qdrant-edge logs:\n%s", logs)
		}
		assert.NoError(t, env.docker.Remove(ctx, id))
		assert.NoError(t, env.docker.RemoveVolume(ctx, name))
	})
	require.NoError(t, env.docker.Start(ctx, id))
	var current *qdrant.Client
	connect := func(t *testing.T) *qdrant.Client {
		t.Helper()
		st, err := env.docker.Inspect(ctx, id)
		require.NoError(t, err)
		port, err := strconv.Atoi(st.Ports["6334/tcp"])
		require.NoError(t, err, "published port of %s", id)
		cfg := &qdrant.Config{Host: "127.0.0.1", Port: port, SkipCompatibilityCheck: true}
		// Docker's proxy accepts connections before the service listens,
		// and a pooled connection that failed then waits in backoff: probe
		// with a throwaway client, then connect the one the test uses.
		poll.Until(t, 60*time.Second, "qdrant-edge answers HealthCheck", func() bool {
			probe, err := qdrant.NewClient(cfg)
			if err != nil {
				return false
			}
			defer probe.Close()
			hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			_, err = probe.HealthCheck(hctx)
			return err == nil
		})
		c, err := qdrant.NewClient(cfg)
		require.NoError(t, err)
		current = c
		return c
	}
	t.Cleanup(func() {
		if current != nil {
			_ = current.Close()
		}
	})
	restart := func(t *testing.T) *qdrant.Client {
		t.Helper()
		_ = current.Close()
		require.NoError(t, env.docker.Restart(ctx, id))
		return connect(t)
	}
	return &qdrantTarget{client: connect(t), restart: restart, edge: true}
}

func qdrantConfig(raw string) (*qdrant.Config, error) {
	if !strings.Contains(raw, "://") {
		raw = "grpc://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("SANDOX_QDRANT_URL: %w", err)
	}
	host, portText, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, portText = u.Host, "6334"
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("SANDOX_QDRANT_URL port %q: %w", portText, err)
	}
	return &qdrant.Config{
		Host: host, Port: port, UseTLS: u.Scheme == "https",
		APIKey: os.Getenv("SANDOX_QDRANT_API_KEY"), SkipCompatibilityCheck: true,
	}, nil
}

// compatDocs are the documents of the compatibility collection: the id is
// the index plus one.
var compatDocs = []struct {
	text, kind string
	year       int
	public     bool
}{
	{"the quick brown fox jumps over the lazy dog", "story", 2001, true},
	{"a lazy afternoon by the river with a book", "story", 2005, false},
	{"zanzibar is an island off the coast of tanzania", "geography", 2010, true},
	{"brown bread and butter for breakfast", "recipe", 2015, true},
	{"the river runs through the valley to the sea", "geography", 2020, false},
	{"slow cooked beans with brown sugar", "recipe", 2022, false},
}

const compatDim = 32

// embed is a deterministic bag-of-words embedding: each word adds one to
// a hashed dimension. It lets the test predict the dense ranking.
func embed(text string) []float32 {
	v := make([]float32, compatDim)
	for _, w := range strings.Fields(text) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		v[h.Sum32()%compatDim]++
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func bm25Doc(text string) *qdrant.Document {
	return &qdrant.Document{Text: text, Model: "qdrant/bm25"}
}

// createCompatCollection makes a collection with a dense and a BM25
// vector, loads compatDocs, and deletes it when t ends (with the target's
// client of that time: a restart replaces it).
func createCompatCollection(t *testing.T, target *qdrantTarget, name string) {
	t.Helper()
	ctx := t.Context()
	c := target.client
	require.NoError(t, c.CreateCollection(ctx, &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			"dense": {Size: compatDim, Distance: qdrant.Distance_Cosine},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			"bm25": {Modifier: qdrant.Modifier_Idf.Enum()},
		}),
	}))
	t.Cleanup(func() { _ = target.client.DeleteCollection(context.WithoutCancel(ctx), name) })
	points := make([]*qdrant.PointStruct, 0, len(compatDocs))
	for i, d := range compatDocs {
		points = append(points, &qdrant.PointStruct{
			Id: qdrant.NewIDNum(uint64(i + 1)),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{
				"dense": qdrant.NewVectorDense(embed(d.text)),
				"bm25":  qdrant.NewVectorDocument(bm25Doc(d.text)),
			}),
			Payload: qdrant.NewValueMap(map[string]any{
				"text": d.text, "kind": d.kind, "year": d.year, "public": d.public,
			}),
		})
	}
	_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: points})
	require.NoError(t, err)
}

func ids(points []*qdrant.ScoredPoint) []uint64 {
	out := make([]uint64, len(points))
	for i, p := range points {
		out[i] = p.GetId().GetNum()
	}
	return out
}

// TestQdrantCompat runs the real Qdrant Go client against the
// Qdrant-compatible service built on Qdrant Edge (or against a real Qdrant
// named by SANDOX_QDRANT_URL): everything the data service relies on.
func TestQdrantCompat(t *testing.T) {
	target := newQdrantTarget(t)
	ctx := t.Context()
	prefix := fmt.Sprintf("compat_%d_", time.Now().UnixNano())

	t.Run("collections", func(t *testing.T) {
		c := target.client
		name := prefix + "collections"
		createCompatCollection(t, target, name)
		exists, err := c.CollectionExists(ctx, name)
		require.NoError(t, err)
		assert.True(t, exists)
		names, err := c.ListCollections(ctx)
		require.NoError(t, err)
		assert.Contains(t, names, name)
		info, err := c.GetCollectionInfo(ctx, name)
		require.NoError(t, err)
		assert.Equal(t, uint64(len(compatDocs)), info.GetPointsCount())
		assert.Equal(t, uint64(compatDim), info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()["dense"].GetSize())
		err = c.CreateCollection(ctx, &qdrant.CreateCollection{
			CollectionName: name,
			VectorsConfig:  qdrant.NewVectorsConfig(&qdrant.VectorParams{Size: 4, Distance: qdrant.Distance_Dot}),
		})
		require.Error(t, err, "creating an existing collection")
		require.NoError(t, c.DeleteCollection(ctx, name))
		exists, err = c.CollectionExists(ctx, name)
		require.NoError(t, err)
		assert.False(t, exists)
		_, err = c.Count(ctx, &qdrant.CountPoints{CollectionName: name})
		assert.Equal(t, codes.NotFound, status.Code(err), "count on a deleted collection: %v", err)
	})

	t.Run("hybrid query ranks the distinctive term first", func(t *testing.T) {
		c := target.client
		name := prefix + "hybrid"
		createCompatCollection(t, target, name)
		for _, tc := range []struct{ name, query string }{
			{"zanzibar", "zanzibar"},
			{"beans", "beans sugar"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				want := uint64(3)
				if tc.name == "beans" {
					want = 6
				}
				hits, err := c.Query(ctx, &qdrant.QueryPoints{
					CollectionName: name,
					Prefetch: []*qdrant.PrefetchQuery{
						{Query: qdrant.NewQueryDense(embed(tc.query)), Using: qdrant.PtrOf("dense"), Limit: qdrant.PtrOf(uint64(10))},
						{Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(bm25Doc(tc.query))), Using: qdrant.PtrOf("bm25"), Limit: qdrant.PtrOf(uint64(10))},
					},
					Query:       qdrant.NewQueryFusion(qdrant.Fusion_RRF),
					Limit:       qdrant.PtrOf(uint64(3)),
					WithPayload: qdrant.NewWithPayload(true),
				})
				require.NoError(t, err)
				require.NotEmpty(t, hits)
				assert.Equal(t, want, hits[0].GetId().GetNum(), "got %v", ids(hits))
				assert.Contains(t, hits[0].GetPayload()["text"].GetStringValue(), strings.Fields(tc.query)[0])
			})
		}
		t.Run("keyword only", func(t *testing.T) {
			hits, err := c.Query(ctx, &qdrant.QueryPoints{
				CollectionName: name,
				Query:          qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(bm25Doc("tanzania"))),
				Using:          qdrant.PtrOf("bm25"),
			})
			require.NoError(t, err)
			assert.Equal(t, []uint64{3}, ids(hits))
		})
		t.Run("vector only with offset", func(t *testing.T) {
			all, err := c.Query(ctx, &qdrant.QueryPoints{
				CollectionName: name, Query: qdrant.NewQueryDense(embed("river")), Using: qdrant.PtrOf("dense"),
				Limit: qdrant.PtrOf(uint64(4)),
			})
			require.NoError(t, err)
			require.Len(t, all, 4)
			rest, err := c.Query(ctx, &qdrant.QueryPoints{
				CollectionName: name, Query: qdrant.NewQueryDense(embed("river")), Using: qdrant.PtrOf("dense"),
				Limit: qdrant.PtrOf(uint64(2)), Offset: qdrant.PtrOf(uint64(2)),
			})
			require.NoError(t, err)
			assert.Equal(t, ids(all)[2:], ids(rest))
		})
	})

	t.Run("filters and count", func(t *testing.T) {
		c := target.client
		name := prefix + "filters"
		createCompatCollection(t, target, name)
		for _, tc := range []struct {
			name   string
			filter *qdrant.Filter
			want   uint64
		}{
			{"keyword", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", "recipe")}}, 2},
			{"bool true", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("public", true)}}, 3},
			{"bool false", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchBool("public", false)}}, 3},
			{"range", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewRange("year", &qdrant.Range{Gte: qdrant.PtrOf(2010.0), Lt: qdrant.PtrOf(2020.0)})}}, 2},
			{"keywords any", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords("kind", "recipe", "story")}}, 4},
			{"must not", &qdrant.Filter{MustNot: []*qdrant.Condition{qdrant.NewMatch("kind", "story")}}, 4},
			{"should", &qdrant.Filter{Should: []*qdrant.Condition{qdrant.NewMatchInt("year", 2001), qdrant.NewMatchInt("year", 2022)}}, 2},
			{"has id", &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewHasID(qdrant.NewIDNum(1), qdrant.NewIDNum(4))}}, 2},
			{"none", nil, uint64(len(compatDocs))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name, Filter: tc.filter, Exact: qdrant.PtrOf(true)})
				require.NoError(t, err)
				assert.Equal(t, tc.want, n)
			})
		}
		hits, err := c.Query(ctx, &qdrant.QueryPoints{
			CollectionName: name, Query: qdrant.NewQueryDense(embed("brown")), Using: qdrant.PtrOf("dense"),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", "recipe")}},
		})
		require.NoError(t, err)
		assert.ElementsMatch(t, []uint64{4, 6}, ids(hits), "a filtered query returns only the filter's points")
	})

	t.Run("scroll with pagination", func(t *testing.T) {
		c := target.client
		name := prefix + "scroll"
		createCompatCollection(t, target, name)
		var seen []uint64
		var offset *qdrant.PointId
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "scroll does not end")
			points, next, err := c.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
				CollectionName: name, Limit: qdrant.PtrOf(uint32(4)), Offset: offset,
				WithPayload: qdrant.NewWithPayloadInclude("kind"),
			})
			require.NoError(t, err)
			for _, p := range points {
				seen = append(seen, p.GetId().GetNum())
				assert.Equal(t, []string{"kind"}, keys(p.GetPayload()))
			}
			if next == nil {
				break
			}
			offset = next
		}
		assert.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, seen)
	})

	t.Run("delete by id and by filter", func(t *testing.T) {
		c := target.client
		name := prefix + "delete"
		createCompatCollection(t, target, name)
		_, err := c.Delete(ctx, &qdrant.DeletePoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelector(qdrant.NewIDNum(1))})
		require.NoError(t, err)
		_, err = c.Delete(ctx, &qdrant.DeletePoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: qdrant.NewPointsSelectorFilter(
			&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", "recipe")}})})
		require.NoError(t, err)
		got, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: name, Ids: []*qdrant.PointId{qdrant.NewIDNum(1), qdrant.NewIDNum(2), qdrant.NewIDNum(4)}})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, uint64(2), got[0].GetId().GetNum())
		n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name, Exact: qdrant.PtrOf(true)})
		require.NoError(t, err)
		assert.Equal(t, uint64(3), n)
	})

	t.Run("payload edits", func(t *testing.T) {
		c := target.client
		name := prefix + "payload"
		createCompatCollection(t, target, name)
		one := qdrant.NewPointsSelector(qdrant.NewIDNum(1))
		get := func() map[string]*qdrant.Value {
			got, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: name, Ids: []*qdrant.PointId{qdrant.NewIDNum(1)}, WithPayload: qdrant.NewWithPayload(true)})
			require.NoError(t, err)
			require.Len(t, got, 1)
			return got[0].GetPayload()
		}
		_, err := c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: name, Wait: qdrant.PtrOf(true), PointsSelector: one,
			Payload: qdrant.NewValueMap(map[string]any{"reviewed": true, "tags": []any{"a", "b"}})})
		require.NoError(t, err)
		p := get()
		assert.True(t, p["reviewed"].GetBoolValue())
		assert.Equal(t, "story", p["kind"].GetStringValue(), "set keeps the other keys")
		_, err = c.DeletePayload(ctx, &qdrant.DeletePayloadPoints{CollectionName: name, Wait: qdrant.PtrOf(true), PointsSelector: one, Keys: []string{"reviewed"}})
		require.NoError(t, err)
		assert.NotContains(t, get(), "reviewed")
		_, err = c.OverwritePayload(ctx, &qdrant.SetPayloadPoints{CollectionName: name, Wait: qdrant.PtrOf(true), PointsSelector: one,
			Payload: qdrant.NewValueMap(map[string]any{"only": 1})})
		require.NoError(t, err)
		assert.Equal(t, []string{"only"}, keys(get()))
		_, err = c.ClearPayload(ctx, &qdrant.ClearPayloadPoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: one})
		require.NoError(t, err)
		assert.Empty(t, get())
		// By filter: every story gets a flag.
		_, err = c.SetPayload(ctx, &qdrant.SetPayloadPoints{CollectionName: name, Wait: qdrant.PtrOf(true),
			PointsSelector: qdrant.NewPointsSelectorFilter(&qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("kind", "geography")}}),
			Payload:        qdrant.NewValueMap(map[string]any{"flag": "geo"})})
		require.NoError(t, err)
		n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name, Exact: qdrant.PtrOf(true),
			Filter: &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatch("flag", "geo")}}})
		require.NoError(t, err)
		assert.Equal(t, uint64(2), n)
	})

	t.Run("field index, facet and groups", func(t *testing.T) {
		c := target.client
		name := prefix + "facet"
		createCompatCollection(t, target, name)
		_, err := c.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{CollectionName: name, Wait: qdrant.PtrOf(true),
			FieldName: "kind", FieldType: qdrant.FieldType_FieldTypeKeyword.Enum()})
		require.NoError(t, err)
		info, err := c.GetCollectionInfo(ctx, name)
		require.NoError(t, err)
		require.Contains(t, info.GetPayloadSchema(), "kind")
		assert.Equal(t, qdrant.PayloadSchemaType_Keyword, info.GetPayloadSchema()["kind"].GetDataType())
		hits, err := c.Facet(ctx, &qdrant.FacetCounts{CollectionName: name, Key: "kind", Exact: qdrant.PtrOf(true)})
		require.NoError(t, err)
		counts := map[string]uint64{}
		for _, h := range hits {
			counts[h.GetValue().GetStringValue()] = h.GetCount()
		}
		assert.Equal(t, map[string]uint64{"story": 2, "geography": 2, "recipe": 2}, counts)

		groups, err := c.QueryGroups(ctx, &qdrant.QueryPointGroups{
			CollectionName: name, Query: qdrant.NewQueryDense(embed("brown river")), Using: qdrant.PtrOf("dense"),
			GroupBy: "kind", Limit: qdrant.PtrOf(uint64(3)), GroupSize: qdrant.PtrOf(uint64(2)),
			WithPayload: qdrant.NewWithPayloadInclude("kind"),
		})
		require.NoError(t, err)
		require.Len(t, groups, 3)
		for _, g := range groups {
			assert.LessOrEqual(t, len(g.GetHits()), 2)
			for _, h := range g.GetHits() {
				assert.Equal(t, g.GetId().GetStringValue(), h.GetPayload()["kind"].GetStringValue())
			}
		}
		_, err = c.DeleteFieldIndex(ctx, &qdrant.DeleteFieldIndexCollection{CollectionName: name, Wait: qdrant.PtrOf(true), FieldName: "kind"})
		require.NoError(t, err)
		info, err = c.GetCollectionInfo(ctx, name)
		require.NoError(t, err)
		assert.NotContains(t, info.GetPayloadSchema(), "kind")
	})

	t.Run("persistence across a restart", func(t *testing.T) {
		c := target.client
		if target.restart == nil {
			t.Skip("an external Qdrant (SANDOX_QDRANT_URL) is not restarted by the test")
		}
		name := prefix + "persist"
		createCompatCollection(t, target, name)
		uuid := "5c56c793-69f3-4fbf-87e6-c4bf54c28c26"
		_, err := c.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: name, Wait: qdrant.PtrOf(true), Points: []*qdrant.PointStruct{{
			Id:      qdrant.NewID(uuid),
			Vectors: qdrant.NewVectorsMap(map[string]*qdrant.Vector{"dense": qdrant.NewVectorDense(embed("late arrival"))}),
			Payload: qdrant.NewValueMap(map[string]any{"text": "late arrival"}),
		}}})
		require.NoError(t, err)
		target.client = target.restart(t)
		c = target.client
		n, err := c.Count(ctx, &qdrant.CountPoints{CollectionName: name, Exact: qdrant.PtrOf(true)})
		require.NoError(t, err)
		assert.Equal(t, uint64(len(compatDocs)+1), n)
		got, err := c.Get(ctx, &qdrant.GetPoints{CollectionName: name, Ids: []*qdrant.PointId{qdrant.NewID(uuid)}, WithPayload: qdrant.NewWithPayload(true)})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, uuid, got[0].GetId().GetUuid())
		assert.Equal(t, "late arrival", got[0].GetPayload()["text"].GetStringValue())
		hits, err := c.Query(ctx, &qdrant.QueryPoints{CollectionName: name,
			Query: qdrant.NewQueryNearest(qdrant.NewVectorInputDocument(bm25Doc("zanzibar"))), Using: qdrant.PtrOf("bm25")})
		require.NoError(t, err)
		assert.Equal(t, []uint64{3}, ids(hits), "the BM25 index survives the restart")
	})

	t.Run("unimplemented RPCs say so", func(t *testing.T) {
		c := target.client
		if !target.edge {
			t.Skip("a real Qdrant implements snapshots")
		}
		_, err := c.ListFullSnapshots(ctx)
		require.Error(t, err)
		assert.Equal(t, codes.Unimplemented, status.Code(err))
		assert.Contains(t, err.Error(), "qdrant-edge")
	})
}

func keys(m map[string]*qdrant.Value) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
