package build

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"
)

// Images names the database images that All made (the base, sandbox and
// control images have fixed names).
type Images struct {
	// Neo4j is the tag of the Neo4j image, sandox/neo4j:<hash>.
	Neo4j string
	// Qdrant is Qdrant's official image where one could be had, else the
	// Qdrant-compatible one.
	Qdrant QdrantImage
}

// Image selects what All makes besides the base image.
type Image uint8

const (
	// SandboxImages is the default sandbox image.
	SandboxImages Image = 1 << iota
	// ControlImages is the control-plane image.
	ControlImages
	// DatabaseImages are the groups' database images: Neo4j and Qdrant.
	DatabaseImages
	// AllImages is everything sandox up runs.
	AllImages = SandboxImages | ControlImages | DatabaseImages
)

// All makes the images that which selects, skipping any that is current.
// Independent work runs at once: while the base image is made (a pull, or
// mmdebstrap), the Go binaries compile and the Neo4j jars, the Qdrant
// wheels and uv download; each image then builds as soon as its parts and
// the base are ready, beside the others. Each build's progress lines carry
// its name. It blocks until every build ended and returns the first error.
func (b *Builder) All(ctx context.Context, which Image) (Images, error) {
	var out Images
	start := time.Now()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_, err := b.with("base").Base(ctx)
		return err
	})
	if which&SandboxImages != 0 {
		g.Go(func() error { return b.with("sandbox").Sandbox(ctx) })
	}
	if which&ControlImages != 0 {
		g.Go(func() error { return b.with("control").Control(ctx) })
	}
	if which&DatabaseImages != 0 {
		g.Go(func() (err error) {
			out.Neo4j, err = b.with("neo4j").Neo4j(ctx)
			return err
		})
		g.Go(func() (err error) {
			out.Qdrant, err = b.with("qdrant").Qdrant(ctx)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return Images{}, err
	}
	b.progressf("==> images ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	return out, nil
}

// with returns a builder that shares b's engine and base image guard and
// prefixes each line of its progress with name.
func (b *Builder) with(name string) *Builder {
	c := *b
	c.cfg.Progress = newPrefixWriter(b.cfg.Progress, "["+name+"] ")
	return &c
}
