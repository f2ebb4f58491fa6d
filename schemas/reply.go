package schemas

// StatusReply is the orchestrator's answer to a request on a
// RequestSubjectPrefix subject (SandboxStatusSubject, GroupStatusSubject,
// SandboxStatsSubject). Exactly one of Error and the fields the request
// asks for is set.
type StatusReply struct {
	Group     *GroupStatus    `json:"group,omitempty"`
	Sandbox   *SandboxStatus  `json:"sandbox,omitempty"`
	Sandboxes []SandboxStatus `json:"sandboxes,omitempty"`
	Stats     *SandboxUsage   `json:"stats,omitempty"`
	Error     *Error          `json:"error,omitempty"`
	// Worker names the orchestrator worker that answered.
	Worker string `json:"worker"`
}
