package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/sdk"
)

//go:embed demo_tools.py
var demoTools []byte

// demo walks through the SDK: a group with a user tool file, a sandbox, a
// synchronous batch mixing built-in and user tools, an asynchronous batch,
// bad input, and the end of it all.
func demo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sandox-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	toolFile := filepath.Join(dir, "demo_tools.py")
	if err := os.WriteFile(toolFile, demoTools, 0o644); err != nil {
		return err
	}

	suffix := uuid.NewString()[:8]
	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{
		ID:               "demo-" + suffix,
		ComputeResources: schemas.ComputeResources{CPU: "1", Memory: "512MiB", Disk: "64MiB"},
		Tools:            []string{toolFile},
	}, sdk.WithURL(*url), showProgress(os.Stderr))
	if err != nil {
		return err
	}
	step("start the group")
	if err := group.Start(ctx); err != nil {
		return err
	}
	// The web sandbox (its image adds Chromium) and the database group
	// (two databases to start and populate) take the longest: they start
	// now, in the background, and the demo collects them when it gets to
	// them. On an early return they are cancelled, waited for and ended.
	began := time.Now()
	bctx, cancel := context.WithCancel(ctx)
	web := inBackground(bctx, began, func(ctx context.Context) (*sdk.Sandbox, error) {
		return startWebSandbox(ctx, group, "demo-web-"+suffix)
	})
	defer func() {
		_, _ = web.wait(context.WithoutCancel(ctx)) // the group's end ends it
		step("end the group")
		if err := group.End(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, "end group:", err)
		}
	}()
	db := inBackground(bctx, began, func(ctx context.Context) (databaseGroup, error) {
		return startDatabaseGroup(ctx, *url, suffix)
	})
	defer endDatabaseGroup(ctx, db)
	defer cancel()
	fmt.Println("the web sandbox and the database group start in the background")

	step("create and start a sandbox (builds its image with demo_tools.py)")
	start := time.Now()
	sandbox, err := group.CreateSandbox(ctx, "demo-sb-"+suffix, sdk.SandboxOptions{})
	if err != nil {
		return err
	}
	if err := sandbox.Start(ctx); err != nil {
		return err
	}
	st := sandbox.Status()
	fmt.Printf("sandbox %s %s in %s (image %s, reused %t)\n", st.ID, st.State, time.Since(start).Round(time.Millisecond), st.Image, st.ImageReused)

	step("send a batch synchronously: built-in and user tools, in the order written")
	obs, err := sandbox.SendActionsJSON(ctx, []byte(`{
		"filesystem_tools.write_file": {"description": "write a note", "args": {"path": "notes.txt", "content": "sandox runs tools in containers\n"}},
		"terminal_tools.run": {"description": "look around", "args": {"command": "pwd && ls -l && whoami"}},
		"demo_tools.word_count": {"description": "count words with a user tool", "args": {"path": "notes.txt"}},
		"greetUse": {"description": "a bare name with the seed's suffix", "args": {"name": "Ada", "excited": true}}
	}`))
	if err != nil {
		return err
	}
	printObservations(obs)

	step("send a batch asynchronously and collect it through its future")
	future, err := sandbox.SendActionsAsync(ctx, schemas.Actions{
		{Tool: "terminal_tools.run", Description: "slow work", Args: json.RawMessage(`{"command": "sleep 1; echo done"}`)},
	})
	if err != nil {
		return err
	}
	fmt.Printf("batch %s sent; waiting\n", future.BatchID())
	obs, err = future.Wait(ctx)
	if err != nil {
		return err
	}
	printObservations(obs)

	step("bad input gets a clear answer; the sandbox keeps working")
	obs, err = sandbox.SendActionsJSON(ctx, []byte(`[
		{"tool": "nope_tools.fly", "args": {}},
		{"tool": "filesystem_tools.read_file", "args": {"path": 42}},
		{"tool": "filesystem_tools.read_file", "args": {"path": "missing.txt"}}
	]`))
	if err != nil {
		return err
	}
	printObservations(obs)
	_, err = sandbox.SendActionsJSON(ctx, []byte(`{"terminal_tools.run": `))
	fmt.Printf("malformed JSON: %v\n", err)

	step("limits hold: a disk filler stops at the 64 MiB disk, a memory hog is killed")
	obs, err = sandbox.SendActionsJSON(ctx, []byte(`[
		{"tool": "terminal_tools.run", "args": {"command": "head -c 100M /dev/zero > fill; ls -l fill"}},
		{"tool": "terminal_tools.run", "args": {"command": "rm fill; python3 -c 'b = bytearray(1 << 30)'"}}
	]`))
	if err != nil {
		return err
	}
	printObservations(obs)
	for _, o := range obs {
		for _, h := range o.LimitsHit {
			fmt.Printf("limit hit (%s): %s\n", h.Resource, h.Message)
		}
	}
	u, err := sandbox.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("use: cpu %.1f%%, memory %s of %s, disk %s of %s, %d processes of %d\n",
		u.CPUPercent, resources.FormatBytes(u.MemoryBytes), resources.FormatBytes(u.Limits.MemoryBytes),
		resources.FormatBytes(u.DiskBytes), resources.FormatBytes(u.Limits.DiskBytes), u.PIDs, u.Limits.PIDs)

	if err := demoJobs(ctx, sandbox); err != nil {
		return err
	}

	step("end the sandbox")
	if err := sandbox.End(ctx); err != nil {
		return err
	}
	if err := demoWeb(ctx, web); err != nil {
		return err
	}
	return demoDatabases(ctx, db)
}

func step(s string) { fmt.Printf("\n== %s\n", s) }

func printObservations(obs []schemas.Observation) {
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tSTDOUT\tRETURN\tERROR\tMS")
	for _, o := range obs {
		e := ""
		if o.Error != nil {
			e = string(o.Error.Code) + ": " + o.Error.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\n", o.Tool, oneLine(o.Stdout), oneLine(string(o.Return)), oneLine(e), o.DurationMS)
	}
	tw.Flush()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 70 {
		return s[:67] + "..."
	}
	return s
}
