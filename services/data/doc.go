// Package data is the control plane's data service: it holds the clients
// and credentials of the groups' shared databases (Neo4j through
// neo4j-go-driver, Qdrant through qdrant/go-client) and answers the
// sandboxes' database requests on schemas.DatabaseSubject. A sandbox's NATS
// identity may publish only the subjects of its grants; the service checks
// the grant again from the sandbox id in the subject and the sandbox's
// recorded grants (schemas.SandboxStatus.Databases), never from the
// payload. docs/databases.md describes the access model and the threat.
package data
