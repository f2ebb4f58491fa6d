package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/sdk"
)

// cliGroup stands for the group of a sandbox reached only through its own
// subjects (tools, actions), which do not name the group.
const cliGroup = "sandox-cli"

// tools prints a sandbox's tools in the function-calling format of a model
// API: sandox tools SANDBOX [--format openai|anthropic|mcp|jsonschema].
func tools(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tools", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	format := fs.String("format", string(sdk.FormatJSONSchema), "openai, anthropic, mcp or jsonschema")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: sandox tools SANDBOX [--format openai|anthropic|mcp|jsonschema]")
	}
	f, err := sdk.ParseToolFormat(*format)
	if err != nil {
		return err
	}
	nc, err := connect(*url, 2*time.Second)
	if err != nil {
		return fmt.Errorf("NATS at %s: %w (is sandox up? run `sandox up`)", *url, err)
	}
	defer nc.Close()
	return printTools(ctx, os.Stdout, nc, pos[0], f)
}

func printTools(ctx context.Context, w io.Writer, nc *nats.Conn, sandbox string, f sdk.ToolFormat) error {
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: cliGroup}, sdk.WithConn(nc))
	if err != nil {
		return err
	}
	data, err := g.Attach(sandbox).ToolsAs(ctx, f)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// parseInterleaved parses flags that may come before or after the
// positional arguments (sandox tools SB --format openai) and returns the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
