package data

import (
	"fmt"
	"reflect"
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
// label, or a label scan whose rows the very next operator filters on the
// namespace label. Relationships never cross namespaces (every write is
// confined the same way), so a traversal from a namespace node stays in
// the namespace. Anything else that starts a plan is refused: all-node
// scans, id and index seeks, relationship scans, counts from the count
// store (they count every namespace), procedure calls and CSV loads.
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
			if !hasLabel(labels, label) && !(parent != nil && parent.Op == "Filter" && hasConjunct(parent.Details, variable+":"+label)) {
				return fmt.Errorf("%w: the query finds nodes by %q, outside namespace %s", ErrCypherRefused, n.Details, ns)
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

// hasConjunct reports whether a filter's predicate is a conjunction with
// the term want.
func hasConjunct(predicate, want string) bool {
	for _, c := range strings.Split(predicate, " AND ") {
		if strings.TrimSpace(c) == want {
			return true
		}
	}
	return false
}
