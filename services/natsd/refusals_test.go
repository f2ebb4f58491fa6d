package natsd

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

func TestParseRefusal(t *testing.T) {
	const user = "UBQ3B5T4F5ZKYZ5GQ6XQ4ZLCTPIX4D3VVQK7EXAMPLE2VN7A3EJ4XWQE"
	tests := []struct {
		name string
		line string
		want schemas.Refusal
		ok   bool
	}{
		{
			name: "publish under operator mode",
			line: `127.0.0.1:50000 - cid:7 - "v1.55.0:go:sandox-sdk" - "AABC/` + user + `" - Publish Violation - Subject "sandbox.x.notice"`,
			want: schemas.Refusal{Op: "publish", Subject: "sandbox.x.notice", ClientID: 7, User: user},
			ok:   true,
		},
		{
			name: "subscription",
			line: `pipe - cid:12 - Subscription Violation - Subject "sandbox.other.>", SID 3`,
			want: schemas.Refusal{Op: "subscribe", Subject: "sandbox.other.>", ClientID: 12},
			ok:   true,
		},
		{
			name: "reply",
			line: `127.0.0.1:1 - cid:3 - Publish Violation - Reply "_INBOX.abc"`,
			want: schemas.Refusal{Op: "reply", Subject: "_INBOX.abc", ClientID: 3},
			ok:   true,
		},
		{name: "another error", line: `127.0.0.1:1 - cid:3 - Slow Consumer Detected`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseRefusal(tt.line)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
