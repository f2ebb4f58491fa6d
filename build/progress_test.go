package build

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrefixWriterPrefixesWholeLines(t *testing.T) {
	var out bytes.Buffer
	w := newPrefixWriter(&syncWriter{w: &out}, "[neo4j] ")
	for _, chunk := range []string{"Step 1/3 : FROM", " base\nStep 2", "/3 : RUN apt\n", "\n"} {
		n, err := w.Write([]byte(chunk))
		assert.NoError(t, err)
		assert.Equal(t, len(chunk), n)
	}
	assert.Equal(t, "[neo4j] Step 1/3 : FROM base\n[neo4j] Step 2/3 : RUN apt\n[neo4j] \n", out.String())

	// A builder made from a prefixed one carries one prefix, its own.
	out.Reset()
	inner := newPrefixWriter(w, "[qdrant] ")
	_, _ = inner.Write([]byte("pull\n"))
	assert.Equal(t, "[qdrant] pull\n", out.String())
}
