package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/executor/executortest"
	"github.com/sandox/sandox/sdk"
)

func TestPrintToolsEachFormat(t *testing.T) {
	sb := executortest.Start(t, "sb-cli", nil)
	tests := []struct {
		format sdk.ToolFormat
		key    string // a key every entry has in this format
	}{
		{format: sdk.FormatOpenAI, key: "function"},
		{format: sdk.FormatAnthropic, key: "input_schema"},
		{format: sdk.FormatMCP, key: "inputSchema"},
		{format: sdk.FormatJSONSchema, key: "parameters"},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, printTools(t.Context(), &out, sb.Conn, sb.ID, tt.format))
			var items []map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out.Bytes(), &items))
			require.NotEmpty(t, items)
			for _, it := range items {
				assert.Contains(t, it, tt.key)
			}
		})
	}
}

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantPos    []string
		wantFormat string
	}{
		{name: "flag after sandbox", args: []string{"sb-1", "--format", "openai"}, wantPos: []string{"sb-1"}, wantFormat: "openai"},
		{name: "flag before sandbox", args: []string{"--format=mcp", "sb-1"}, wantPos: []string{"sb-1"}, wantFormat: "mcp"},
		{name: "no flag", args: []string{"sb-1"}, wantPos: []string{"sb-1"}, wantFormat: "jsonschema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("tools", flag.ContinueOnError)
			f := fs.String("format", "jsonschema", "")
			pos, err := parseInterleaved(fs, tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.wantPos, pos)
			assert.Equal(t, tt.wantFormat, *f)
		})
	}
}
