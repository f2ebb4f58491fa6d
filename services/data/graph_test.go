package data

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// openGraph connects to the package's Neo4j and loads two namespaces:
// "pub" with people who know each other, "sec" with a secret.
func openGraph(t *testing.T) *Graph {
	t.Helper()
	ctx := context.Background()
	g, err := OpenGraph(ctx, neo.Address, neo.Password)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close(ctx) })
	for _, n := range []struct{ ns, id, name string }{
		{"pub", "ada", "Ada"}, {"pub", "bob", "Bob"}, {"pub", "cy", "Cy"},
		{"sec", "ada", "Ada the spy"}, {"sec", "x", "launch code 0000"},
	} {
		_, err := g.AddNode(ctx, n.ns, schemas.GraphNodeArgs{ID: n.id, Labels: []string{"Person"}, Properties: map[string]any{"name": n.name}})
		require.NoError(t, err)
	}
	for _, r := range [][3]string{{"pub", "ada", "bob"}, {"pub", "bob", "cy"}, {"sec", "ada", "x"}} {
		_, err := g.AddRelationship(ctx, r[0], schemas.GraphRelationshipArgs{From: r[1], To: r[2], Type: "KNOWS"})
		require.NoError(t, err)
	}
	return g
}

func names(rows []map[string]any, col string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r[col].(string))
	}
	return out
}

func TestGraphTemplates(t *testing.T) {
	g := openGraph(t)
	ctx := context.Background()

	// Adding again duplicates nothing.
	res, err := g.AddNode(ctx, "pub", schemas.GraphNodeArgs{ID: "ada", Labels: []string{"Person"}})
	require.NoError(t, err)
	assert.Zero(t, res.NodesCreated)

	nb, err := g.Neighbours(ctx, "pub", schemas.GraphNeighboursArgs{ID: "ada", Depth: 2})
	require.NoError(t, err)
	var ids []string
	for _, n := range nb.Nodes {
		ids = append(ids, n.ID)
	}
	assert.ElementsMatch(t, []string{"bob", "cy"}, ids)
	assert.Len(t, nb.Relationships, 2)

	// The same id in the other namespace is another node.
	nb, err = g.Neighbours(ctx, "sec", schemas.GraphNeighboursArgs{ID: "ada"})
	require.NoError(t, err)
	require.Len(t, nb.Nodes, 1)
	assert.Equal(t, "x", nb.Nodes[0].ID)

	p, err := g.ShortestPath(ctx, "pub", schemas.GraphPathArgs{From: "ada", To: "cy"})
	require.NoError(t, err)
	assert.Len(t, p.Nodes, 3)
	assert.Len(t, p.Relationships, 2)

	// No path from one namespace to another.
	p, err = g.ShortestPath(ctx, "pub", schemas.GraphPathArgs{From: "ada", To: "x"})
	require.NoError(t, err)
	assert.Empty(t, p.Nodes)

	_, err = g.AddRelationship(ctx, "pub", schemas.GraphRelationshipArgs{From: "ada", To: "x", Type: "KNOWS"})
	require.ErrorIs(t, err, ErrGraphArgs)

	for _, bad := range []string{"NS_sec", "SandoxNode", "A-B", "X`) MATCH (m"} {
		_, err := g.AddNode(ctx, "pub", schemas.GraphNodeArgs{ID: "z", Labels: []string{bad}})
		assert.ErrorIs(t, err, ErrGraphArgs, bad)
	}
	_, err = g.AddNode(ctx, "pub", schemas.GraphNodeArgs{ID: "z", Properties: map[string]any{"ns": "sec"}})
	assert.ErrorIs(t, err, ErrGraphArgs)
}

func TestGraphReadQueryConfined(t *testing.T) {
	g := openGraph(t)
	ctx := context.Background()

	res, err := g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: "MATCH (p:Person) RETURN p.name AS name ORDER BY name"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"Ada", "Bob", "Cy"}, names(res.Rows, "name"))

	res, err = g.Query(ctx, "pub", schemas.GraphQueryArgs{
		Query:  "MATCH (a:Person {name: $n})-[:KNOWS*1..3]-(b) RETURN b.name AS name ORDER BY name",
		Params: map[string]any{"n": "Ada"},
	}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"Bob", "Cy"}, names(res.Rows, "name"))

	// A typed relationship: Neo4j may start from a scan of every KNOWS,
	// which the plan check accepts only because the next operator keeps
	// the namespace's.
	res, err = g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: "MATCH (p:Person)-[:KNOWS]->(x:Person) RETURN p.name AS name ORDER BY name"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"Ada", "Bob"}, names(res.Rows, "name"))

	// A pattern comprehension is confined as well.
	res, err = g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: "MATCH (a:Person {name: 'Ada'}) RETURN [(a)-[:KNOWS*1..3]-(q:Person) | q.name] AS all"}, false)
	require.NoError(t, err)
	assert.ElementsMatch(t, []any{"Bob", "Cy"}, res.Rows[0]["all"])
}

