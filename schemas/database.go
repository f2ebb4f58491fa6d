package schemas

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The shared databases a group may have.
const (
	DatabaseQdrant = "qdrant"
	DatabaseNeo4j  = "neo4j"
)

// DatabaseOp is the access a database request needs: read or write.
type DatabaseOp string

// The database access kinds.
const (
	DatabaseRead  DatabaseOp = "read"
	DatabaseWrite DatabaseOp = "write"
)

// DatabaseSubjectPrefix prefixes every database request:
// sandox.db.<sandbox>.<database>.<namespace>.<read|write>, and
// sandox.db.<sandbox>.list. The sandbox's NATS identity may publish only
// the subjects of its own grants (DatabaseGrantSubjects), so the data
// service knows the caller from the subject, never from the payload.
const DatabaseSubjectPrefix = "sandox.db."

// DataQueue is the queue group of the data service's subscriptions.
const DataQueue = "data"

// DatabaseSubject is the subject of a request by sandboxID on one
// namespace of one database needing op.
func DatabaseSubject(sandboxID, database, namespace string, op DatabaseOp) string {
	return DatabaseSubjectPrefix + sandboxID + "." + database + "." + namespace + "." + string(op)
}

// DatabaseListSubject asks the data service for the grants of sandboxID;
// the reply's Grants are set.
func DatabaseListSubject(sandboxID string) string {
	return DatabaseSubjectPrefix + sandboxID + ".list"
}

// DatabaseGrantSubjects are the subjects a sandbox with grants may
// publish: for each namespace it may read, the .read subject, and for
// each it may write, the .write subject too; and its list subject.
func DatabaseGrantSubjects(sandboxID string, grants DatabaseAccess) []string {
	out := []string{DatabaseListSubject(sandboxID)}
	for _, g := range grants {
		if g.Read || g.Write {
			out = append(out, DatabaseSubject(sandboxID, g.Database, g.Namespace, DatabaseRead))
		}
		if g.Write {
			out = append(out, DatabaseSubject(sandboxID, g.Database, g.Namespace, DatabaseWrite))
		}
	}
	return out
}

// DatabaseCall is a request parsed from its subject.
type DatabaseCall struct {
	SandboxID string
	Database  string
	Namespace string
	// Op is empty for a list request.
	Op DatabaseOp
}

// ParseDatabaseSubject reads a database request's subject.
func ParseDatabaseSubject(subject string) (DatabaseCall, error) {
	rest, ok := strings.CutPrefix(subject, DatabaseSubjectPrefix)
	if !ok {
		return DatabaseCall{}, Errorf(CodeBadRequest, "subject %q is not a database request", subject)
	}
	parts := strings.Split(rest, ".")
	switch {
	case len(parts) == 2 && parts[1] == "list":
		return DatabaseCall{SandboxID: parts[0]}, nil
	case len(parts) == 4 && (parts[3] == string(DatabaseRead) || parts[3] == string(DatabaseWrite)):
		return DatabaseCall{SandboxID: parts[0], Database: parts[1], Namespace: parts[2], Op: DatabaseOp(parts[3])}, nil
	}
	return DatabaseCall{}, Errorf(CodeBadRequest, "subject %q: want %s<sandbox>.<database>.<namespace>.<read|write>", subject, DatabaseSubjectPrefix)
}

// Allows reports whether the grants allow op on the namespace of database.
func (a DatabaseAccess) Allows(database, namespace string, op DatabaseOp) bool {
	for _, g := range a {
		if g.Database != database || g.Namespace != namespace {
			continue
		}
		if g.Write || (op == DatabaseRead && g.Read) {
			return true
		}
	}
	return false
}

var namespacePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`) })

// Validate checks every grant: a known database and a namespace that is a
// single subject token (letters, digits, '-', '_').
func (a DatabaseAccess) Validate() error {
	for _, g := range a {
		if g.Database != DatabaseQdrant && g.Database != DatabaseNeo4j {
			return Errorf(CodeBadRequest, "database %q: want %s or %s", g.Database, DatabaseQdrant, DatabaseNeo4j)
		}
		if !namespacePattern().MatchString(g.Namespace) {
			return Errorf(CodeBadRequest, "namespace %q of %s: want 1-63 letters, digits, '-' or '_', starting with a letter or digit", g.Namespace, g.Database)
		}
	}
	return nil
}

// DatabaseRequest is a database call: the operation and its arguments,
// as the database tools take them. Which database, namespace and sandbox
// it concerns comes from the subject, never from here.
type DatabaseRequest struct {
	// Op is the operation: for qdrant search, get, upsert, delete; for
	// neo4j read_query, write_query, add_node, add_relationship,
	// neighbours, shortest_path.
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// DatabaseReply is the data service's answer: the operation's result, or
// an error (access_denied when the grant does not allow the call).
type DatabaseReply struct {
	Result json.RawMessage `json:"result,omitempty"`
	// Grants answers a list request.
	Grants DatabaseAccess `json:"grants,omitempty"`
	Error  *Error         `json:"error,omitempty"`
}

// DatabaseEndpoint is where the data service reaches one database of a
// group, recorded in the group's status.
type DatabaseEndpoint struct {
	Database string `json:"database"`
	// Address is host:port on the control plane's side of the group's
	// database network.
	Address   string `json:"address"`
	Container string `json:"container,omitempty"`
	Volume    string `json:"volume,omitempty"`
}

// String names the endpoint for logs.
func (e DatabaseEndpoint) String() string { return fmt.Sprintf("%s at %s", e.Database, e.Address) }
