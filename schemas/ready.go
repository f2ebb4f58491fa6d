package schemas

// ExecutorReady is the executor's answer on PingSubject, sent once it
// serves every other subject of its sandbox: the tool modules it serves
// (built-in families and user tool files), sorted. The orchestrator records
// them in SandboxStatus.Tools when the sandbox starts.
type ExecutorReady struct {
	Modules []string `json:"modules"`
}
