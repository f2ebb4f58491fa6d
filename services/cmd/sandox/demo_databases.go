package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/data/populate/dummy"
)

// demoPopulation loads the demo data set (two vector namespaces and a
// knowledge graph); the data service reads the files from populateDir,
// where the demo writes them.
const demoPopulation = `chunk: {size: 400, overlap: 40}
databases:
  qdrant:
    handbook:
      - source: demo/handbook.jsonl
      - source: demo/incidents.md
    research:
      - source: demo/research.csv
  neo4j:
    kg:
      - {source: demo/kg-nodes.csv, format: nodes}
      - {source: demo/kg-rels.csv, format: relationships}
      - source: demo/kg.cypher
`

// databaseGroup is the demo's group with shared databases and its sandbox.
type databaseGroup struct {
	group   *sdk.SandboxGroup
	sandbox *sdk.Sandbox
}

// startDatabaseGroup starts a group with a shared Neo4j and Qdrant
// populated from the demo data set, and a sandbox that may read namespace
// kg and write namespace scratch. The databases' start and population are
// the demo's second longest wait, so it runs in the background from the
// start. It blocks until the sandbox runs; on error it ends what it
// started.
func startDatabaseGroup(ctx context.Context, url, suffix string) (databaseGroup, error) {
	if _, err := dummy.Write(filepath.Join(populateDir, "demo")); err != nil {
		return databaseGroup{}, fmt.Errorf("write the demo data set into %s (run as root, after sandox up): %w", populateDir, err)
	}
	cfgFile, err := os.CreateTemp("", "sandox-demo-population-*.yaml")
	if err != nil {
		return databaseGroup{}, err
	}
	defer os.Remove(cfgFile.Name())
	if _, err := cfgFile.WriteString(demoPopulation); err != nil {
		return databaseGroup{}, err
	}
	cfgFile.Close()
	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{
		ID:    "demo-db-" + suffix,
		Tools: []string{"database_tools"},
		DatabaseAccess: schemas.DatabaseAccess{
			{Database: schemas.DatabaseNeo4j, Namespace: "kg", Read: true},
			{Database: schemas.DatabaseQdrant, Namespace: "handbook", Read: true},
			{Database: schemas.DatabaseNeo4j, Namespace: "scratch", Read: true, Write: true},
		},
		PopulationConfig: cfgFile.Name(),
	}, sdk.WithURL(url), showProgress(os.Stderr))
	if err != nil {
		return databaseGroup{}, err
	}
	if err := group.Start(ctx); err != nil {
		return databaseGroup{}, errors.Join(err, group.End(context.WithoutCancel(ctx)))
	}
	sandbox, err := group.CreateSandbox(ctx, "demo-db-sb-"+suffix, sdk.SandboxOptions{})
	if err == nil {
		err = sandbox.Start(ctx)
	}
	if err != nil {
		return databaseGroup{}, errors.Join(err, group.End(context.WithoutCancel(ctx)))
	}
	return databaseGroup{group: group, sandbox: sandbox}, nil
}

// endDatabaseGroup ends the database group, once it has started.
func endDatabaseGroup(ctx context.Context, db *background[databaseGroup]) {
	g, err := db.wait(context.WithoutCancel(ctx))
	if err != nil {
		return // startDatabaseGroup ended what it had started
	}
	step("end the database group (its databases and their volumes go with it)")
	if err := g.group.End(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintln(os.Stderr, "end group:", err)
	}
}

// demoDatabases shows database calls from the sandbox of the database
// group: requests on the bus, checked twice.
func demoDatabases(ctx context.Context, db *background[databaseGroup]) error {
	step("a group with shared databases (Neo4j, Qdrant), populated from the demo data set")
	g, err := db.wait(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("group %s running with its databases populated (started in the background %s after the demo began)\n", g.group.ID(), db.took.Round(time.Millisecond))
	sandbox := g.sandbox
	step("database calls: search handbook, read kg, write scratch; writing kg, crafted Cypher and research are denied")
	act := func(tool, args string) schemas.Action {
		return schemas.Action{Tool: "database_tools." + tool, Args: json.RawMessage(args)}
	}
	obs, err := sandbox.SendActions(ctx, schemas.Actions{
		act("list_namespaces", `{}`),
		act("vector_search", `{"namespace": "handbook", "query": "zephyrquartz credentials", "top_k": 3}`),
		act("vector_search", `{"namespace": "handbook", "query": "incident commander", "mode": "keyword", "top_k": 2}`),
		act("vector_search", `{"namespace": "research", "query": "bellwether fusion"}`),
		act("graph_query", `{"namespace": "kg", "query": "MATCH (p:Person)-[:WORKED_ON]->(x:Project) RETURN p.name AS who, x.name AS what ORDER BY who"}`),
		act("graph_shortest_path", `{"namespace": "kg", "from": "ada", "to": "edsger", "types": ["INSPIRED", "KNOWS"]}`),
		act("graph_add_node", `{"namespace": "scratch", "id": "note-1", "labels": ["Note"], "properties": {"text": "written by the demo"}}`),
		act("graph_add_node", `{"namespace": "kg", "id": "intruder", "labels": ["Person"]}`),
		act("graph_query", `{"namespace": "kg", "query": "MATCH (n) RETURN n"}`),
	})
	if err != nil {
		return err
	}
	printObservations(obs)
	return sandbox.End(ctx)
}
