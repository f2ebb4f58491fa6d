package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/sdk"
)

func status(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	nc, err := connect(*url, 2*time.Second)
	if err != nil {
		return fmt.Errorf("NATS at %s: %w (is sandox up? run `sandox up`)", *url, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, schemas.SandboxBucket)
	if err != nil {
		return fmt.Errorf("no sandbox state: %w (is an orchestrator running?)", err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		fmt.Println("no sandboxes")
		return nil
	} else if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SANDBOX\tGROUP\tSTATE\tHOST\tCPUS\tMEMORY\tPIDS\tTOOLS\tIMAGE\tREASON")
	for _, id := range keys {
		e, err := kv.Get(ctx, id)
		if err != nil {
			continue
		}
		var st schemas.SandboxStatus
		if json.Unmarshal(e.Value(), &st) != nil {
			continue
		}
		r := st.Resources
		reason := st.Reason
		if st.State == schemas.StatePaused && reason == "" {
			reason = "paused since " + st.PausedAt.Format(time.RFC3339) // docs/pause.md
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", st.ID, st.GroupID, st.State, st.Host,
			cpus(r.NanoCPUs), bytesOr(r.MemoryBytes), r.PIDs, strings.Join(st.Tools, ","), st.Image, reason)
	}
	return tw.Flush()
}

func stats(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: sandox stats SANDBOX")
	}
	nc, err := connect(*url, 2*time.Second)
	if err != nil {
		return fmt.Errorf("NATS at %s: %w", *url, err)
	}
	defer nc.Close()
	id := fs.Arg(0)
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, schemas.SandboxBucket)
	if err != nil {
		return err
	}
	e, err := kv.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("sandbox %s: %w", id, err)
	}
	var st schemas.SandboxStatus
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return err
	}
	group, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: st.GroupID}, sdk.WithConn(nc))
	if err != nil {
		return err
	}
	u, err := group.Attach(id).Stats(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tUSE\tLIMIT")
	fmt.Fprintf(tw, "cpu\t%.1f%% of a core\t%s\n", u.CPUPercent, cpus(u.Limits.NanoCPUs))
	fmt.Fprintf(tw, "memory\t%s\t%s\n", resources.FormatBytes(u.MemoryBytes), bytesOr(u.Limits.MemoryBytes))
	fmt.Fprintf(tw, "disk\t%s\t%s\n", resources.FormatBytes(u.DiskBytes), bytesOr(u.Limits.DiskBytes))
	fmt.Fprintf(tw, "processes\t%d\t%d\n", u.PIDs, u.Limits.PIDs)
	return tw.Flush()
}

func cpus(nano int64) string {
	if nano == 0 {
		return "host"
	}
	return fmt.Sprintf("%.2f", float64(nano)/1e9)
}

func bytesOr(n int64) string {
	if n == 0 {
		return "host"
	}
	return resources.FormatBytes(n)
}
