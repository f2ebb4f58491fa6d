package integration

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// makeWheel builds a minimal pure-Python wheel (a real one: uv installs it)
// of package name at version, whose module defines hello().
func makeWheel(t *testing.T, name, version string) (filename string, data []byte) {
	t.Helper()
	dist := fmt.Sprintf("%s-%s.dist-info", name, version)
	files := []struct{ path, body string }{
		{name + "/__init__.py", "def hello():\n    return 'hello from " + name + "'\n"},
		{dist + "/METADATA", fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\n", name, version)},
		{dist + "/WHEEL", "Wheel-Version: 1.0\nGenerator: sandox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record bytes.Buffer
	for _, f := range files {
		w, err := zw.Create(f.path)
		require.NoError(t, err)
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.path, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	fmt.Fprintf(&record, "%s/RECORD,,\n", dist)
	w, err := zw.Create(dist + "/RECORD")
	require.NoError(t, err)
	w.Write(record.Bytes())
	require.NoError(t, zw.Close())
	return fmt.Sprintf("%s-%s-py3-none-any.whl", name, version), buf.Bytes()
}
