package schemas

// HoldRequest asks a sandbox's executor, on HoldSubject, to stop serving
// its sandbox's subjects (Hold true, before a pause) or to serve them again
// (Hold false, after a resume).
type HoldRequest struct {
	Hold bool `json:"hold"`
}

// HoldReply is the executor's answer to a HoldRequest: Error is nil once
// the subscriptions are in the state asked for (the server has them).
type HoldReply struct {
	Held  bool   `json:"held"`
	Error *Error `json:"error,omitempty"`
}
