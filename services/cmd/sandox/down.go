package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/internal/disks"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

func down(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("down", flag.ContinueOnError)
	purge := fs.Bool("purge", false, "also remove NATS's data volume (all recorded state and events)")
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	d, err := docker.New(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	var errs []error
	if nc, err := connect(*url, 2*time.Second); err == nil {
		errs = append(errs, endAllGroups(ctx, nc))
		nc.Close()
	}
	// The control plane's containers, NATS last (the table's order
	// reversed).
	for _, c := range slices.Backward(controlPlane(upSettings{})) {
		errs = append(errs, d.Remove(ctx, c.Name))
	}
	// Sandboxes of this system whose group could not be ended (no
	// orchestrator answered); another system's (a test run's) stay.
	left, err := d.List(ctx, runtime.LabelSystem+"="+upSystem)
	errs = append(errs, err)
	for _, c := range left {
		errs = append(errs, d.Remove(ctx, c.ID), d.RemoveVolume(ctx, runtime.VolumeName(c.Labels[runtime.LabelSandbox])))
	}
	// Their disks, once no volume mounts them (needs root, as attaching did).
	if os.Geteuid() == 0 {
		errs = append(errs, (&disks.Pool{Dir: disksDir}).DetachAll())
	}
	errs = append(errs, d.RemoveNetwork(ctx, networkName), d.RemoveNetwork(ctx, egressNetwork), d.RemoveNetwork(ctx, databaseNetwork))
	// The other bridges of open egress that the orchestrator made.
	shards, err := d.Networks(ctx, runtime.LabelSystem+"="+upSystem, runtime.LabelEgressShard)
	errs = append(errs, err)
	for _, n := range shards {
		errs = append(errs, d.RemoveNetwork(ctx, n.Name))
	}
	// The NATS socket's volume holds nothing but the socket.
	errs = append(errs, d.RemoveVolume(ctx, natsSocketVolume))
	if *purge {
		errs = append(errs, d.RemoveVolume(ctx, natsVolume))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	fmt.Println("sandox is down")
	return nil
}

// endAllGroups ends every recorded group through the orchestrator.
func endAllGroups(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	kv, err := js.KeyValue(ctx, schemas.GroupBucket)
	if err != nil {
		return nil // nothing was ever recorded
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	} else if err != nil {
		return err
	}
	var errs []error
	for _, id := range keys {
		e, err := kv.Get(ctx, id)
		if err != nil {
			continue
		}
		var g schemas.GroupStatus
		if json.Unmarshal(e.Value(), &g) != nil {
			continue
		}
		group, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: id}, sdk.WithConn(nc), sdk.WithCommandTimeout(time.Minute))
		if err == nil {
			err = group.End(ctx)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("end group %s: %w", id, err))
		} else {
			fmt.Printf("group %s ended (%d sandboxes)\n", id, len(g.Sandboxes))
		}
	}
	return errors.Join(errs...)
}
