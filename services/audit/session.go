package audit

import (
	"encoding/json"

	"github.com/sandox/sandox/schemas"
)

// Step is one action of a sandbox's session with the observation that
// answered it. Observation is nil when none was recorded (the batch was
// lost, or is still running).
type Step struct {
	Action      schemas.Action       `json:"action"`
	Observation *schemas.Observation `json:"observation,omitempty"`
}

// Turn is one entry of a session: a lifecycle entry (command, result,
// event, refusal), or a batch with its steps in the order they were
// written.
type Turn struct {
	Entry Entry  `json:"entry"`
	Steps []Step `json:"steps,omitempty"`
	// Answered is the observations entry of a batch; nil when none came.
	Answered *Entry `json:"answered,omitempty"`
	// Refused is the batch's error when it was refused as a whole.
	Refused *schemas.Error `json:"refused,omitempty"`
}

// Session rebuilds one sandbox's session from its entries (as Replay gives
// them with Filter.Sandbox set): every entry in the log's order, each batch
// paired with its observations by batch id, action by action. The
// observations entries themselves are folded into their batch; those
// whose batch was not recorded stay turns of their own.
func Session(entries []Entry) []Turn {
	answers := map[string]Entry{}
	for _, e := range entries {
		if e.Kind == KindObservations && e.BatchID != "" {
			if _, seen := answers[e.BatchID]; !seen {
				answers[e.BatchID] = e
			}
		}
	}
	batches := map[string]bool{}
	for _, e := range entries {
		if e.Kind == KindBatch {
			batches[e.BatchID] = true
		}
	}
	var turns []Turn
	for _, e := range entries {
		switch {
		case e.Kind == KindObservations && batches[e.BatchID]:
			continue
		case e.Kind != KindBatch:
			turns = append(turns, Turn{Entry: e})
			continue
		}
		t := Turn{Entry: e}
		actions, _ := schemas.ParseActions(e.Data)
		var res schemas.BatchResult
		if a, ok := answers[e.BatchID]; ok {
			t.Answered = &a
			_ = json.Unmarshal(a.Data, &res)
			t.Refused = res.Error
		}
		for i, act := range actions {
			s := Step{Action: act}
			if i < len(res.Observations) {
				s.Observation = &res.Observations[i]
			}
			t.Steps = append(t.Steps, s)
		}
		turns = append(turns, t)
	}
	return turns
}
