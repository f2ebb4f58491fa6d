package schemas

// The operations of a DatabaseRequest, and their arguments (its Args).
// The database tools send them; the data service runs them.
const (
	// Graph (neo4j).
	GraphReadQuery       = "read_query"
	GraphWriteQuery      = "write_query"
	GraphAddNode         = "add_node"
	GraphAddRelationship = "add_relationship"
	GraphNeighbours      = "neighbours"
	GraphShortestPath    = "shortest_path"
	// Vector (qdrant).
	VectorSearch = "search"
	VectorGet    = "get"
	VectorUpsert = "upsert"
	VectorDelete = "delete"
)

// GraphQueryArgs are the arguments of read_query and write_query.
type GraphQueryArgs struct {
	// Query is Cypher; the service confines it to the namespace.
	Query string `json:"query"`
	// Params are bound as query parameters ($name), never spliced in.
	Params map[string]any `json:"params,omitempty"`
}

// GraphNodeArgs are the arguments of add_node: a node created, or merged
// by id, in the namespace.
type GraphNodeArgs struct {
	ID         string         `json:"id"`
	Labels     []string       `json:"labels,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
}

// GraphRelationshipArgs are the arguments of add_relationship: a
// relationship of Type from the node with id From to the node with id To,
// both in the namespace, merged.
type GraphRelationshipArgs struct {
	From       string         `json:"from"`
	To         string         `json:"to"`
	Type       string         `json:"type"`
	Properties map[string]any `json:"properties,omitempty"`
}

// GraphNeighboursArgs are the arguments of neighbours.
type GraphNeighboursArgs struct {
	ID string `json:"id"`
	// Depth is how many hops, 1 to 5 (1 when zero).
	Depth int `json:"depth,omitempty"`
	// Types, when set, are the relationship types to follow.
	Types []string `json:"types,omitempty"`
	// Limit caps the nodes returned (100 when zero).
	Limit int `json:"limit,omitempty"`
}

// GraphPathArgs are the arguments of shortest_path.
type GraphPathArgs struct {
	From string `json:"from"`
	To   string `json:"to"`
	// MaxDepth is the longest path considered, 1 to 10 (5 when zero).
	MaxDepth int      `json:"max_depth,omitempty"`
	Types    []string `json:"types,omitempty"`
}

// GraphNode is a node in a graph result: its id, its labels (without the
// service's own) and its properties (without ns).
type GraphNode struct {
	ID         string         `json:"id"`
	Labels     []string       `json:"labels,omitempty"`
	Properties map[string]any `json:"properties,omitempty"`
}

// GraphRelationship is a relationship in a graph result.
type GraphRelationship struct {
	Type       string         `json:"type"`
	From       string         `json:"from"`
	To         string         `json:"to"`
	Properties map[string]any `json:"properties,omitempty"`
}

// GraphResult is the result of a graph operation: rows of named values
// (queries), or nodes and relationships (neighbours, paths), and what a
// write changed.
type GraphResult struct {
	Columns       []string            `json:"columns,omitempty"`
	Rows          []map[string]any    `json:"rows,omitempty"`
	Nodes         []GraphNode         `json:"nodes,omitempty"`
	Relationships []GraphRelationship `json:"relationships,omitempty"`
	// NodesCreated and the others count what a write changed.
	NodesCreated         int `json:"nodes_created,omitempty"`
	RelationshipsCreated int `json:"relationships_created,omitempty"`
	PropertiesSet        int `json:"properties_set,omitempty"`
	NodesDeleted         int `json:"nodes_deleted,omitempty"`
}

// VectorDocument is one document of a vector namespace.
type VectorDocument struct {
	// ID is the document's id; the point id is derived from it, so the
	// same id always names the same point.
	ID       string         `json:"id"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Vector, when set, is the dense vector; otherwise the service embeds
	// Text.
	Vector []float32 `json:"vector,omitempty"`
	// Score is set in search results.
	Score float32 `json:"score,omitempty"`
}

// The search modes.
const (
	SearchHybrid  = "hybrid"
	SearchKeyword = "keyword"
	SearchVector  = "vector"
)

// VectorSearchArgs are the arguments of search.
type VectorSearchArgs struct {
	Query string `json:"query"`
	// Mode is hybrid (dense + BM25 fused by RRF; the default), keyword
	// (BM25 only) or vector (dense only).
	Mode string `json:"mode,omitempty" jsonschema:"enum=hybrid,enum=keyword,enum=vector"`
	// TopK is how many documents to return (10 when zero, at most 100).
	TopK int `json:"top_k,omitempty"`
	// Filter keeps documents whose metadata has each key equal to its value.
	Filter map[string]any `json:"filter,omitempty"`
}

// VectorGetArgs are the arguments of get.
type VectorGetArgs struct {
	IDs []string `json:"ids"`
}

// VectorUpsertArgs are the arguments of upsert.
type VectorUpsertArgs struct {
	Documents []VectorDocument `json:"documents"`
}

// VectorDeleteArgs are the arguments of delete: by ids, or by a metadata
// filter (every key equal to its value), not both empty.
type VectorDeleteArgs struct {
	IDs    []string       `json:"ids,omitempty"`
	Filter map[string]any `json:"filter,omitempty"`
}

// VectorResult is the result of a vector operation.
type VectorResult struct {
	Documents []VectorDocument `json:"documents,omitempty"`
	// Upserted and Deleted count what a write changed (Deleted only when
	// deleting by ids).
	Upserted int `json:"upserted,omitempty"`
	Deleted  int `json:"deleted,omitempty"`
}
