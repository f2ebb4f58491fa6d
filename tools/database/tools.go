package database

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

// Open builds the database_tools family in the executor (package builtin
// maps the family's name to it). Its calls name the sandbox, whose grants
// the data service checks.
func Open(_ context.Context, env tools.Env) (tools.Opened, error) {
	c := &client{sandbox: env.Executor.SandboxID}
	if env.Request != nil {
		c.request = env.Request
	}
	return tools.Opened{Tools: toolsOf(c)}, nil
}

// toolsOf returns the family's tools over c.
func toolsOf(c *client) []tools.Tool {
	return []tools.Tool{
		listNamespaces(c),
		vectorSearch(c), vectorGet(c), vectorUpsert(c), vectorDelete(c),
		graphQuery(c), graphWrite(c), graphAddNode(c), graphAddRelationship(c), graphNeighbours(c), graphShortestPath(c),
	}
}

func result(v any, text string) (tools.Result, error) {
	ret, err := json.Marshal(v)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: text, Return: ret}, nil
}

type noArgs struct{}

func listNamespaces(c *client) tools.Tool {
	return tools.New(Family, "list_namespaces",
		"List the database namespaces this sandbox may use: for each, the database (qdrant for vector search, neo4j for the graph), "+
			"the namespace, and whether it may write (read_write) or only read.",
		func(ctx context.Context, _ noArgs) (tools.Result, error) {
			g, err := c.Grants(ctx)
			if err != nil {
				return tools.Result{}, err
			}
			return result(g, describe(g))
		})
}

type searchArgs struct {
	Namespace string         `json:"namespace" jsonschema:"minLength=1,description=The vector namespace (a qdrant grant) to search."`
	Query     string         `json:"query" jsonschema:"minLength=1,description=What to search for."`
	Mode      string         `json:"mode,omitempty" jsonschema:"enum=hybrid,enum=keyword,enum=vector,description=hybrid (dense vectors and BM25 keywords fused by Reciprocal Rank Fusion; the default)\\, keyword (BM25 only) or vector (dense only)."`
	TopK      int            `json:"top_k,omitempty" jsonschema:"minimum=1,maximum=100,description=How many documents to return. Default: 10."`
	Filter    map[string]any `json:"filter,omitempty" jsonschema:"description=Keep only documents whose metadata has each key equal to its value (strings\\, integers\\, booleans)."`
}

func formatDocs(docs []schemas.VectorDocument) string {
	if len(docs) == 0 {
		return "No documents."
	}
	var b strings.Builder
	for i, d := range docs {
		text := d.Text
		if len(text) > 300 {
			text = text[:300] + "…"
		}
		fmt.Fprintf(&b, "%d. [%s]", i+1, d.ID)
		if d.Score != 0 {
			fmt.Fprintf(&b, " score %.4f", d.Score)
		}
		if len(d.Metadata) > 0 {
			m, _ := json.Marshal(d.Metadata)
			fmt.Fprintf(&b, " %s", m)
		}
		fmt.Fprintf(&b, "\n   %s\n", strings.ReplaceAll(text, "\n", " "))
	}
	return b.String()
}

func vectorSearch(c *client) tools.Tool {
	return tools.New(Family, "vector_search",
		"Search a vector namespace for the documents most relevant to a query. Hybrid mode (the default) fuses dense-vector "+
			"similarity and BM25 keyword ranking with Reciprocal Rank Fusion; keyword mode uses BM25 only, vector mode dense vectors only. "+
			"Optional metadata filter and top_k.",
		func(ctx context.Context, a searchArgs) (tools.Result, error) {
			var out schemas.VectorResult
			err := c.call(ctx, schemas.DatabaseQdrant, a.Namespace, schemas.DatabaseRead, schemas.VectorSearch,
				schemas.VectorSearchArgs{Query: a.Query, Mode: a.Mode, TopK: a.TopK, Filter: a.Filter}, &out)
			if err != nil {
				return tools.Result{}, err
			}
			return result(out.Documents, formatDocs(out.Documents))
		})
}

type getArgs struct {
	Namespace string   `json:"namespace" jsonschema:"minLength=1,description=The vector namespace."`
	IDs       []string `json:"ids" jsonschema:"minItems=1,description=The document ids."`
}

func vectorGet(c *client) tools.Tool {
	return tools.New(Family, "vector_get",
		"Get documents of a vector namespace by id (those that exist).",
		func(ctx context.Context, a getArgs) (tools.Result, error) {
			var out schemas.VectorResult
			if err := c.call(ctx, schemas.DatabaseQdrant, a.Namespace, schemas.DatabaseRead, schemas.VectorGet, schemas.VectorGetArgs{IDs: a.IDs}, &out); err != nil {
				return tools.Result{}, err
			}
			return result(out.Documents, formatDocs(out.Documents))
		})
}

