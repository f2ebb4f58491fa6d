package schemas

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestEgressValidate(t *testing.T) {
	tests := []struct {
		name   string
		egress Egress
		want   string // in the error; "" for none
	}{
		{"none", Egress{Policy: EgressNone}, ""},
		{"allowlist", Egress{Policy: EgressAllowlist, Allow: []string{"pypi.org", "files.pythonhosted.org"}}, ""},
		{"allowlist with an index", Egress{Policy: EgressAllowlist, Allow: []string{"pypi.example.internal"}, PackageIndex: "http://pypi.example.internal:8080/simple"}, ""},
		{"open with an index", Egress{Policy: EgressOpen, PackageIndex: "https://pypi.example.internal/simple"}, ""},
		{"none with a wheel directory", Egress{Policy: EgressNone, PackageIndex: "/workspace/wheels"}, ""},
		{"none with a file URL", Egress{Policy: EgressNone, PackageIndex: "file:///workspace/wheels"}, ""},
		{"none with an index in the sandbox", Egress{Policy: EgressNone, PackageIndex: "http://127.0.0.1:8000/simple"}, ""},
		{"none with an outside index", Egress{Policy: EgressNone, PackageIndex: "https://pypi.org/simple"}, "cannot be reached without a network (use the allowlist policy listing pypi.org)"},
		{"a relative directory", Egress{Policy: EgressNone, PackageIndex: "wheels"}, "want an http(s) URL or the absolute path"},
		{"another scheme", Egress{Policy: EgressOpen, PackageIndex: "ftp://mirror/simple"}, "want an http(s) URL or the absolute path"},
		{"a URL without a host", Egress{Policy: EgressOpen, PackageIndex: "https:///simple"}, "has no host"},
		{"an empty allowlist", Egress{Policy: EgressAllowlist}, "allow lists nothing"},
		{"allow under open", Egress{Policy: EgressOpen, Allow: []string{"pypi.org"}}, "allow is only for the allowlist policy"},
		{"an unknown policy", Egress{Policy: "wide"}, "want none, allowlist or open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.egress.Validate()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, CodeBadRequest)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
