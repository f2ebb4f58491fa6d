package auth

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// Names of the two accounts.
const (
	AccountName       = "SANDOX"
	SystemAccountName = "SYS"
)

// Files of an authority directory, each holding one seed.
const (
	operatorFile = "operator.nk"
	accountFile  = "account.nk"
	systemFile   = "system.nk"
)

// ErrNoAuthority means a directory holds no authority.
var ErrNoAuthority = errors.New("no NATS authority")

// Authority holds the seeds that sign sandox's NATS identities. It is safe
// for concurrent use once made.
type Authority struct {
	operator nkeys.KeyPair
	account  nkeys.KeyPair
	system   nkeys.KeyPair
}

// NewAuthority makes an authority with fresh keys.
func NewAuthority() (*Authority, error) {
	op, err := nkeys.CreateOperator()
	if err != nil {
		return nil, fmt.Errorf("operator key: %w", err)
	}
	acc, err := nkeys.CreateAccount()
	if err != nil {
		return nil, fmt.Errorf("account key: %w", err)
	}
	sys, err := nkeys.CreateAccount()
	if err != nil {
		return nil, fmt.Errorf("system account key: %w", err)
	}
	return &Authority{operator: op, account: acc, system: sys}, nil
}

// LoadAuthority reads the authority saved in dir. A directory without one
// wraps ErrNoAuthority.
func LoadAuthority(dir string) (*Authority, error) {
	a := &Authority{}
	for _, f := range []struct {
		name string
		kp   *nkeys.KeyPair
	}{{operatorFile, &a.operator}, {accountFile, &a.account}, {systemFile, &a.system}} {
		seed, err := os.ReadFile(filepath.Join(dir, f.name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", dir, ErrNoAuthority)
		}
		if err != nil {
			return nil, err
		}
		kp, err := nkeys.FromSeed(seed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, f.name), err)
		}
		*f.kp = kp
	}
	return a, nil
}

// LoadOrCreateAuthority reads the authority in dir, or makes one and saves
// it there when dir holds none.
func LoadOrCreateAuthority(dir string) (*Authority, error) {
	a, err := LoadAuthority(dir)
	if !errors.Is(err, ErrNoAuthority) {
		return a, err
	}
	if a, err = NewAuthority(); err != nil {
		return nil, err
	}
	return a, a.Save(dir)
}

// Files returns the authority's seed files by name, for Save or for handing
// them to the NATS server's container.
func (a *Authority) Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, kp := range map[string]nkeys.KeyPair{operatorFile: a.operator, accountFile: a.account, systemFile: a.system} {
		seed, err := kp.Seed()
		if err != nil {
			return nil, err
		}
		out[name] = seed
	}
	return out, nil
}

// Save writes the seeds into dir (made with mode 0700), each file with mode
// 0600.
func (a *Authority) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	files, err := a.Files()
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := writeSecret(filepath.Join(dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

// writeSecret writes data to path with mode 0600, replacing any file there
// only once the new one is complete.
func writeSecret(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// AccountKey is the SANDOX account's public key (its JetStream store and the
// issuer of every user).
func (a *Authority) AccountKey() string {
	pub, _ := a.account.PublicKey()
	return pub
}

// SystemKey is the system account's public key.
func (a *Authority) SystemKey() string {
	pub, _ := a.system.PublicKey()
	return pub
}

// OperatorClaims returns the operator's claims, which the server trusts.
func (a *Authority) OperatorClaims() (*jwt.OperatorClaims, error) {
	pub, err := a.operator.PublicKey()
	if err != nil {
		return nil, err
	}
	oc := jwt.NewOperatorClaims(pub)
	oc.Name = "sandox"
	oc.SystemAccount = a.SystemKey()
	tok, err := oc.Encode(a.operator)
	if err != nil {
		return nil, fmt.Errorf("operator claims: %w", err)
	}
	// Decode so that the claims carry what the server checks (issuer, id).
	return jwt.DecodeOperatorClaims(tok)
}

// AccountClaims returns the SANDOX account's claims with JetStream on and
// the given revocations (user key to Unix time).
func (a *Authority) AccountClaims(revoked map[string]int64) *jwt.AccountClaims {
	ac := jwt.NewAccountClaims(a.AccountKey())
	ac.Name = AccountName
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	for user, at := range revoked {
		ac.RevokeAt(user, unixTime(at))
	}
	return ac
}

// AccountJWT signs claims made by AccountClaims.
func (a *Authority) AccountJWT(ac *jwt.AccountClaims) (string, error) {
	tok, err := ac.Encode(a.operator)
	if err != nil {
		return "", fmt.Errorf("account claims: %w", err)
	}
	return tok, nil
}

// SystemAccountJWT returns the signed system account.
func (a *Authority) SystemAccountJWT() (string, error) {
	ac := jwt.NewAccountClaims(a.SystemKey())
	ac.Name = SystemAccountName
	tok, err := ac.Encode(a.operator)
	if err != nil {
		return "", fmt.Errorf("system account claims: %w", err)
	}
	return tok, nil
}
