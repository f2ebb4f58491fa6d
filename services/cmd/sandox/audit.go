package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/audit"
)

// auditLog replays the audit log: sandox audit [-group G] [-sandbox S]
// [-since T] [-until T] [-kind K,...] [-follow] [-json] [-session S].
func auditLog(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	var f audit.Filter
	fs.StringVar(&f.Group, "group", "", "only this group's entries")
	fs.StringVar(&f.Sandbox, "sandbox", "", "only this sandbox's entries")
	since := fs.String("since", "", "only entries from this time on: RFC 3339, or a duration ago such as 1h")
	until := fs.String("until", "", "only entries up to this time: RFC 3339, or a duration ago")
	kinds := fs.String("kind", "", "only these kinds, comma-separated: "+kindList()+", or an event or command kind (expired, end_sandbox, ...)")
	follow := fs.Bool("follow", false, "keep printing new entries until interrupted")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a timeline")
	session := fs.String("session", "", "rebuild this sandbox's session: every action with its observation, in order")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	now := time.Now()
	if f.Since, err = parseWhen(*since, now); err != nil {
		return fmt.Errorf("-since: %w", err)
	}
	if f.Until, err = parseWhen(*until, now); err != nil {
		return fmt.Errorf("-until: %w", err)
	}
	if *kinds != "" {
		f.Kinds = strings.Split(*kinds, ",")
	}
	if *session != "" {
		if *follow {
			return errors.New("-session and -follow do not go together")
		}
		f.Sandbox = *session
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
	out := io.Writer(os.Stdout)
	write := audit.WriteLine
	if *asJSON {
		write = audit.WriteJSON
	}
	if *session == "" {
		return audit.Replay(ctx, js, f, *follow, func(e audit.Entry) error { return write(out, e) })
	}
	var entries []audit.Entry
	if err := audit.Replay(ctx, js, f, false, func(e audit.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		return err
	}
	if len(entries) == 0 {
		return fmt.Errorf("no entries for sandbox %q", *session)
	}
	turns := audit.Session(entries)
	if *asJSON {
		for _, t := range turns {
			if err := writeJSONLine(out, t); err != nil {
				return err
			}
		}
		return nil
	}
	return audit.WriteSession(out, turns)
}

// parseWhen reads a time as RFC 3339 or as a duration before now; "" is
// the zero time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Parse(time.RFC3339, s)
}

func kindList() string {
	names := make([]string, len(audit.Kinds))
	for i, k := range audit.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

func writeJSONLine(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}
