package dashboard

import (
	"encoding/json"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// Row is one entry of the audit log as the live feed shows it.
type Row struct {
	Seq     uint64
	Time    time.Time
	Kind    audit.Kind
	What    string
	Group   string
	Sandbox string
	BatchID string
	// Caller names who sent a command or a batch, when recorded, and
	// CallerNote says why it is not verified.
	Caller, CallerNote string
	// Error is the wire error code of a failed result or a refused batch.
	Error string
	// Message is an event's sentence or reason, or how far long work has
	// come (progress).
	Message string
	// Tools are a batch's tools, in order; for an observations entry each
	// with its duration and error.
	Tools []ToolRun
}

// ToolRun is one action of a batch: the tool, and once answered how long it
// took and its error code ("" when it succeeded).
type ToolRun struct {
	Tool       string
	DurationMS float64
	Answered   bool
	Error      string
	Message    string
}

// rowOf reads an audit entry into a row.
func rowOf(e audit.Entry) Row {
	r := Row{Seq: e.Seq, Time: e.Time, Kind: e.Kind, What: e.What, Group: e.GroupID,
		Sandbox: e.SandboxID, BatchID: e.BatchID, Error: e.Error}
	if e.Caller != nil {
		r.Caller, r.CallerNote = callerName(*e.Caller), e.Caller.Note
	}
	switch e.Kind {
	case audit.KindBatch:
		for _, t := range e.Tools {
			r.Tools = append(r.Tools, ToolRun{Tool: t})
		}
	case audit.KindObservations:
		var res schemas.BatchResult
		_ = json.Unmarshal(e.Data, &res)
		r.Tools = runsOf(res.Observations)
		if res.Error != nil {
			r.Message = res.Error.Message
		}
	case audit.KindEvent:
		var ev schemas.Event
		_ = json.Unmarshal(e.Data, &ev)
		r.Message = ev.Message
		if r.Message == "" {
			r.Message = ev.Reason
		}
	case audit.KindProgress:
		var p schemas.Progress
		_ = json.Unmarshal(e.Data, &p)
		r.Message = audit.ProgressText(p)
		if p.Error != "" {
			r.Error = "failed"
		}
	case audit.KindResult:
		var res schemas.CommandResult
		_ = json.Unmarshal(e.Data, &res)
		if res.Error != nil {
			r.Message = res.Error.Message
		}
	}
	return r
}

// runsOf lists the tools of observations with their durations and errors.
func runsOf(obs []schemas.Observation) []ToolRun {
	runs := make([]ToolRun, len(obs))
	for i, o := range obs {
		runs[i] = ToolRun{Tool: o.Tool, DurationMS: o.DurationMS, Answered: true}
		if o.Error != nil {
			runs[i].Error, runs[i].Message = string(o.Error.Code), o.Error.Message
		}
	}
	return runs
}

// callerName names a caller for people: its user name, else its role, and
// whether it is unverified.
func callerName(c schemas.Caller) string {
	name := c.Name
	if name == "" {
		name = c.Role
	}
	if c.Verified {
		return name
	}
	if name == "" {
		return "unverified"
	}
	return name + " (unverified)"
}
