package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sandox/sandox/schemas"
)

// CallerOf reads who sent a message from its headers (schemas.HeaderCallerJWT
// and schemas.HeaderCallerSig). The caller is verified when the signature of
// signed (a command's id, or schemas.SignedBatch of an action batch) matches the JWT's user key and the JWT was issued by
// account, the checker's own NATS account ("" checks no issuer and never
// verifies). It never fails: what cannot be checked is recorded with a note.
func CallerOf(hdr nats.Header, signed []byte, account string) schemas.Caller {
	tok := hdr.Get(schemas.HeaderCallerJWT)
	if tok == "" {
		return schemas.Caller{Note: "it carries no caller (a client without a .creds file, or not a sandox SDK)"}
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return schemas.Caller{Note: "caller JWT does not decode: " + err.Error()}
	}
	c := schemas.Caller{Name: uc.Name, User: uc.Subject}
	for _, tag := range uc.Tags {
		if r, ok := strings.CutPrefix(tag, "role:"); ok {
			c.Role = r
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(hdr.Get(schemas.HeaderCallerSig))
	if err != nil || len(sig) == 0 {
		c.Note = "no valid signature"
		return c
	}
	pub, err := nkeys.FromPublicKey(uc.Subject)
	if err != nil || pub.Verify(signed, sig) != nil {
		c.Note = "signature does not match the user key"
		return c
	}
	issuer := uc.Issuer
	if uc.IssuerAccount != "" {
		issuer = uc.IssuerAccount
	}
	switch {
	case account == "":
		c.Note = "the account is not known (a server without operator mode)"
	case issuer != account:
		c.Note = "JWT issued by another account"
	default:
		c.Verified = true
	}
	return c
}

// AccountOf asks the NATS server which account the connection
// belongs to ($SYS.REQ.USER.INFO). Under operator mode that is the
// account key that signs every sandox identity. An open server, or one that
// does not answer, gives "".
func AccountOf(ctx context.Context, nc *nats.Conn) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, userInfoSubject, nil)
	if err != nil {
		return ""
	}
	var r struct {
		Data struct {
			Account string `json:"account"`
		} `json:"data"`
	}
	if json.Unmarshal(m.Data, &r) != nil || !nkeys.IsValidPublicAccountKey(r.Data.Account) {
		return ""
	}
	return r.Data.Account
}
