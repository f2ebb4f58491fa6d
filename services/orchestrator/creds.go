package orchestrator

import "github.com/sandox/sandox/services/orchestrator/identity"

// SandboxCredsPath is where a sandbox's executor finds its NATS
// credentials (identity.CredsPath).
const SandboxCredsPath = identity.CredsPath
