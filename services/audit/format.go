package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
)

// WriteLine writes e as one line of a readable timeline.
func WriteLine(w io.Writer, e Entry) error {
	_, err := fmt.Fprintf(w, "%s  %-12s %-15s %s\n", e.Time.Format("2006-01-02T15:04:05.000Z"), e.Kind, e.What, describe(e))
	return err
}

// WriteJSON writes e as one JSON line.
func WriteJSON(w io.Writer, e Entry) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// WriteSession writes a session as a readable timeline, each action under
// its batch with its observation.
func WriteSession(w io.Writer, turns []Turn) error {
	for _, t := range turns {
		if err := WriteLine(w, t.Entry); err != nil {
			return err
		}
		if t.Entry.Kind != KindBatch {
			continue
		}
		switch {
		case t.Answered == nil:
			fmt.Fprintf(w, "%28s no observations recorded: the batch was lost or is still running\n", "")
		case t.Refused != nil:
			fmt.Fprintf(w, "%28s refused at %s: %s: %s\n", "", t.Answered.Time.Format("15:04:05.000"), string(t.Refused.Code), oneLine(t.Refused.Message, 100))
		default:
			fmt.Fprintf(w, "%28s answered at %s (%s later)\n", "", t.Answered.Time.Format("15:04:05.000"), t.Answered.Time.Sub(t.Entry.Time).Round(time.Millisecond))
		}
		for i, s := range t.Steps {
			fmt.Fprintf(w, "%28s %d. %s %s\n", "", i+1, s.Action.Tool, oneLine(string(s.Action.Args), 80))
			if s.Observation != nil {
				fmt.Fprintf(w, "%28s    -> %s\n", "", observed(*s.Observation))
			}
		}
	}
	return nil
}

func describe(e Entry) string {
	var b strings.Builder
	field := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s=%s ", k, v)
		}
	}
	field("group", e.GroupID)
	field("sandbox", e.SandboxID)
	switch e.Kind {
	case KindCommand:
		field("command", e.CommandID)
		if c := e.Caller; c != nil {
			field("by", callerText(*c))
		}
	case KindResult:
		field("command", e.CommandID)
		if e.Error == "" {
			b.WriteString("ok")
		} else {
			field("error", e.Error)
		}
	case KindEvent:
		var ev schemas.Event
		_ = json.Unmarshal(e.Data, &ev)
		field("reason", ev.Reason)
	case KindBatch:
		field("batch", e.BatchID)
		field("tools", strings.Join(e.Tools, ","))
		if strings.HasPrefix(e.Reply, "_INBOX.") {
			b.WriteString("reply=_INBOX ")
		}
		if c := e.Caller; c != nil {
			field("by", callerText(*c))
		}
	case KindObservations:
		field("batch", e.BatchID)
		field("error", e.Error)
	case KindProgress:
		var p schemas.Progress
		_ = json.Unmarshal(e.Data, &p)
		b.WriteString(ProgressText(p))
	case KindRefusal:
		var r schemas.Refusal
		_ = json.Unmarshal(e.Data, &r)
		field("subject", r.Subject)
		if c := e.Caller; c != nil {
			field("by", callerText(*c))
		}
	}
	return strings.TrimSpace(b.String())
}

func callerText(c schemas.Caller) string {
	name := c.Name
	if name == "" {
		name = "unknown"
	}
	name = strings.ReplaceAll(name, " ", "_")
	if c.Role != "" {
		name += "(" + c.Role + ")"
	}
	if !c.Verified {
		name += ",unverified"
	}
	return name
}

func observed(o schemas.Observation) string {
	switch {
	case o.Error != nil:
		return fmt.Sprintf("error %s: %s", string(o.Error.Code), oneLine(o.Error.Message, 80))
	case len(o.Return) > 0:
		return "returned " + oneLine(string(o.Return), 80)
	case o.ExitCode != nil:
		return fmt.Sprintf("exit %d: %s", *o.ExitCode, oneLine(o.Stdout+o.Stderr, 80))
	default:
		return oneLine(o.Stdout+o.Stderr, 80)
	}
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// ProgressText says how far p's work has come, in one line: the steps or
// sources done of the total, what is being done, and its end.
func ProgressText(p schemas.Progress) string {
	var b strings.Builder
	if p.Total > 0 {
		fmt.Fprintf(&b, "%d/%d ", p.Done, p.Total)
	}
	b.WriteString(oneLine(p.Message, 100))
	if p.Error != "" {
		fmt.Fprintf(&b, ": %s", oneLine(p.Error, 100))
	}
	return strings.TrimSpace(b.String())
}
