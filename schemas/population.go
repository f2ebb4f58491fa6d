package schemas

// PopulateSubject is where the data service takes PopulateRequests: the
// orchestrator sends one when a group with databases starts, and waits for
// the PopulateReply before the group is running.
const PopulateSubject = "sandox.data.populate"

// PopulationEventSubject carries the progress of a group's population, a
// PopulationEvent per batch and per source; EventStream records it, so a
// client can follow or replay it.
func PopulationEventSubject(groupID string) string { return "sandox.evt.data." + groupID }

// PopulateRequest asks the data service to populate a group's databases
// from the population config in its recorded spec.
type PopulateRequest struct {
	GroupID string `json:"group_id"`
}

// RowError is a row (or file) a population could not load: where, and why.
// The rows before and after it load as usual.
type RowError struct {
	Source string `json:"source"`
	// Line is the 1-based line of the row in its file (0 when the whole
	// file failed).
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// PopulationEvent is the progress of one source of a population.
type PopulationEvent struct {
	GroupID   string `json:"group_id"`
	Database  string `json:"database"`
	Namespace string `json:"namespace"`
	Source    string `json:"source"`
	// Loaded counts the documents, nodes, relationships or statements
	// written from the source so far.
	Loaded int `json:"loaded"`
	// Bad lists the rows skipped so far.
	Bad []RowError `json:"bad,omitempty"`
	// Done is set on the source's last event.
	Done bool `json:"done,omitempty"`
}

// PopulateReply is the outcome of a population: what each source loaded,
// the rows it skipped, or the error that stopped it.
type PopulateReply struct {
	Sources []PopulationEvent `json:"sources,omitempty"`
	Error   *Error            `json:"error,omitempty"`
}
