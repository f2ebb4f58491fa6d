// Package groupdb runs the database containers of groups (Neo4j, Qdrant):
// it starts them on their own network with a volume each and waits until
// they answer, asks the data service to populate them, starts one that
// stopped by itself again (within a limit), removes them when their group
// ends, and removes those whose group no longer exists (Reconcile).
package groupdb
