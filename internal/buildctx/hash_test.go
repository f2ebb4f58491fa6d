package buildctx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHash(t *testing.T) {
	files := map[string][]byte{"Dockerfile": []byte("FROM x\n"), "tools/a.py": []byte("def f(): pass\n")}
	h := Hash(files, "sha256:base")
	assert.Len(t, h, 64)
	assert.Equal(t, h, Hash(map[string][]byte{"tools/a.py": []byte("def f(): pass\n"), "Dockerfile": []byte("FROM x\n")}, "sha256:base"), "map order does not matter")

	tests := []struct {
		name  string
		files map[string][]byte
		base  string
	}{
		{"another base", files, "sha256:other"},
		{"another content", map[string][]byte{"Dockerfile": []byte("FROM y\n"), "tools/a.py": []byte("def f(): pass\n")}, "sha256:base"},
		{"a renamed file", map[string][]byte{"Dockerfile": []byte("FROM x\n"), "tools/b.py": []byte("def f(): pass\n")}, "sha256:base"},
		{"content moved between files", map[string][]byte{"Dockerfile": []byte("FROM x\ndef f(): pass\n"), "tools/a.py": nil}, "sha256:base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.NotEqual(t, h, Hash(tt.files, tt.base))
		})
	}
}
