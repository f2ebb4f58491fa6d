package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// ErrNoToken: an HTTP server was asked for with no bearer token to check.
var ErrNoToken = errors.New("no bearer token")

// RequireToken returns middleware that lets through only requests that
// carry "Authorization: Bearer <token>"; any other request is answered 401
// before it reaches the MCP server. The check is the MCP SDK's
// auth.RequireBearerToken with a constant-time comparison.
func RequireToken(token string) (func(http.Handler) http.Handler, error) {
	if token == "" {
		return nil, ErrNoToken
	}
	want := sha256.Sum256([]byte(token))
	verify := func(_ context.Context, got string, _ *http.Request) (*auth.TokenInfo, error) {
		sum := sha256.Sum256([]byte(got))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			return nil, fmt.Errorf("%w: not this server's token", auth.ErrInvalidToken)
		}
		// One user: the holder of the token. The SDK binds each session
		// to it.
		return &auth.TokenInfo{UserID: "sandox-mcp"}, nil
	}
	return auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true}), nil
}

// LoadOrCreateToken returns the token in file, or, when file does not
// exist, makes a random one (32 bytes, hex) and writes it there with mode
// 0600 so that clients on this machine can read it and nobody else can. It
// refuses a file others may read or an empty one.
func LoadOrCreateToken(file string) (token string, created bool, err error) {
	data, err := os.ReadFile(file)
	switch {
	case err == nil:
		info, err := os.Stat(file)
		if err != nil {
			return "", false, err
		}
		if info.Mode().Perm()&0o077 != 0 {
			return "", false, fmt.Errorf("token file %s has mode %v: others may read it; chmod 600 it", file, info.Mode().Perm())
		}
		token = strings.TrimSpace(string(data))
		if token == "" {
			return "", false, fmt.Errorf("token file %s: %w (it is empty)", file, ErrNoToken)
		}
		return token, false, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", false, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	token = hex.EncodeToString(b)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", false, err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	return token, true, f.Close()
}