type document struct {
	ID       string         `json:"id" jsonschema:"minLength=1,description=The document id; writing the same id again replaces the document."`
	Text     string         `json:"text" jsonschema:"description=The text\\, embedded and indexed for BM25."`
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"description=Metadata to filter on."`
	Vector   []float32      `json:"vector,omitempty" jsonschema:"description=A dense vector of your own; otherwise the text is embedded."`
}

type upsertArgs struct {
	Namespace string     `json:"namespace" jsonschema:"minLength=1,description=The vector namespace (needs a read_write grant)."`
	Documents []document `json:"documents" jsonschema:"minItems=1"`
}

func vectorUpsert(c *client) tools.Tool {
	return tools.New(Family, "vector_upsert",
		"Insert or replace documents (id, text, metadata, optional vector) in a vector namespace this sandbox may write.",
		func(ctx context.Context, a upsertArgs) (tools.Result, error) {
			docs := make([]schemas.VectorDocument, len(a.Documents))
			for i, d := range a.Documents {
				docs[i] = schemas.VectorDocument{ID: d.ID, Text: d.Text, Metadata: d.Metadata, Vector: d.Vector}
			}
			var out schemas.VectorResult
			if err := c.call(ctx, schemas.DatabaseQdrant, a.Namespace, schemas.DatabaseWrite, schemas.VectorUpsert, schemas.VectorUpsertArgs{Documents: docs}, &out); err != nil {
				return tools.Result{}, err
			}
			return result(out, fmt.Sprintf("Upserted %d documents into %s.", out.Upserted, a.Namespace))
		})
}

type deleteArgs struct {
	Namespace string         `json:"namespace" jsonschema:"minLength=1,description=The vector namespace (needs a read_write grant)."`
	IDs       []string       `json:"ids,omitempty" jsonschema:"description=Delete these documents."`
	Filter    map[string]any `json:"filter,omitempty" jsonschema:"description=Or delete every document whose metadata matches (key equal to value)."`
}

func vectorDelete(c *client) tools.Tool {
	return tools.New(Family, "vector_delete",
		"Delete documents of a vector namespace this sandbox may write, by ids or by a metadata filter.",
		func(ctx context.Context, a deleteArgs) (tools.Result, error) {
			if len(a.IDs) == 0 && len(a.Filter) == 0 {
				return tools.Result{}, fmt.Errorf("%w: give ids or a filter", schemas.CodeInvalidArgs)
			}
			var out schemas.VectorResult
			if err := c.call(ctx, schemas.DatabaseQdrant, a.Namespace, schemas.DatabaseWrite, schemas.VectorDelete, schemas.VectorDeleteArgs{IDs: a.IDs, Filter: a.Filter}, &out); err != nil {
				return tools.Result{}, err
			}
			return result(out, fmt.Sprintf("Deleted from %s.", a.Namespace))
		})
}

type queryArgs struct {
	Namespace string         `json:"namespace" jsonschema:"minLength=1,description=The graph namespace (a neo4j grant)."`
	Query     string         `json:"query" jsonschema:"minLength=1,description=Cypher. Give every node you match from scratch a label; the namespace is added for you. No CALL\\, LOAD CSV\\, UNION or comments."`
	Params    map[string]any `json:"params,omitempty" jsonschema:"description=Query parameters\\, bound as $name."`
}

func formatGraph(r schemas.GraphResult) string {
	var b strings.Builder
	if len(r.Columns) > 0 {
		fmt.Fprintf(&b, "%d rows (%s)\n", len(r.Rows), strings.Join(r.Columns, ", "))
		for _, row := range r.Rows {
			j, _ := json.Marshal(row)
			fmt.Fprintf(&b, "%s\n", j)
		}
	}
	for _, n := range r.Nodes {
		j, _ := json.Marshal(n.Properties)
		fmt.Fprintf(&b, "node %s %v %s\n", n.ID, n.Labels, j)
	}
	for _, rel := range r.Relationships {
		fmt.Fprintf(&b, "(%s)-[:%s]->(%s)\n", rel.From, rel.Type, rel.To)
	}
	if r.NodesCreated+r.RelationshipsCreated+r.PropertiesSet+r.NodesDeleted > 0 {
		fmt.Fprintf(&b, "created %d nodes, %d relationships; set %d properties; deleted %d nodes\n", r.NodesCreated, r.RelationshipsCreated, r.PropertiesSet, r.NodesDeleted)
	}
	if b.Len() == 0 {
		return "No results."
	}
	return b.String()
}

func graphCall(ctx context.Context, c *client, ns string, access schemas.DatabaseOp, op string, args any) (tools.Result, error) {
	var out schemas.GraphResult
	if err := c.call(ctx, schemas.DatabaseNeo4j, ns, access, op, args, &out); err != nil {
		return tools.Result{}, err
	}
	return result(out, formatGraph(out))
}

func graphQuery(c *client) tools.Tool {
	return tools.New(Family, "graph_query",
		"Run a read-only Cypher query on a graph namespace, in a read transaction, with bound parameters. The query is confined to the namespace.",
		func(ctx context.Context, a queryArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseRead, schemas.GraphReadQuery, schemas.GraphQueryArgs{Query: a.Query, Params: a.Params})
		})
}

func graphWrite(c *client) tools.Tool {
	return tools.New(Family, "graph_write",
		"Run a Cypher query that writes, on a graph namespace this sandbox may write, with bound parameters. Nodes you create need a label.",
		func(ctx context.Context, a queryArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseWrite, schemas.GraphWriteQuery, schemas.GraphQueryArgs{Query: a.Query, Params: a.Params})
		})
}

type nodeArgs struct {
	Namespace  string         `json:"namespace" jsonschema:"minLength=1,description=The graph namespace (needs a read_write grant)."`
	ID         string         `json:"id" jsonschema:"minLength=1,description=The node's id\\, unique in the namespace; adding it again updates it."`
	Labels     []string       `json:"labels,omitempty" jsonschema:"description=Labels (letters\\, digits\\, _)."`
	Properties map[string]any `json:"properties,omitempty"`
}

func graphAddNode(c *client) tools.Tool {
	return tools.New(Family, "graph_add_node",
		"Add a node to a graph namespace (merged by id), with labels and properties.",
		func(ctx context.Context, a nodeArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseWrite, schemas.GraphAddNode, schemas.GraphNodeArgs{ID: a.ID, Labels: a.Labels, Properties: a.Properties})
		})
}

type relArgs struct {
	Namespace  string         `json:"namespace" jsonschema:"minLength=1,description=The graph namespace (needs a read_write grant)."`
	From       string         `json:"from" jsonschema:"minLength=1,description=The start node's id."`
	To         string         `json:"to" jsonschema:"minLength=1,description=The end node's id."`
	Type       string         `json:"type" jsonschema:"minLength=1,description=The relationship type (letters\\, digits\\, _)."`
	Properties map[string]any `json:"properties,omitempty"`
}

func graphAddRelationship(c *client) tools.Tool {
	return tools.New(Family, "graph_add_relationship",
		"Add a relationship between two nodes of a graph namespace (merged).",
		func(ctx context.Context, a relArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseWrite, schemas.GraphAddRelationship, schemas.GraphRelationshipArgs{From: a.From, To: a.To, Type: a.Type, Properties: a.Properties})
		})
}

type neighboursArgs struct {
	Namespace string   `json:"namespace" jsonschema:"minLength=1,description=The graph namespace."`
	ID        string   `json:"id" jsonschema:"minLength=1,description=The node's id."`
	Depth     int      `json:"depth,omitempty" jsonschema:"minimum=1,maximum=5,description=How many hops. Default: 1."`
	Types     []string `json:"types,omitempty" jsonschema:"description=Follow only these relationship types."`
	Limit     int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=1000,description=At most this many paths. Default: 100."`
}

