// Package database is the database_tools family: thin tools that turn a
// call into a request on the subject of the sandbox's grant
// (schemas.DatabaseSubject) and the data service's reply into an
// observation. The sandbox holds no database client, credential or route;
// the bus and the data service enforce the grants (docs/databases.md).
package database
