package build

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/sandox/sandox/internal/docker"
)

// Neo4jRepo is the repository of the Neo4j image; Builder.Neo4j tags it
// with the hash of its build context.
const Neo4jRepo = "sandox/neo4j"

//go:embed neo4j/Dockerfile
var neo4jDockerfile []byte

// Neo4j makes the Neo4j Community image (build/neo4j) and returns its tag,
// sandox/neo4j:<hash>. The jars are fetched on the host by
// scripts/neo4j-jars.sh into the cache (never into git); an image whose
// context did not change is not built again.
func (b *Builder) Neo4j(ctx context.Context) (string, error) {
	lib := filepath.Join(b.cfg.CacheDir, "neo4j", "lib")
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(b.cfg.RepoRoot, "build", "scripts", "neo4j-jars.sh"), lib)
	cmd.Dir = b.cfg.RepoRoot
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("neo4j jars: %w", err)
	}
	files := map[string][]byte{"Dockerfile": neo4jDockerfile}
	main, err := os.ReadFile(filepath.Join(b.cfg.CacheDir, "neo4j", "classes", "Main.class"))
	if err != nil {
		return "", fmt.Errorf("neo4j main: %w", err)
	}
	files["Main.class"] = main
	jars, err := filepath.Glob(filepath.Join(lib, "*.jar"))
	if err != nil || len(jars) == 0 {
		return "", fmt.Errorf("neo4j jars: none in %s", lib)
	}
	for _, j := range jars {
		data, err := os.ReadFile(j)
		if err != nil {
			return "", fmt.Errorf("neo4j jar: %w", err)
		}
		files["lib/"+filepath.Base(j)] = data
	}
	baseID, err := b.Base(ctx)
	if err != nil {
		return "", fmt.Errorf("%s needs %s: %w", Neo4jRepo, BaseImage, err)
	}
	tag := Neo4jRepo + ":" + docker.ContextHash(files, baseID)[:20]
	if _, err := b.docker.ImageID(ctx, tag); err == nil {
		return tag, nil
	}
	if err := b.buildIfChanged(ctx, tag, files); err != nil {
		return "", err
	}
	return tag, nil
}
