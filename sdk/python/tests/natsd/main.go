// Command natsd serves the Python SDK's unit tests (sdk/python/tests): it
// starts sandox's NATS server (services/natsd: JetStream, the project's
// limits) on a free loopback port with a temporary store, open (no
// authority), creates sandox's streams as an orchestrator worker does at
// start (state.Setup) unless -streams=false, prints the client URL
// on its first line, and runs until its standard input closes.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/services/natsd"
	"github.com/sandox/sandox/services/orchestrator/state"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "natsd:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("natsd", flag.ContinueOnError)
	streams := fs.Bool("streams", true, "create sandox's streams")
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := os.MkdirTemp("", "sandox-pytest-nats")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	cfg := natsd.DefaultConfig()
	cfg.Port, cfg.StoreDir = -1, store
	ns, err := natsd.Start(cfg)
	if err != nil {
		return err
	}
	defer func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	}()
	if *streams {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			return err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = state.Setup(ctx, js)
		cancel()
		nc.Close()
		if err != nil {
			return err
		}
	}
	fmt.Println(ns.ClientURL())
	_, err = io.Copy(io.Discard, os.Stdin)
	return err
}
