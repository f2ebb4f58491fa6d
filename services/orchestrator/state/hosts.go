package state

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
)

// SubjectToken makes s one NATS subject token: every character that is not
// a letter, digit, '-' or '_' becomes '_'.
func SubjectToken(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// Host reads a host's record; an absent one is jetstream.ErrKeyNotFound.
func (s *Store) Host(ctx context.Context, name string) (schemas.HostStatus, error) {
	var h schemas.HostStatus
	_, err := get(ctx, s.hosts, name, &h)
	return h, err
}

// HostSilence reads a host's record and says how long the host has been
// silent, judged on this worker's clock (hostClock).
func (s *Store) HostSilence(ctx context.Context, name string) (schemas.HostStatus, time.Duration, error) {
	var h schemas.HostStatus
	rev, err := get(ctx, s.hosts, name, &h)
	if err != nil {
		return h, 0, err
	}
	return h, s.heard.silence(name, rev, time.Now()), nil
}

// LiveHosts lists the hosts that are up and were heard from within
// lostAfter, by name.
func (s *Store) LiveHosts(ctx context.Context, lostAfter time.Duration) (map[string]schemas.HostStatus, error) {
	names, err := keys(ctx, s.hosts)
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	live := make(map[string]schemas.HostStatus, len(names))
	for _, n := range names {
		h, silent, err := s.HostSilence(ctx, n)
		if err != nil {
			continue
		}
		if h.State == schemas.HostUp && silent <= lostAfter {
			live[n] = h
		}
	}
	return live, nil
}
