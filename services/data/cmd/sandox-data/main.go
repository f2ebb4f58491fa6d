// Command sandox-data is the control plane's data service: it answers
// sandboxes' database requests on NATS (sandox.db.>) with the database
// clients and credentials it alone holds (services/data).
//
// It reads SANDOX_NATS_URL (default nats://127.0.0.1:4222),
// SANDOX_NATS_CREDS, SANDOX_NEO4J_PASSWORD_FILE (the neo4j user's password
// of the groups' Neo4j), and SANDOX_NEO4J_ADDR / SANDOX_QDRANT_ADDR
// (host:port of databases shared by every group that has none of its own),
// SANDOX_POPULATE_DIR (where relative local population sources resolve),
// SANDOX_POPULATE_ALLOW (the comma-separated hosts, *.domains, addresses
// and CIDRs that http(s) and s3 population sources may reach; none when
// unset),
// and SANDOX_EMBED_URL, SANDOX_EMBED_MODEL, SANDOX_EMBED_KEY,
// SANDOX_EMBED_DIM for an OpenAI-compatible embedding endpoint (the
// offline hashing embedder otherwise). s3:// population sources read the
// AWS SDK's own AWS_* variables and shared files (services/data/awsenv
// says which `sandox up` passes).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/svcmain"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/data"
)

func main() { svcmain.Main("data service", run) }

func run(ctx context.Context, log *slog.Logger) error {
	cfg := data.Config{
		Endpoints: map[string]string{}, Embedder: data.EmbedderFromEnv(os.Getenv),
		PopulateDir: os.Getenv("SANDOX_POPULATE_DIR"), PopulateAllow: listEnv(os.Getenv("SANDOX_POPULATE_ALLOW")),
	}
	if f := os.Getenv("SANDOX_NEO4J_PASSWORD_FILE"); f != "" {
		pw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("neo4j password: %w", err)
		}
		cfg.Neo4jPassword = strings.TrimSpace(string(pw))
	}
	if a := os.Getenv("SANDOX_NEO4J_ADDR"); a != "" {
		cfg.Endpoints[schemas.DatabaseNeo4j] = a
	}
	if a := os.Getenv("SANDOX_QDRANT_ADDR"); a != "" {
		cfg.Endpoints[schemas.DatabaseQdrant] = a
	}
	nc, err := svcmain.Connect("sandox-data")
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	svc, err := data.New(ctx, js, cfg, log)
	if err != nil {
		return err
	}
	return svc.Serve(ctx, nc)
}

// listEnv splits a comma-separated setting, dropping blanks.
func listEnv(v string) []string {
	var out []string
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
