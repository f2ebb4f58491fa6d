package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSameSettings checks when `sandox up` recreates a control-plane
// container for its settings: a SANDOX_* variable added, removed or
// changed; not the image's own variables or their order.
func TestSameSettings(t *testing.T) {
	running := []string{"PATH=/usr/bin", "SANDOX_NATS_URL=nats://sandox-nats:4222", "SANDOX_SEARCH_PROVIDER=brave", "SANDOX_SEARCH_BRAVE_KEY=k1"}
	tests := []struct {
		name string
		want []string
		same bool
	}{
		{"the same, in another order", []string{"SANDOX_SEARCH_BRAVE_KEY=k1", "SANDOX_NATS_URL=nats://sandox-nats:4222", "SANDOX_SEARCH_PROVIDER=brave"}, true},
		{"a key changed", []string{"SANDOX_NATS_URL=nats://sandox-nats:4222", "SANDOX_SEARCH_PROVIDER=brave", "SANDOX_SEARCH_BRAVE_KEY=k2"}, false},
		{"a setting added", append(running[1:], "SANDOX_SEARCH_QUOTA_PER_MINUTE=5"), false},
		{"a setting removed", running[1:3], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.same, sameSettings(running, tt.want))
		})
	}
}
