package data

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// openVectors connects to the Qdrant-compatible service that
// SANDOX_TEST_QDRANT names (host:port); the integration tests run the
// image for every CI run.
func openVectors(t *testing.T) *Vectors {
	t.Helper()
	addr := os.Getenv("SANDOX_TEST_QDRANT")
	if addr == "" {
		t.Skip("SANDOX_TEST_QDRANT is not set; integration/TestDatabases covers Qdrant")
	}
	v, err := OpenVectors(context.Background(), addr, HashEmbedder{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v
}

func TestVectorsSearch(t *testing.T) {
	v := openVectors(t)
	ctx := context.Background()
	ns := fmt.Sprintf("t%d", os.Getpid())
	var docs []schemas.VectorDocument
	for i := range 40 {
		docs = append(docs, schemas.VectorDocument{
			ID:       fmt.Sprintf("d%d", i),
			Text:     fmt.Sprintf("note %d about gardens, soil and weather in spring", i),
			Metadata: map[string]any{"topic": []string{"garden", "weather"}[i%2], "n": i},
		})
	}
	docs = append(docs, schemas.VectorDocument{ID: "zebra", Text: "the quixotic zebra crossing", Metadata: map[string]any{"topic": "animals"}})
	res, err := v.Upsert(ctx, ns, docs)
	require.NoError(t, err)
	assert.Equal(t, 41, res.Upserted)
	// Again: the same points, nothing duplicated.
	_, err = v.Upsert(ctx, ns, docs)
	require.NoError(t, err)
	n, err := v.Count(ctx, ns)
	require.NoError(t, err)
	assert.EqualValues(t, 41, n)

	for _, mode := range []string{schemas.SearchHybrid, schemas.SearchKeyword, schemas.SearchVector} {
		t.Run(mode, func(t *testing.T) {
			r, err := v.Search(ctx, ns, schemas.VectorSearchArgs{Query: "quixotic zebra", Mode: mode, TopK: 3})
			require.NoError(t, err)
			require.NotEmpty(t, r.Documents)
			assert.Equal(t, "zebra", r.Documents[0].ID)
		})
	}
	r, err := v.Search(ctx, ns, schemas.VectorSearchArgs{Query: "gardens", TopK: 100, Filter: map[string]any{"topic": "weather"}})
	require.NoError(t, err)
	assert.Len(t, r.Documents, 20)
	for _, d := range r.Documents {
		assert.Equal(t, "weather", d.Metadata["topic"])
	}

	g, err := v.Get(ctx, ns, schemas.VectorGetArgs{IDs: []string{"d3", "nope"}})
	require.NoError(t, err)
	require.Len(t, g.Documents, 1)
	assert.Equal(t, "d3", g.Documents[0].ID)

	_, err = v.Delete(ctx, ns, schemas.VectorDeleteArgs{IDs: []string{"d3"}})
	require.NoError(t, err)
	_, err = v.Delete(ctx, ns, schemas.VectorDeleteArgs{Filter: map[string]any{"topic": "garden"}})
	require.NoError(t, err)
	n, err = v.Count(ctx, ns)
	require.NoError(t, err)
	assert.EqualValues(t, 20, n) // 19 weather + the zebra

	_, err = v.Search(ctx, "never-written", schemas.VectorSearchArgs{Query: "x"})
	assert.ErrorIs(t, err, ErrVectorArgs)
}

func TestHashEmbedder(t *testing.T) {
	e := HashEmbedder{}
	vs, err := e.Embed(context.Background(), []string{"the quixotic zebra", "The Quixotic Zebra!", "spring soil"})
	require.NoError(t, err)
	require.Len(t, vs[0], DefaultHashDim)
	dot := func(a, b []float32) (s float32) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	assert.InDelta(t, 1, dot(vs[0], vs[0]), 1e-5, "normalised")
	assert.InDelta(t, 1, dot(vs[0], vs[1]), 1e-5, "case and punctuation do not matter")
	assert.Less(t, dot(vs[0], vs[2]), float32(0.5))
	assert.Equal(t, PointID("a", "x"), PointID("a", "x"))
	assert.NotEqual(t, PointID("a", "x"), PointID("b", "x"))
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, PointID("a", "x"))
}