func TestGraphCraftedCypherRefused(t *testing.T) {
	g := openGraph(t)
	ctx := context.Background()
	tests := []struct{ name, query string }{
		{"all nodes", "MATCH (n) RETURN n.name"},
		{"by ns property", "MATCH (n:Person) WHERE n.ns = 'sec' RETURN n.name"},
		{"ns in a map", "MATCH (n:Person {ns: 'sec'}) RETURN n.name"},
		{"other namespace label", "MATCH (n:NS_sec) RETURN n.name"},
		{"backquoted label", "MATCH (n:`NS_sec`) RETURN n.name"},
		{"service label", "MATCH (n:SandoxNode) RETURN n.name"},
		{"internal id", "MATCH (n) WHERE id(n) = 0 RETURN n.name"},
		{"element id", "MATCH (n) WHERE elementId(n) = '4:x:0' RETURN n.name"},
		{"relationship scan", "MATCH ()-[r:KNOWS]->(b) RETURN b.name"},
		{"relationship scan, unlabelled ends", "MATCH (a)-[:KNOWS]->(b) RETURN b.name"},
		{"second match from scratch", "MATCH (p:Person) WITH p MATCH (m) RETURN m.name"},
		{"exists subquery from scratch", "MATCH (p:Person) WHERE EXISTS { MATCH (m) WHERE m.name STARTS WITH 'launch' } RETURN p.name"},
		{"count store", "MATCH (n) RETURN count(n)"},
		{"procedure", "CALL db.labels()"},
		{"load csv", "LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l"},
		{"comment", "MATCH (n:Person) // hi\nRETURN n"},
		{"two statements", "MATCH (n:Person) RETURN n; MATCH (m) RETURN m"},
		{"merge from scratch", "MATCH (p:Person) MERGE (m {name: 'Ada the spy'}) RETURN m.name"},
		{"optional match from scratch", "OPTIONAL MATCH (m) RETURN m.name"},
		{"union", "MATCH (n:Person) RETURN n.name AS x UNION MATCH (m) RETURN m.name AS x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: tt.query}, false)
			require.Error(t, err, "rows: %v", res.Rows)
			assert.NotContains(t, err.Error(), "spy")
			assert.NotContains(t, err.Error(), "launch")
		})
	}
}

func TestGraphWriteQuery(t *testing.T) {
	g := openGraph(t)
	ctx := context.Background()

	// A read query cannot write.
	_, err := g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: "CREATE (n:Person {name: 'Eve'})"}, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "AccessMode")

	res, err := g.Query(ctx, "pub", schemas.GraphQueryArgs{
		Query:  "MATCH (a:Person {name: 'Cy'}) CREATE (a)-[:KNOWS]->(n:Person {id: $id, name: $name}) RETURN n.name AS name",
		Params: map[string]any{"id": "dee", "name": "Dee"},
	}, true)
	require.NoError(t, err)
	assert.Equal(t, 1, res.NodesCreated)
	nb, err := g.Neighbours(ctx, "pub", schemas.GraphNeighboursArgs{ID: "cy"})
	require.NoError(t, err)
	var ids []string
	for _, n := range nb.Nodes {
		ids = append(ids, n.ID)
	}
	assert.Contains(t, ids, "dee", "the new node is in the namespace, with its id")

	// A node without a label would belong to no namespace.
	_, err = g.Query(ctx, "pub", schemas.GraphQueryArgs{Query: "CREATE (n {name: 'ghost'})"}, true)
	require.ErrorIs(t, err, ErrCypherRefused)
	res, err = g.Query(ctx, "sec", schemas.GraphQueryArgs{Query: "MATCH (n:Person) RETURN n.name AS name ORDER BY name"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"Ada the spy", "launch code 0000"}, names(res.Rows, "name"), "writes in pub never reach sec")
}