func graphNeighbours(c *client) tools.Tool {
	return tools.New(Family, "graph_neighbours",
		"The nodes within depth hops of a node in a graph namespace, and the relationships between them.",
		func(ctx context.Context, a neighboursArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseRead, schemas.GraphNeighbours, schemas.GraphNeighboursArgs{ID: a.ID, Depth: a.Depth, Types: a.Types, Limit: a.Limit})
		})
}

type pathArgs struct {
	Namespace string   `json:"namespace" jsonschema:"minLength=1,description=The graph namespace."`
	From      string   `json:"from" jsonschema:"minLength=1"`
	To        string   `json:"to" jsonschema:"minLength=1"`
	MaxDepth  int      `json:"max_depth,omitempty" jsonschema:"minimum=1,maximum=10,description=The longest path considered. Default: 5."`
	Types     []string `json:"types,omitempty" jsonschema:"description=Follow only these relationship types."`
}

func graphShortestPath(c *client) tools.Tool {
	return tools.New(Family, "graph_shortest_path",
		"A shortest path between two nodes of a graph namespace (either direction).",
		func(ctx context.Context, a pathArgs) (tools.Result, error) {
			return graphCall(ctx, c, a.Namespace, schemas.DatabaseRead, schemas.GraphShortestPath, schemas.GraphPathArgs{From: a.From, To: a.To, MaxDepth: a.MaxDepth, Types: a.Types})
		})
}
