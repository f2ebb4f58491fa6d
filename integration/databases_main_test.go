package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/services/auth"
	"github.com/sandox/sandox/services/data"
	"github.com/sandox/sandox/services/orchestrator"
)

// dataEnv is the database side of the test system, shared by the package:
// the Neo4j image built here, the neo4j password, and the data service
// (in process, as the control plane runs it).
var dataEnv struct {
	neo4jPassword string
	passwordDir   string
	// qdrantImage is the image the groups' Qdrant runs.
	qdrantImage string
	// stop stops the data service in process (withoutDataService).
	stop func()
}

// setupDatabaseConfig gives the worker its database settings: the images
// (Neo4j, and Qdrant's official image where a registry answered, else the
// Qdrant-compatible one), and the neo4j password, written here, that the
// orchestrator mounts into every Neo4j container.
func setupDatabaseConfig(images build.Images, ocfg *orchestrator.Config) error {
	ocfg.Neo4jImage = images.Neo4j
	q := images.Qdrant
	ocfg.QdrantImage, ocfg.QdrantDataDir, dataEnv.qdrantImage = q.Ref, q.DataDir, q.Ref
	ocfg.DatabaseNetwork = fmt.Sprintf("sandox-it-data-%d", os.Getpid())

	dir, err := os.MkdirTemp("", "sandox-it-secrets")
	if err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	dataEnv.neo4jPassword, dataEnv.passwordDir = hex.EncodeToString(raw), dir
	ocfg.Neo4jPasswordFile = filepath.Join(dir, "neo4j-password")
	return os.WriteFile(ocfg.Neo4jPasswordFile, []byte(dataEnv.neo4jPassword), 0o644)
}

// startDataService starts the data service in process, as the control
// plane runs it, once the worker has made the buckets; the returned func
// stops it.
func startDataService(ctx context.Context) (func(), error) {
	nc, err := connectAs(auth.RoleData)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc, err := data.New(ctx, js, data.Config{Neo4jPassword: dataEnv.neo4jPassword, PopulateAllow: []string{"127.0.0.1"}}, log)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.Serve(sctx, nc) }()
	return func() {
		cancel()
		<-done
		nc.Close()
	}, nil
}
