package build

import (
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Qdrant images.
const (
	// QdrantOfficialImage is Qdrant's own server, used where a registry answers.
	QdrantOfficialImage = "qdrant/qdrant:v1.17.1"
	// QdrantEdgeRepo names the local Qdrant-compatible service built on
	// Qdrant Edge (services/qdrantedge); its tags are the build context's
	// hash and "latest".
	QdrantEdgeRepo = "sandox/qdrant-edge"
	// QdrantEdgeImage is the latest local build.
	QdrantEdgeImage = QdrantEdgeRepo + ":latest"
)

//go:embed qdrantedge.Dockerfile
var qdrantEdgeDockerfile []byte

// QdrantImage is an image that serves Qdrant's gRPC API, and how to run it.
type QdrantImage struct {
	// Ref is the image to run.
	Ref string
	// Official is true for Qdrant's own image, false for qdrant-edge.
	Official bool
	// DataDir is where the image keeps its data: mount a volume there.
	DataDir string
	// GRPCPort is the container port of the gRPC API.
	GRPCPort string
}

// Qdrant returns the image to run for a Qdrant service: Qdrant's official
// image when it is present or the engine can pull it, else the local
// qdrant-edge build (QdrantEdge). A pull is tried at most Config.PullTimeout
// long; Config.NoPull skips it. It blocks until the image exists.
func (b *Builder) Qdrant(ctx context.Context) (QdrantImage, error) {
	official := QdrantImage{Ref: QdrantOfficialImage, Official: true, DataDir: "/qdrant/storage", GRPCPort: "6334/tcp"}
	if _, err := b.docker.ImageID(ctx, QdrantOfficialImage); err == nil {
		return official, nil
	}
	if !b.cfg.NoPull {
		fmt.Fprintf(b.cfg.Progress, "==> pull %s\n", QdrantOfficialImage)
		pctx, cancel := context.WithTimeout(ctx, b.cfg.PullTimeout)
		err := b.docker.Pull(pctx, QdrantOfficialImage, b.cfg.Progress)
		cancel()
		if err == nil {
			return official, nil
		}
		fmt.Fprintf(b.cfg.Progress, "==> %v; building the Qdrant-compatible service on Qdrant Edge instead\n", err)
	}
	ref, err := b.QdrantEdge(ctx)
	if err != nil {
		return QdrantImage{}, err
	}
	return QdrantImage{Ref: ref, DataDir: "/data", GRPCPort: "6334/tcp"}, nil
}

// QdrantEdge makes the qdrant-edge image from services/qdrantedge and the
// wheels its requirements.txt pins (downloaded once into the cache), tags
// it sandox/qdrant-edge:<context hash> and :latest, and returns the hash
// tag. An image whose context did not change is not rebuilt.
func (b *Builder) QdrantEdge(ctx context.Context) (string, error) {
	dir := filepath.Join(b.cfg.RepoRoot, "services", "qdrantedge")
	files := map[string][]byte{"Dockerfile": qdrantEdgeDockerfile}
	reqs, err := os.ReadFile(filepath.Join(dir, "requirements.txt"))
	if err != nil {
		return "", fmt.Errorf("qdrant-edge: %w", err)
	}
	files["requirements.txt"] = reqs
	for _, sub := range []string{"src", "tests"} {
		if err := addTree(files, dir, sub); err != nil {
			return "", fmt.Errorf("qdrant-edge: %w", err)
		}
	}
	wheels, err := b.wheels(ctx, reqs)
	if err != nil {
		return "", err
	}
	for name, data := range wheels {
		files["wheels/"+name] = data
	}
	start := time.Now()
	hash, err := b.buildHashed(ctx, QdrantEdgeImage, files, nil)
	if err != nil {
		return "", err
	}
	tag := QdrantEdgeRepo + ":" + hash[:20]
	if err := b.docker.Tag(ctx, QdrantEdgeImage, tag); err != nil {
		return "", err
	}
	fmt.Fprintf(b.cfg.Progress, "==> %s ready in %s\n", tag, time.Since(start).Round(time.Millisecond))
	return tag, nil
}

// addTree adds the files under root/sub to files, named by their path
// relative to root, skipping Python's caches.
func addTree(files map[string][]byte, root, sub string) error {
	return filepath.WalkDir(filepath.Join(root, sub), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".pyc") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
}
