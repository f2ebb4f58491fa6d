package data

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/sandox/sandox/schemas"
)

// ErrGraphArgs means a graph operation's arguments are invalid.
var ErrGraphArgs = errors.New("invalid graph arguments")

// Graph runs graph operations on one group's Neo4j, each confined to a
// namespace: every node and relationship carries the property ns, every
// node the label NS_<ns> and SandoxNode, and (ns, id) is unique.
type Graph struct {
	driver neo4j.DriverWithContext
}

// OpenGraph connects to Neo4j at address (host:port) as user neo4j with
// password, waits until it answers, and makes sure the uniqueness
// constraint on (ns, id) exists.
func OpenGraph(ctx context.Context, address, password string) (*Graph, error) {
	d, err := neo4j.NewDriverWithContext("bolt://"+address, neo4j.BasicAuth("neo4j", password, ""))
	if err != nil {
		return nil, fmt.Errorf("neo4j driver: %w", err)
	}
	if err := d.VerifyConnectivity(ctx); err != nil {
		_ = d.Close(ctx)
		return nil, fmt.Errorf("neo4j at %s: %w", address, err)
	}
	g := &Graph{driver: d}
	_, err = neo4j.ExecuteQuery(ctx, d,
		"CREATE CONSTRAINT sandox_ns_id IF NOT EXISTS FOR (n:"+nodeLabel+") REQUIRE (n.ns, n.id) IS UNIQUE",
		nil, neo4j.EagerResultTransformer)
	if err != nil {
		_ = d.Close(ctx)
		return nil, fmt.Errorf("neo4j constraint: %w", err)
	}
	return g, nil
}

// Close closes the driver.
func (g *Graph) Close(ctx context.Context) error { return g.driver.Close(ctx) }

var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// checkName checks a label or relationship type given to a template.
func checkName(kind, name string) error {
	if !namePattern.MatchString(name) || strings.HasPrefix(strings.ToUpper(name), "NS_") || strings.EqualFold(name, nodeLabel) {
		return fmt.Errorf("%w: %s %q: want letters, digits and '_', starting with a letter, not NS_… or %s", ErrGraphArgs, kind, name, nodeLabel)
	}
	return nil
}

// checkProps refuses the ns property, which is the service's.
func checkProps(props map[string]any) error {
	if _, ok := props["ns"]; ok {
		return fmt.Errorf("%w: the ns property is the service's own", ErrGraphArgs)
	}
	return nil
}

