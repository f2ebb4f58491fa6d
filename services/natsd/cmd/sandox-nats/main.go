// Command sandox-nats runs the NATS server with JetStream that the sandox
// components talk through.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/sandox/sandox/services/natsd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "sandox-nats:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cfg := natsd.DefaultConfig()
	fs := flag.NewFlagSet("sandox-nats", flag.ContinueOnError)
	fs.StringVar(&cfg.Host, "host", "0.0.0.0", "address to listen on")
	fs.IntVar(&cfg.Port, "port", cfg.Port, "client port")
	fs.StringVar(&cfg.StoreDir, "store", cfg.StoreDir, "JetStream store directory")
	fs.BoolVar(&cfg.Debug, "debug", false, "log the server's own messages")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := natsd.Start(cfg)
	if err != nil {
		return err
	}
	slog.Info("nats ready", "url", s.ClientURL(), "store", cfg.StoreDir)
	<-ctx.Done()
	s.Shutdown()
	s.WaitForShutdown()
	return nil
}
