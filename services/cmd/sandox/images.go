package main

import (
	"context"
	"flag"
	"os"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
)

// images builds sandox's images (base, sandbox, control plane, and the
// databases': Neo4j and Qdrant or its compatible stand-in) from the
// source tree without starting anything; a build whose inputs did not change
// is skipped.
func images(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	root := fs.String("repo", ".", "the sandox source tree (images are built from it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	_, err = buildImages(ctx, d, *root)
	return err
}

// buildImages builds every image sandox up runs from the source tree at
// root (base, sandbox, control plane, Neo4j, and Qdrant or its compatible
// stand-in), independent ones side by side, printing the builds' progress,
// and returns the database images' names; a build whose inputs did not
// change is skipped. It blocks until the builds end.
func buildImages(ctx context.Context, d *docker.Client, root string) (build.Images, error) {
	cfg := build.DefaultConfig(root)
	cfg.Progress = os.Stdout
	return build.NewBuilder(d, cfg).All(ctx, build.AllImages)
}
