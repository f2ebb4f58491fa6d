package auth

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sandox/sandox/schemas"
)

// Creds are one user's credentials: its JWT and its seed.
type Creds struct {
	// User is the user's public key, the key a revocation names.
	User string
	JWT  string
	Seed []byte
}

// File returns the credentials in the NATS .creds file format, which
// nats.UserCredentials, the NATS CLI's --creds and contexts read.
func (c Creds) File() ([]byte, error) {
	return jwt.FormatUserConfig(c.JWT, c.Seed)
}

// Option returns the connect option that authenticates with c.
func (c Creds) Option() nats.Option {
	return nats.UserJWTAndSeed(c.JWT, string(c.Seed))
}

// Mint issues credentials for a new user named name with role's
// permissions (sandboxID and its database grants only for RoleSandbox).
// The user is signed by the SANDOX account; its JWT does not expire.
func (a *Authority) Mint(name string, role Role, sandboxID string, grants ...schemas.DatabaseGrant) (Creds, error) {
	return a.mint(name, role, sandboxID, false, grants...)
}

// MintSandbox issues an identity for the sandbox id, allowed the database
// subjects of its grants. With socketOnly the server accepts it only on
// in-process connections, which is what its Unix socket makes
// (natsd.Config.Socket): stolen and used over TCP, it is refused at
// connect.
func (a *Authority) MintSandbox(id string, socketOnly bool, grants ...schemas.DatabaseGrant) (Creds, error) {
	return a.mint("sandbox "+id, RoleSandbox, id, socketOnly, grants...)
}

func (a *Authority) mint(name string, role Role, sandboxID string, socketOnly bool, grants ...schemas.DatabaseGrant) (Creds, error) {
	perms, err := Permissions(role, sandboxID, grants...)
	if err != nil {
		return Creds{}, err
	}
	return a.signUser(name, func(uc *jwt.UserClaims) {
		uc.Permissions = perms
		uc.Tags.Add("role:" + string(role))
		if socketOnly {
			uc.AllowedConnectionTypes.Add(jwt.ConnectionTypeInProcess)
		}
	})
}

// signUser makes a new user key named name, lets fill set its claims
// (permissions, tags), and signs them with the SANDOX account.
func (a *Authority) signUser(name string, fill func(*jwt.UserClaims)) (Creds, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Creds{}, fmt.Errorf("user key: %w", err)
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return Creds{}, err
	}
	seed, err := kp.Seed()
	if err != nil {
		return Creds{}, err
	}
	uc := jwt.NewUserClaims(pub)
	uc.Name = name
	fill(uc)
	tok, err := uc.Encode(a.account)
	if err != nil {
		return Creds{}, fmt.Errorf("user claims: %w", err)
	}
	return Creds{User: pub, JWT: tok, Seed: seed}, nil
}

// ParseCreds reads a .creds file.
func ParseCreds(data []byte) (Creds, error) {
	tok, err := jwt.ParseDecoratedJWT(data)
	if err != nil {
		return Creds{}, fmt.Errorf("creds: %w", err)
	}
	kp, err := jwt.ParseDecoratedNKey(data)
	if err != nil {
		return Creds{}, fmt.Errorf("creds: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return Creds{}, err
	}
	uc, err := jwt.DecodeUserClaims(tok)
	if err != nil {
		return Creds{}, fmt.Errorf("creds: %w", err)
	}
	return Creds{User: uc.Subject, JWT: tok, Seed: seed}, nil
}

func unixTime(s int64) time.Time { return time.Unix(s, 0) }

// Issued reports whether c was signed by this authority's account.
func (a *Authority) Issued(c Creds) bool {
	uc, err := jwt.DecodeUserClaims(c.JWT)
	return err == nil && uc.Issuer == a.AccountKey()
}

// Current reports whether c carries the permissions role has now (a user,
// not a sandbox, role): credentials minted by an older sandox lack what the
// role was given since, and should be minted again.
func Current(c Creds, role Role) bool {
	uc, err := jwt.DecodeUserClaims(c.JWT)
	if err != nil {
		return false
	}
	want, err := Permissions(role, "")
	if err != nil {
		return false
	}
	got, err1 := json.Marshal(uc.Permissions)
	exp, err2 := json.Marshal(want)
	return err1 == nil && err2 == nil && string(got) == string(exp)
}
