package terminal

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIndexEnv(t *testing.T) {
	tests := []struct {
		name, index string
		want        []string
	}{
		{"none", "", nil},
		{"an https index", "https://pypi.example.internal/simple", []string{
			"UV_DEFAULT_INDEX=https://pypi.example.internal/simple", "PIP_INDEX_URL=https://pypi.example.internal/simple"}},
		{"a plain http index is trusted by pip", "http://10.1.2.3:8080/simple", []string{
			"UV_DEFAULT_INDEX=http://10.1.2.3:8080/simple", "PIP_INDEX_URL=http://10.1.2.3:8080/simple", "PIP_TRUSTED_HOST=10.1.2.3:8080"}},
		{"a wheel directory", "/workspace/wheels", []string{
			"UV_FIND_LINKS=/workspace/wheels", "UV_OFFLINE=1", "PIP_FIND_LINKS=/workspace/wheels", "PIP_NO_INDEX=1"}},
		{"a file URL", "file:///opt/wheels", []string{
			"UV_FIND_LINKS=/opt/wheels", "UV_OFFLINE=1", "PIP_FIND_LINKS=/opt/wheels", "PIP_NO_INDEX=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, indexEnv(tt.index))
		})
	}
}
