package data

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// planNode is one operator of a query plan.
type planNode struct {
	Op       string
	Details  string
	Children []planNode
}

// planOf copies the driver's plan tree. It reads the driver's own plan
// value by reflection because Plan.Children in neo4j-go-driver v5.28.4
// returns every child as the last one (a loop variable taken by address
// in a module built with Go 1.18 semantics), which would hide operators
// from checkPlan. An unexpected shape is an error: the check fails closed.
func planOf(p neo4j.Plan) (planNode, error) {
	v := reflect.ValueOf(p)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || v.Elem().NumField() != 1 {
		return planNode{}, fmt.Errorf("%w: unexpected plan shape %T", ErrCypherRefused, p)
	}
	inner := v.Elem().Field(0)
	if inner.Kind() != reflect.Pointer || inner.IsNil() {
		return planNode{}, fmt.Errorf("%w: no plan", ErrCypherRefused)
	}
	return planValue(inner.Elem())
}

func planValue(v reflect.Value) (planNode, error) {
	op, args, children := v.FieldByName("Operator"), v.FieldByName("Arguments"), v.FieldByName("Children")
	if op.Kind() != reflect.String || args.Kind() != reflect.Map || children.Kind() != reflect.Slice {
		return planNode{}, fmt.Errorf("%w: unexpected plan fields", ErrCypherRefused)
	}
	n := planNode{Op: op.String()}
	if i := strings.IndexByte(n.Op, '@'); i >= 0 {
		n.Op = n.Op[:i]
	}
	if d := args.MapIndex(reflect.ValueOf("Details")); d.IsValid() {
		if d.Kind() == reflect.Interface {
			d = d.Elem()
		}
		if d.Kind() == reflect.String {
			n.Details = d.String()
		}
	}
	for i := 0; i < children.Len(); i++ {
		c, err := planValue(children.Index(i))
		if err != nil {
			return planNode{}, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// checkPlan walks the plan Neo4j made for a confined query (EXPLAIN, not
// run) and refuses it unless every operator that finds nodes from
// scratch finds only nodes of the namespace: a scan of the namespace
// label, or a label or relationship-type scan whose rows the very next
// operator filters on the namespace label (of the node, or of an end of
// the relationship). Relationships never cross namespaces (every write is
// confined the same way), so a traversal from a namespace node stays in
// the namespace. Anything else that starts a plan is refused: all-node
// scans, id and index seeks, unfiltered relationship scans, counts from
// the count store (they count every namespace), procedure calls and CSV
// loads.
func checkPlan(n planNode, ns string, parent *planNode) error {
	label := "NS_" + ns
	switch n.Op {
	case "ProcedureCall", "LoadCSV", "NodeCountFromCountStore", "RelationshipCountFromCountStore":
		return fmt.Errorf("%w: %s is not allowed", ErrCypherRefused, n.Op)
	}
	if len(n.Children) == 0 {
		switch n.Op {
		case "Argument", "EmptyRow", "Create":
		case "NodeByLabelScan", "IntersectionNodeByLabelsScan":
			variable, labels, _ := strings.Cut(n.Details, ":")
			if !hasLabel(labels, label) && !filtered(parent, variable, label) {
				return fmt.Errorf("%w: the query finds nodes by %q, outside namespace %s", ErrCypherRefused, n.Details, ns)
			}
		case "DirectedRelationshipTypeScan", "UndirectedRelationshipTypeScan":
			// Every relationship of a type, in every namespace: safe only
			// when the next operator keeps those with an end in this
			// namespace (relationships never cross namespaces).
			m := relScan.FindStringSubmatch(n.Details)
			if m == nil || !(filtered(parent, m[1], label) || filtered(parent, m[2], label)) {
				return fmt.Errorf("%w: the query finds relationships by %q, outside namespace %s; give their nodes a label", ErrCypherRefused, n.Details, ns)
			}
		default:
			return fmt.Errorf("%w: the query starts with %s, which can reach other namespaces; give every node you match from scratch a label", ErrCypherRefused, n.Op)
		}
	}
	for _, c := range n.Children {
		if err := checkPlan(c, ns, &n); err != nil {
			return err
		}
	}
	return nil
}

// hasLabel reports whether a scan's labels ("A", "A&B") include label.
func hasLabel(labels, label string) bool {
	for _, l := range strings.Split(labels, "&") {
		if strings.Trim(strings.TrimSpace(l), "`") == label {
			return true
		}
	}
	return false
}

// relScan reads a relationship scan's details, "(a)-[r:T]->(b)" or
// "(a)-[r:T]-(b)": the two end variables.
var relScan = regexp.MustCompile(`^\(([A-Za-z_][A-Za-z0-9_]*)\)<?-\[[^\]]*\]->?\(([A-Za-z_][A-Za-z0-9_]*)\)$`)

// filtered reports whether parent is a Filter whose predicate requires
// variable to carry label.
func filtered(parent *planNode, variable, label string) bool {
	return parent != nil && parent.Op == "Filter" && hasConjunct(parent.Details, variable+":"+label)
}

// hasConjunct reports whether a filter's predicate is a conjunction with
// the term want. A predicate wrapped whole in parentheses is unwrapped
// first; a term inside any other parentheses does not count.
func hasConjunct(predicate, want string) bool {
	predicate = strings.TrimSpace(predicate)
	if strings.HasPrefix(predicate, "(") && closes(predicate) == len(predicate)-1 {
		predicate = predicate[1 : len(predicate)-1]
	}
	for _, c := range splitTop(predicate, " AND ") {
		if strings.TrimSpace(c) == want {
			return true
		}
	}
	return false
}

// closes returns the index of the parenthesis closing the one at s[0].
func closes(s string) int {
	depth := 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s at sep outside parentheses and brackets.
func splitTop(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		}
		if depth == 0 && strings.HasPrefix(s[i:], sep) {
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}