// Query runs a free-form query in namespace ns: confined (confine), its
// plan checked (checkPlan), in a read-access-mode transaction unless
// write. A write then stamps the namespace on what it created, and is
// rolled back if it created a node without a label.
func (g *Graph) Query(ctx context.Context, ns string, args schemas.GraphQueryArgs, write bool) (schemas.GraphResult, error) {
	q, err := confine(args.Query, ns)
	if err != nil {
		return schemas.GraphResult{}, err
	}
	mode := neo4j.AccessModeRead
	if write {
		mode = neo4j.AccessModeWrite
	}
	s := g.driver.NewSession(ctx, neo4j.SessionConfig{AccessMode: mode})
	defer s.Close(ctx)
	work := func(tx neo4j.ManagedTransaction) (any, error) {
		plan, err := tx.Run(ctx, "EXPLAIN "+q, args.Params)
		if err != nil {
			return nil, err
		}
		sum, err := plan.Consume(ctx)
		if err != nil {
			return nil, err
		}
		tree, err := planOf(sum.Plan())
		if err != nil {
			return nil, err
		}
		if err := checkPlan(tree, ns, nil); err != nil {
			return nil, err
		}
		res, err := tx.Run(ctx, q, args.Params)
		if err != nil {
			return nil, err
		}
		out, err := collect(ctx, res)
		if err != nil {
			return nil, err
		}
		sum, err = res.Consume(ctx)
		if err != nil {
			return nil, err
		}
		c := sum.Counters()
		out.NodesCreated, out.RelationshipsCreated = c.NodesCreated(), c.RelationshipsCreated()
		out.PropertiesSet, out.NodesDeleted = c.PropertiesSet(), c.NodesDeleted()
		if write && (c.NodesCreated() > 0 || c.RelationshipsCreated() > 0 || c.PropertiesSet() > 0 || c.LabelsRemoved() > 0) {
			if err := stamp(ctx, tx, ns, c.NodesCreated()); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var r any
	if write {
		r, err = s.ExecuteWrite(ctx, work)
	} else {
		r, err = s.ExecuteRead(ctx, work)
	}
	if err != nil {
		return schemas.GraphResult{}, err
	}
	return r.(schemas.GraphResult), nil
}

// stamp gives the nodes and relationships a write left without a
// namespace (created, or whose properties were replaced) their ns, the
// SandoxNode label and an id, and fails when fewer nodes than created
// carry the namespace label: a node created without a label would belong
// to no namespace.
func stamp(ctx context.Context, tx neo4j.ManagedTransaction, ns string, created int) error {
	res, err := tx.Run(ctx, "MATCH (n:"+nsLabel(ns)+") WHERE n.ns IS NULL "+
		"SET n.ns = $ns, n:"+nodeLabel+", n.id = coalesce(toString(n.id), randomUUID()) RETURN count(n) AS n", map[string]any{"ns": ns})
	if err != nil {
		return err
	}
	rec, err := res.Single(ctx)
	if err != nil {
		return err
	}
	if n, _ := rec.Get("n"); int(n.(int64)) < created {
		return fmt.Errorf("%w: every node a write creates needs a label, (n:Label …)", ErrCypherRefused)
	}
	_, err = tx.Run(ctx, "MATCH (:"+nsLabel(ns)+")-[r]->() WHERE r.ns IS NULL SET r.ns = $ns", map[string]any{"ns": ns})
	return err
}

// AddNode merges the node with id into the namespace, adding labels and
// setting properties.
func (g *Graph) AddNode(ctx context.Context, ns string, a schemas.GraphNodeArgs) (schemas.GraphResult, error) {
	if a.ID == "" {
		return schemas.GraphResult{}, fmt.Errorf("%w: id is required", ErrGraphArgs)
	}
	labels := ""
	for _, l := range a.Labels {
		if err := checkName("label", l); err != nil {
			return schemas.GraphResult{}, err
		}
		labels += ":" + l
	}
	if err := checkProps(a.Properties); err != nil {
		return schemas.GraphResult{}, err
	}
	q := "MERGE (n:" + nodeLabel + " {ns: $ns, id: $id}) SET n:" + nsLabel(ns) + labels + " SET n += $props RETURN n"
	return g.write(ctx, q, map[string]any{"ns": ns, "id": a.ID, "props": orEmpty(a.Properties)})
}

// AddRelationship merges a relationship between two nodes of the
// namespace.
func (g *Graph) AddRelationship(ctx context.Context, ns string, a schemas.GraphRelationshipArgs) (schemas.GraphResult, error) {
	if a.From == "" || a.To == "" {
		return schemas.GraphResult{}, fmt.Errorf("%w: from and to are required", ErrGraphArgs)
	}
	if err := checkName("relationship type", a.Type); err != nil {
		return schemas.GraphResult{}, err
	}
	if err := checkProps(a.Properties); err != nil {
		return schemas.GraphResult{}, err
	}
	q := "MATCH (a:" + nodeLabel + " {ns: $ns, id: $from}), (b:" + nodeLabel + " {ns: $ns, id: $to}) " +
		"MERGE (a)-[r:" + a.Type + " {ns: $ns}]->(b) SET r += $props RETURN a, r, b"
	res, err := g.write(ctx, q, map[string]any{"ns": ns, "from": a.From, "to": a.To, "props": orEmpty(a.Properties)})
	if err == nil && len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: no node %q or %q in namespace %s", ErrGraphArgs, a.From, a.To, ns)
	}
	return res, err
}

// Neighbours returns the nodes up to depth hops from the node with id,
// and the relationships between them, in the namespace.
func (g *Graph) Neighbours(ctx context.Context, ns string, a schemas.GraphNeighboursArgs) (schemas.GraphResult, error) {
	depth := a.Depth
	if depth == 0 {
		depth = 1
	}
	if depth < 1 || depth > 5 {
		return schemas.GraphResult{}, fmt.Errorf("%w: depth %d: want 1 to 5", ErrGraphArgs, depth)
	}
	limit := a.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	types, err := typeList(a.Types)
	if err != nil {
		return schemas.GraphResult{}, err
	}
	q := fmt.Sprintf("MATCH p = (a:%s {ns: $ns, id: $id})-[%s*1..%d]-(b:%s) "+
		"WHERE all(x IN nodes(p) WHERE x.ns = $ns) "+
		"WITH p LIMIT $limit RETURN nodes(p) AS nodes, relationships(p) AS rels", nodeLabel, types, depth, nodeLabel)
	return g.paths(ctx, q, map[string]any{"ns": ns, "id": a.ID, "limit": limit}, a.ID)
}

// ShortestPath returns a shortest path between two nodes of the namespace.
func (g *Graph) ShortestPath(ctx context.Context, ns string, a schemas.GraphPathArgs) (schemas.GraphResult, error) {
	max := a.MaxDepth
	if max == 0 {
		max = 5
	}
	if max < 1 || max > 10 {
		return schemas.GraphResult{}, fmt.Errorf("%w: max_depth %d: want 1 to 10", ErrGraphArgs, max)
	}
	types, err := typeList(a.Types)
	if err != nil {
		return schemas.GraphResult{}, err
	}
	q := fmt.Sprintf("MATCH (a:%s {ns: $ns, id: $from}), (b:%s {ns: $ns, id: $to}) "+
		"MATCH p = shortestPath((a)-[%s*..%d]-(b)) WHERE all(x IN nodes(p) WHERE x.ns = $ns) "+
		"RETURN nodes(p) AS nodes, relationships(p) AS rels", nodeLabel, nodeLabel, types, max)
	return g.paths(ctx, q, map[string]any{"ns": ns, "from": a.From, "to": a.To}, "")
}

func typeList(types []string) (string, error) {
	for _, t := range types {
		if err := checkName("relationship type", t); err != nil {
			return "", err
		}
	}
	if len(types) == 0 {
		return "", nil
	}
	return ":" + strings.Join(types, "|"), nil
}

func (g *Graph) write(ctx context.Context, q string, params map[string]any) (schemas.GraphResult, error) {
	res, err := neo4j.ExecuteQuery(ctx, g.driver, q, params, neo4j.EagerResultTransformer)
	if err != nil {
		return schemas.GraphResult{}, err
	}
	out := schemas.GraphResult{Columns: res.Keys}
	for _, r := range res.Records {
		out.Rows = append(out.Rows, rowOf(r))
	}
	c := res.Summary.Counters()
	out.NodesCreated, out.RelationshipsCreated, out.PropertiesSet = c.NodesCreated(), c.RelationshipsCreated(), c.PropertiesSet()
	return out, nil
}

// paths runs a read query returning nodes and rels columns, and gathers
// their distinct nodes (but skip) and relationships.
func (g *Graph) paths(ctx context.Context, q string, params map[string]any, skip string) (schemas.GraphResult, error) {
	res, err := neo4j.ExecuteQuery(ctx, g.driver, q, params, neo4j.EagerResultTransformer,
		neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return schemas.GraphResult{}, err
	}
	var out schemas.GraphResult
	seenN, seenR := map[string]bool{}, map[string]bool{}
	for _, r := range res.Records {
		ns, _ := r.Get("nodes")
		rs, _ := r.Get("rels")
		byElem := map[string]string{}
		for _, v := range ns.([]any) {
			n := v.(dbtype.Node)
			gn := nodeOf(n)
			byElem[n.ElementId] = gn.ID
			if !seenN[gn.ID] && gn.ID != skip {
				seenN[gn.ID] = true
				out.Nodes = append(out.Nodes, gn)
			}
		}
		for _, v := range rs.([]any) {
			rel := v.(dbtype.Relationship)
			if seenR[rel.ElementId] {
				continue
			}
			seenR[rel.ElementId] = true
			out.Relationships = append(out.Relationships, schemas.GraphRelationship{
				Type: rel.Type, From: byElem[rel.StartElementId], To: byElem[rel.EndElementId], Properties: props(rel.Props),
			})
		}
	}
	return out, nil
}

func collect(ctx context.Context, res neo4j.ResultWithContext) (schemas.GraphResult, error) {
	keys, err := res.Keys()
	if err != nil {
		return schemas.GraphResult{}, err
	}
	out := schemas.GraphResult{Columns: keys}
	for res.Next(ctx) {
		out.Rows = append(out.Rows, rowOf(res.Record()))
		if len(out.Rows) > 1000 {
			return out, fmt.Errorf("%w: more than 1000 rows; add a LIMIT", ErrGraphArgs)
		}
	}
	return out, res.Err()
}

func rowOf(r *neo4j.Record) map[string]any {
	row := make(map[string]any, len(r.Keys))
	for i, k := range r.Keys {
		row[k] = value(r.Values[i])
	}
	return row
}

// value turns a driver value into JSON-friendly data, without the
// service's bookkeeping (element ids, ns, its labels).
func value(v any) any {
	switch x := v.(type) {
	case dbtype.Node:
		return nodeOf(x)
	case dbtype.Relationship:
		return schemas.GraphRelationship{Type: x.Type, Properties: props(x.Props)}
	case dbtype.Path:
		var p struct {
			Nodes         []schemas.GraphNode         `json:"nodes"`
			Relationships []schemas.GraphRelationship `json:"relationships"`
		}
		ids := map[string]string{}
		for _, n := range x.Nodes {
			gn := nodeOf(n)
			ids[n.ElementId] = gn.ID
			p.Nodes = append(p.Nodes, gn)
		}
		for _, r := range x.Relationships {
			p.Relationships = append(p.Relationships, schemas.GraphRelationship{Type: r.Type, From: ids[r.StartElementId], To: ids[r.EndElementId], Properties: props(r.Props)})
		}
		return p
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = value(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = value(e)
		}
		return out
	default:
		return v
	}
}

func nodeOf(n dbtype.Node) schemas.GraphNode {
	id, _ := n.Props["id"].(string)
	var labels []string
	for _, l := range n.Labels {
		if l != nodeLabel && !strings.HasPrefix(l, "NS_") {
			labels = append(labels, l)
		}
	}
	slices.Sort(labels)
	return schemas.GraphNode{ID: id, Labels: labels, Properties: props(n.Props)}
}

func props(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, v := range p {
		if k != "ns" && k != "id" {
			out[k] = value(v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}
