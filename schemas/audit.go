package schemas

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Headers a client sets on a lifecycle command, and on an action batch, so
// that the audit log can record, and check, who sent it. HeaderCallerJWT
// carries the client's NATS user JWT; HeaderCallerSig the user key's
// signature (base64url without padding) of the command id, or of
// SignedBatch for a batch. Only the holder of the user's seed can make the
// signature, and the checker checks that the JWT was issued by its own
// account (see docs/audit.md).
const (
	HeaderCallerJWT = "Sandox-Caller-Jwt"
	HeaderCallerSig = "Sandox-Caller-Sig"
)

// SignedBatch is what a client signs for an action batch: the batch id, a
// newline and the hex SHA-256 of the payload, so that the signature names
// this batch and these actions only.
func SignedBatch(batchID string, payload []byte) []byte {
	sum := sha256.Sum256(payload)
	return []byte(batchID + "\n" + hex.EncodeToString(sum[:]))
}

// Caller is who sent a command, as the orchestrator recorded it.
type Caller struct {
	// Name is the NATS user's name (for example "client" or "alice").
	Name string `json:"name,omitempty"`
	// User is the NATS user's public key.
	User string `json:"user,omitempty"`
	// Role is the user's sandox role (its JWT tag role:...).
	Role string `json:"role,omitempty"`
	// Verified is true when the signature matched the user key and the
	// JWT was issued by the orchestrator's own account. A caller that is
	// not verified is what the command claimed, or nothing.
	Verified bool `json:"verified"`
	// Note says why the caller is not verified.
	Note string `json:"note,omitempty"`
}

// CommandRecord is the audit record of a lifecycle command as a worker took
// it off the work queue, published on CommandRecordSubject before the
// command runs. The command's result follows on ResultSubject.
type CommandRecord struct {
	Command Command `json:"command"`
	Caller  Caller  `json:"caller"`
	// Worker names the worker that took it; Delivery counts the
	// deliveries (more than 1 when a worker died with it in hand).
	Worker   string    `json:"worker"`
	Delivery uint64    `json:"delivery"`
	Time     time.Time `json:"time"`
}

// CommandRecordSubject is where a worker records a command it takes.
func CommandRecordSubject(commandID string) string { return "sandox.evt.cmd." + commandID }

// Refusal records a message or subscription the NATS server refused for
// lack of permission, published by the server's process on
// RefusalSubject.
type Refusal struct {
	// Op is "publish", "subscribe" or "reply".
	Op      string `json:"op"`
	Subject string `json:"subject"`
	// Client is the refused connection: its server-assigned id, its
	// name, and the NATS user and role it authenticated as.
	ClientID uint64    `json:"client_id"`
	Name     string    `json:"name,omitempty"`
	User     string    `json:"user,omitempty"`
	UserName string    `json:"user_name,omitempty"`
	Role     string    `json:"role,omitempty"`
	Server   string    `json:"server"`
	Time     time.Time `json:"time"`
}

// RefusalSubject is where the NATS server's process records a refusal; the
// last token is the server's name.
func RefusalSubject(server string) string { return "sandox.evt.refused." + server }
