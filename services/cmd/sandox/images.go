package main

import (
	"context"
	"flag"
	"os"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/services/docker"
)

// images builds sandox's images (base, sandbox, control plane) from the
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
	return buildImages(ctx, d, *root)
}

// buildImages builds every image from the source tree at root, printing
// the builds' progress; a build whose inputs did not change is skipped.
// It blocks until the builds end.
func buildImages(ctx context.Context, d *docker.Client, root string) error {
	cfg := build.DefaultConfig(root)
	cfg.Progress = os.Stdout
	return build.NewBuilder(d, cfg).All(ctx)
}
