package main

import (
	"context"
	"flag"
	"os"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/services/docker"
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
	b, err := buildImages(ctx, d, *root)
	if err != nil {
		return err
	}
	if _, err := b.Neo4j(ctx); err != nil {
		return err
	}
	_, err = b.Qdrant(ctx)
	return err
}

// buildImages builds the base, sandbox and control-plane images from the
// source tree at root, printing the builds' progress, and returns the
// builder for the databases' images; a build whose inputs did not change is
// skipped. It blocks until the builds end.
func buildImages(ctx context.Context, d *docker.Client, root string) (*build.Builder, error) {
	cfg := build.DefaultConfig(root)
	cfg.Progress = os.Stdout
	b := build.NewBuilder(d, cfg)
	return b, b.All(ctx)
}
