// Package audit reads sandox's audit log, the SANDOX_EVENTS stream: every
// lifecycle command (with its caller) and its result, every sandbox event,
// every action batch and its observations, and every refusal of the NATS
// server. It filters, follows, and rebuilds one sandbox's session.
package audit

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/auth"
)

// Kind is what an entry of the audit log records.
type Kind string

// The kinds of entries, one per subject family of SANDOX_EVENTS.
const (
	KindCommand      Kind = "command"      // schemas.CommandRecordSubject
	KindResult       Kind = "result"       // schemas.ResultSubject
	KindEvent        Kind = "event"        // schemas.SandboxEventSubject
	KindBatch        Kind = "batch"        // schemas.BatchRecordSubject
	KindObservations Kind = "observations" // schemas.ObservationSubject
	KindRefusal      Kind = "refusal"      // schemas.RefusalSubject
	KindProgress     Kind = "progress"     // schemas.ProgressSubject
)

// Kinds lists every kind.
var Kinds = []Kind{KindCommand, KindResult, KindEvent, KindBatch, KindObservations, KindRefusal, KindProgress}

// Entry is one message of the audit log, read. Time is the NATS server's
// clock when the stream stored it. What names the command kind (command,
// result), the event kind (event), the refused operation (refusal) or the
// phase of long work (progress: image_build, population).
type Entry struct {
	Seq       uint64          `json:"seq"`
	Time      time.Time       `json:"time"`
	Kind      Kind            `json:"kind"`
	What      string          `json:"what,omitempty"`
	GroupID   string          `json:"group_id,omitempty"`
	SandboxID string          `json:"sandbox_id,omitempty"`
	CommandID string          `json:"command_id,omitempty"`
	BatchID   string          `json:"batch_id,omitempty"`
	Caller    *schemas.Caller `json:"caller,omitempty"`
	// Error is the wire error code of a failed result or batch.
	Error   string          `json:"error,omitempty"`
	Subject string          `json:"subject"`
	Data    json.RawMessage `json:"data"`
	// Reply is the reply subject a batch was sent with.
	Reply string `json:"reply,omitempty"`
	// Tools names the tools of a batch, in order.
	Tools []string `json:"tools,omitempty"`
}

// index remembers, across the log, what later entries do not say
// themselves: the group of a sandbox and the command of a result. It also
// remembers which commands' results were read, so that a command appears
// once in a replay (see parse).
type index struct {
	groups   map[string]string          // sandbox id -> group id
	commands map[string]schemas.Command // command id -> command
	results  map[string]bool            // command ids whose result was read
	// account is the sandox account that issues every identity, against
	// which a batch's caller is checked; "" verifies none.
	account string
}

func newIndex() *index {
	return &index{groups: map[string]string{}, commands: map[string]schemas.Command{}, results: map[string]bool{}}
}

// parse reads one stored message into an entry, learning what later
// entries need. ok is false for a subject the audit log does not know, and
// for the repeats of a command: a command is recorded by every worker that
// takes it, so one whose worker died with it in hand is recorded again by
// the worker it is redelivered to (schemas.CommandRecord.Delivery above 1),
// and its result is published again when a redelivery finds it already
// answered. The replay shows the first record and the first result of each
// command id only.
func (ix *index) parse(seq uint64, at time.Time, subject string, hdr map[string][]string, data []byte) (Entry, bool) {
	e := Entry{Seq: seq, Time: at.UTC(), Subject: subject, Data: json.RawMessage(data)}
	if !json.Valid(data) {
		b, _ := json.Marshal(string(data))
		e.Data = b
	}
	tok := strings.Split(subject, ".")
	header := func(k string) string {
		if v := hdr[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	switch {
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "cmd":
		var rec schemas.CommandRecord
		_ = json.Unmarshal(data, &rec)
		e.Kind, e.CommandID = KindCommand, tok[3]
		if _, seen := ix.commands[e.CommandID]; seen {
			return e, false
		}
		e.What, e.GroupID, e.SandboxID = string(rec.Command.Kind), rec.Command.GroupID, rec.Command.SandboxID
		e.Caller = &rec.Caller
		ix.commands[e.CommandID] = rec.Command
		if e.SandboxID != "" && e.GroupID != "" {
			ix.groups[e.SandboxID] = e.GroupID
		}
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "result":
		var res schemas.CommandResult
		_ = json.Unmarshal(data, &res)
		e.Kind, e.CommandID, e.What = KindResult, tok[3], string(res.Kind)
		if ix.results[e.CommandID] {
			return e, false
		}
		ix.results[e.CommandID] = true
		if res.Error != nil {
			e.Error = string(res.Error.Code)
		}
		if cmd, ok := ix.commands[e.CommandID]; ok {
			e.GroupID, e.SandboxID = cmd.GroupID, cmd.SandboxID
		}
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "sandbox":
		var ev schemas.Event
		_ = json.Unmarshal(data, &ev)
		e.Kind, e.What, e.SandboxID = KindEvent, string(ev.Kind), tok[3]
		e.GroupID, e.CommandID = ev.GroupID, ev.CommandID
		if ev.GroupID != "" {
			ix.groups[e.SandboxID] = ev.GroupID
		}
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "batch":
		e.Kind, e.SandboxID = KindBatch, tok[3]
		e.BatchID, e.Reply = header(schemas.HeaderBatchID), header(schemas.HeaderReply)
		c := auth.CallerOf(nats.Header(hdr), schemas.SignedBatch(e.BatchID, data), ix.account)
		e.Caller = &c
		if actions, err := schemas.ParseActions(data); err == nil {
			e.Tools = toolList(actions)
		} else {
			e.Error = string(schemas.CodeBadRequest)
		}
	case len(tok) == 4 && tok[0] == "sandox" && tok[1] == "obs":
		var res schemas.BatchResult
		_ = json.Unmarshal(data, &res)
		e.Kind, e.SandboxID, e.BatchID = KindObservations, tok[2], tok[3]
		if res.Error != nil {
			e.Error = string(res.Error.Code)
		}
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "refused":
		var r schemas.Refusal
		_ = json.Unmarshal(data, &r)
		e.Kind, e.What = KindRefusal, r.Op
		if id, ok := strings.CutPrefix(r.UserName, "sandbox "); ok && r.Role == "sandbox" {
			e.SandboxID = id
		}
		e.Caller = &schemas.Caller{Name: r.UserName, User: r.User, Role: r.Role, Verified: r.User != ""}
	case len(tok) == 4 && tok[1] == "evt" && tok[2] == "progress":
		var p schemas.Progress
		_ = json.Unmarshal(data, &p)
		e.Kind, e.What, e.GroupID, e.SandboxID = KindProgress, p.Phase, tok[3], p.SandboxID
	default:
		return e, false
	}
	if e.GroupID == "" && e.SandboxID != "" {
		e.GroupID = ix.groups[e.SandboxID]
	}
	return e, true
}

// toolList names the tools of a batch, in order.
func toolList(actions schemas.Actions) []string {
	names := make([]string, len(actions))
	for i, a := range actions {
		names[i] = a.Tool
	}
	return names
}
