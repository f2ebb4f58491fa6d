package schemas

import (
	"errors"
	"testing"
)

func TestWebhookAllowed(t *testing.T) {
	allow := []string{"https://hooks.example.com/ci/", "http://127.0.0.1:8080"}
	for _, tc := range []struct {
		name, url string
		allow     []string
		want      error
	}{
		{name: "under a prefix", url: "https://hooks.example.com/ci/done", allow: allow},
		{name: "the prefix itself", url: "https://hooks.example.com/ci/", allow: allow},
		{name: "any path of a host", url: "http://127.0.0.1:8080/x?y=1", allow: allow},
		{name: "another path", url: "https://hooks.example.com/cix", allow: allow, want: CodeAccessDenied},
		{name: "a host that only starts alike", url: "https://hooks.example.com.evil/ci/x", allow: allow, want: CodeAccessDenied},
		{name: "another port", url: "http://127.0.0.1:8081/", allow: allow, want: CodeAccessDenied},
		{name: "another scheme", url: "http://hooks.example.com/ci/x", allow: allow, want: CodeAccessDenied},
		{name: "nothing allowed", url: "https://hooks.example.com/ci/x", want: CodeAccessDenied},
		{name: "not http", url: "file:///etc/passwd", allow: allow, want: CodeBadRequest},
		{name: "user info", url: "https://u:p@hooks.example.com/ci/x", allow: allow, want: CodeBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := WebhookAllowed(tc.url, tc.allow)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}
