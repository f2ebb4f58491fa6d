package sdk

import (
	"encoding/base64"
	"fmt"
	"os"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sandox/sandox/schemas"
)

// caller signs the commands a client sends with its NATS user key, so that
// the orchestrator can record who sent each one (docs/audit.md).
type caller struct {
	jwt string
	kp  nkeys.KeyPair
}

// loadCaller reads the user JWT and seed of a .creds file; "" gives a
// caller that signs nothing.
func loadCaller(path string) (*caller, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	tok, err := jwt.ParseDecoratedJWT(data)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	kp, err := jwt.ParseDecoratedNKey(data)
	if err != nil {
		return nil, fmt.Errorf("credentials %s: %w", path, err)
	}
	return &caller{jwt: tok, kp: kp}, nil
}

// sign sets schemas.HeaderCallerJWT and schemas.HeaderCallerSig on msg:
// the user's JWT and its key's signature of signed (a command's id, or
// schemas.SignedBatch of an action batch). A nil caller sets nothing.
func (c *caller) sign(msg *nats.Msg, signed []byte) error {
	if c == nil {
		return nil
	}
	sig, err := c.kp.Sign(signed)
	if err != nil {
		return fmt.Errorf("sign for the audit log: %w", err)
	}
	msg.Header.Set(schemas.HeaderCallerJWT, c.jwt)
	msg.Header.Set(schemas.HeaderCallerSig, base64.RawURLEncoding.EncodeToString(sig))
	return nil
}
