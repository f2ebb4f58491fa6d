package audit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFilterMatch(t *testing.T) {
	at := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)
	e := Entry{Time: at, Kind: KindEvent, What: "expired", GroupID: "g", SandboxID: "s"}
	tests := []struct {
		name string
		f    Filter
		want bool
	}{
		{name: "everything", f: Filter{}, want: true},
		{name: "its group", f: Filter{Group: "g"}, want: true},
		{name: "another group", f: Filter{Group: "h"}},
		{name: "its sandbox", f: Filter{Sandbox: "s"}, want: true},
		{name: "another sandbox", f: Filter{Sandbox: "t"}},
		{name: "since its time", f: Filter{Since: at}, want: true},
		{name: "since after", f: Filter{Since: at.Add(time.Second)}},
		{name: "until before", f: Filter{Until: at.Add(-time.Second)}},
		{name: "its kind", f: Filter{Kinds: []string{"batch", "event"}}, want: true},
		{name: "its event kind", f: Filter{Kinds: []string{"expired"}}, want: true},
		{name: "another kind", f: Filter{Kinds: []string{"command"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.f.Match(e))
		})
	}
}
